// Command tls_certificates is the Lambda function serving the /tls_certificates routes.
package main

import (
	"tunnelapi/shared/families/tlscerts"
	"tunnelapi/shared/platform/runtime"
)

func main() { runtime.Main(tlscerts.TLSCertificatesDescriptor) }
