// Command certificate_authorities is the Lambda function serving the /certificate_authorities routes.
package main

import (
	"tunnelapi/shared/families/tlscerts"
	"tunnelapi/shared/platform/runtime"
)

func main() { runtime.Main(tlscerts.CertificateAuthoritiesDescriptor) }
