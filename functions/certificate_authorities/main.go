// Command certificate_authorities is the Lambda function serving the /certificate_authorities routes.
package main

import (
	"tunnelapi/shared/lambdahttp"
	"tunnelapi/shared/tlscerts"
)

func main() { lambdahttp.Main(tlscerts.RegisterCertificateAuthorities) }
