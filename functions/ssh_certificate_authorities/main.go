// Command ssh_certificate_authorities is the Lambda function serving the /ssh_certificate_authorities routes.
package main

import (
	"tunnelapi/shared/lambdahttp"
	"tunnelapi/shared/sshcerts"
)

func main() { lambdahttp.Main(sshcerts.RegisterAuthorities) }
