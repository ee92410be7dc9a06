// Command bot_users is the Lambda function serving the /bot_users routes.
package main

import (
	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/platform/serve"
)

func main() { serve.Main(principals.BotUsersDescriptor) }
