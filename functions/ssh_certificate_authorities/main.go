// Command ssh_certificate_authorities is the Lambda function serving the /ssh_certificate_authorities routes.
package main

import (
	"tunnelapi/shared/families/sshcerts"
	"tunnelapi/shared/platform/runtime"
)

func main() { runtime.Main(sshcerts.SSHCertificateAuthoritiesDescriptor) }
