// Command tunnel_group_backends is the Lambda function serving the /backends/tunnel_group routes.
package main

import (
	"tunnelapi/shared/families/backends"
	"tunnelapi/shared/platform/runtime"
)

func main() { runtime.Main(backends.TunnelGroupBackendsDescriptor) }
