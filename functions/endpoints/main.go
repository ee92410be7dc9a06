// Command endpoints is the Lambda function serving the /endpoints routes.
package main

import (
	"tunnelapi/shared/endpoints"
	"tunnelapi/shared/lambdahttp"
)

func main() { lambdahttp.Main(endpoints.RegisterEndpoints) }
