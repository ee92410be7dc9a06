// Command ip_policy_rules is the Lambda function serving the /ip_policy_rules routes.
package main

import (
	"tunnelapi/shared/families/access"
	"tunnelapi/shared/platform/serve"
)

func main() { serve.Main(access.IPPolicyRulesDescriptor) }
