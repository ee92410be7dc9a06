// Command bot_users is the Lambda function serving the /bot_users routes.
package main

import (
	"tunnelapi/shared/lambdahttp"
	"tunnelapi/shared/principals"
)

func main() { lambdahttp.Main(principals.RegisterBotUsers) }
