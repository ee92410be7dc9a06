// Command ssh_user_certificates is the Lambda function serving the /ssh_user_certificates routes.
package main

import (
	"tunnelapi/shared/lambdahttp"
	"tunnelapi/shared/sshcerts"
)

func main() { lambdahttp.Main(sshcerts.RegisterUserCertificates) }
