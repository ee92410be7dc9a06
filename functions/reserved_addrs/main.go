// Command reserved_addrs is the Lambda function serving the /reserved_addrs routes.
package main

import (
	"tunnelapi/shared/families/domains"
	"tunnelapi/shared/platform/serve"
)

func main() { serve.Main(domains.ReservedAddrsDescriptor) }
