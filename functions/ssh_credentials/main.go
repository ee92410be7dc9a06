// Command ssh_credentials is the Lambda function serving the /ssh_credentials routes.
package main

import (
	"tunnelapi/shared/families/sshcredentials"
	"tunnelapi/shared/platform/serve"
)

func main() { serve.Main(sshcredentials.SSHCredentialsDescriptor) }
