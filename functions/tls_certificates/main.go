// Command tls_certificates is the Lambda function serving the /tls_certificates routes.
package main

import (
	"tunnelapi/shared/families/tlscerts"
	"tunnelapi/shared/platform/serve"
	// The family seals secrets (its descriptor sets Seals): KMS in AWS.
	_ "tunnelapi/shared/platform/seal/kmsseal"
)

func main() { serve.Main(tlscerts.TLSCertificatesDescriptor) }
