// Command cert_worker is the Lambda function triggered by the certificate jobs queue: it obtains
// managed certificates over ACME (DNS-01) and stores them as TLS certificates of their account.
package main

import "tunnelapi/shared/workers/certs"

func main() { certs.Main() }
