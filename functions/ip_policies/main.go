// Command ip_policies is the Lambda function serving the /ip_policies routes.
package main

import (
	"tunnelapi/shared/families/access"
	"tunnelapi/shared/platform/serve"
)

func main() { serve.Main(access.IPPoliciesDescriptor) }
