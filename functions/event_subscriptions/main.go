// Command event_subscriptions is the Lambda function serving the /event_subscriptions routes and
// their sources.
package main

import (
	"tunnelapi/shared/families/eventsub"
	"tunnelapi/shared/platform/serve"
)

func main() { serve.Main(eventsub.EventSubscriptionsDescriptor) }
