// Command api_keys is the Lambda function serving the /api_keys routes.
package main

import (
	"tunnelapi/shared/lambdahttp"
	"tunnelapi/shared/principals"
)

func main() { lambdahttp.Main(principals.RegisterAPIKeys) }
