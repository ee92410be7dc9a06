// Command bot_users is the Lambda function serving the /bot_users routes.
package main

import (
	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/platform/runtime"
)

func main() { runtime.Main(principals.BotUsersDescriptor) }
