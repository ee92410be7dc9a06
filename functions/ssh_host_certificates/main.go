// Command ssh_host_certificates is the Lambda function serving the /ssh_host_certificates routes.
package main

import (
	"tunnelapi/shared/families/sshcerts"
	"tunnelapi/shared/platform/runtime"
)

func main() { runtime.Main(sshcerts.SSHHostCertificatesDescriptor) }
