// Command event_destinations is the Lambda function serving the /event_destinations routes.
package main

import (
	"tunnelapi/shared/families/eventsub"
	"tunnelapi/shared/platform/runtime"
)

func main() { runtime.Main(eventsub.EventDestinationsDescriptor) }
