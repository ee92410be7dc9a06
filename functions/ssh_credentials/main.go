// Command ssh_credentials is the Lambda function serving the /ssh_credentials routes.
package main

import (
	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/platform/runtime"
)

func main() { runtime.Main(principals.SSHCredentialsDescriptor) }
