// Command credentials is the Lambda function serving the /credentials routes.
package main

import (
	"tunnelapi/shared/lambdahttp"
	"tunnelapi/shared/principals"
)

func main() { lambdahttp.Main(principals.RegisterCredentials) }
