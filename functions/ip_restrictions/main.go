// Command ip_restrictions is the Lambda function serving the /ip_restrictions routes.
package main

import (
	"tunnelapi/shared/families/access"
	"tunnelapi/shared/platform/serve"
)

func main() { serve.Main(access.IPRestrictionsDescriptor) }
