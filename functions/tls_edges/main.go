// Command tls_edges is the Lambda function serving the /edges/tls routes and their modules.
package main

import (
	"tunnelapi/shared/families/edges"
	"tunnelapi/shared/platform/serve"
)

func main() { serve.Main(edges.TLSEdgesDescriptor) }
