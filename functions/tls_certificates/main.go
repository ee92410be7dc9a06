// Command tls_certificates is the Lambda function serving the /tls_certificates routes.
package main

import (
	"tunnelapi/shared/lambdahttp"
	"tunnelapi/shared/tlscerts"
)

func main() { lambdahttp.Main(tlscerts.RegisterTLSCertificates) }
