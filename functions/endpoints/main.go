// Command endpoints is the Lambda function serving the /endpoints routes.
package main

import (
	"tunnelapi/shared/families/endpoints"
	"tunnelapi/shared/platform/runtime"
)

func main() { runtime.Main(endpoints.EndpointsDescriptor) }
