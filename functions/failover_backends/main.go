// Command failover_backends is the Lambda function serving the /backends/failover routes.
package main

import (
	"tunnelapi/shared/families/backends"
	"tunnelapi/shared/platform/serve"
)

func main() { serve.Main(backends.FailoverBackendsDescriptor) }
