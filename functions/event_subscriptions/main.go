// Command event_subscriptions is the Lambda function serving the /event_subscriptions routes and
// their sources.
package main

import (
	"tunnelapi/shared/eventsub"
	"tunnelapi/shared/lambdahttp"
)

func main() { lambdahttp.Main(eventsub.RegisterEventSubscriptions) }
