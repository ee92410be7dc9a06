// Command tunnel_group_backends is the Lambda function serving the /backends/tunnel_group routes.
package main

import (
	"tunnelapi/shared/families/backends"
	"tunnelapi/shared/platform/serve"
)

func main() { serve.Main(backends.TunnelGroupBackendsDescriptor) }
