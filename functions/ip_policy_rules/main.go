// Command ip_policy_rules is the Lambda function serving the /ip_policy_rules routes.
package main

import (
	"tunnelapi/shared/access"
	"tunnelapi/shared/lambdahttp"
)

func main() { lambdahttp.Main(access.RegisterIPPolicyRules) }
