// Command event_destinations is the Lambda function serving the /event_destinations routes.
package main

import (
	"tunnelapi/shared/eventsub"
	"tunnelapi/shared/lambdahttp"
)

func main() { lambdahttp.Main(eventsub.RegisterEventDestinations) }
