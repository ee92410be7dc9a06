// Command ssh_user_certificates is the Lambda function serving the /ssh_user_certificates routes.
package main

import (
	"tunnelapi/shared/families/sshcerts"
	"tunnelapi/shared/platform/runtime"
)

func main() { runtime.Main(sshcerts.SSHUserCertificatesDescriptor) }
