// Command endpoints is the Lambda function serving the /endpoints routes.
package main

import (
	"tunnelapi/shared/families/endpoints"
	"tunnelapi/shared/platform/serve"
)

func main() { serve.Main(endpoints.EndpointsDescriptor) }
