// Command ip_policies is the Lambda function serving the /ip_policies routes.
package main

import (
	"tunnelapi/shared/access"
	"tunnelapi/shared/lambdahttp"
)

func main() { lambdahttp.Main(access.RegisterIPPolicies) }
