// Command certificate_authorities is the Lambda function serving the /certificate_authorities routes.
package main

import (
	"tunnelapi/shared/families/tlscerts"
	"tunnelapi/shared/platform/serve"
)

func main() { serve.Main(tlscerts.CertificateAuthoritiesDescriptor) }
