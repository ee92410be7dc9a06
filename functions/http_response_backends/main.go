// Command http_response_backends is the Lambda function serving the /backends/http_response routes.
package main

import (
	"tunnelapi/shared/families/backends"
	"tunnelapi/shared/platform/serve"
)

func main() { serve.Main(backends.HTTPResponseBackendsDescriptor) }
