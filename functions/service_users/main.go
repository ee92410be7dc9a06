// Command service_users is the Lambda function serving the /service_users routes.
package main

import (
	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/platform/serve"
)

func main() { serve.Main(principals.ServiceUsersDescriptor) }
