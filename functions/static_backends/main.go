// Command static_backends is the Lambda function serving the /backends/static routes.
package main

import (
	"tunnelapi/shared/families/backends"
	"tunnelapi/shared/platform/serve"
)

func main() { serve.Main(backends.StaticBackendsDescriptor) }
