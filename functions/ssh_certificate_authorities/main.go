// Command ssh_certificate_authorities is the Lambda function serving the /ssh_certificate_authorities routes.
package main

import (
	"tunnelapi/shared/families/sshcerts"
	"tunnelapi/shared/platform/serve"
	// The family seals secrets (its descriptor sets Seals): KMS in AWS.
	_ "tunnelapi/shared/platform/seal/kmsseal"
)

func main() { serve.Main(sshcerts.SSHCertificateAuthoritiesDescriptor) }
