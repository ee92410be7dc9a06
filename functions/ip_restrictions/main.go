// Command ip_restrictions is the Lambda function serving the /ip_restrictions routes.
package main

import (
	"tunnelapi/shared/access"
	"tunnelapi/shared/lambdahttp"
)

func main() { lambdahttp.Main(access.RegisterIPRestrictions) }
