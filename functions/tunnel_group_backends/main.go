// Command tunnel_group_backends is the Lambda function serving the /backends/tunnel_group routes.
package main

import (
	"tunnelapi/shared/backends"
	"tunnelapi/shared/lambdahttp"
)

func main() { lambdahttp.Main(backends.RegisterTunnelGroupBackends) }
