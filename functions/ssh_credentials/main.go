// Command ssh_credentials is the Lambda function serving the /ssh_credentials routes.
package main

import (
	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/platform/serve"
)

func main() { serve.Main(principals.SSHCredentialsDescriptor) }
