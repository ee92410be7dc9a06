// Command event_destinations is the Lambda function serving the /event_destinations routes.
package main

import (
	"tunnelapi/shared/families/eventsub"
	"tunnelapi/shared/platform/serve"
	// The family seals secrets (its descriptor sets Seals): KMS in AWS.
	_ "tunnelapi/shared/platform/seal/kmsseal"
)

func main() { serve.Main(eventsub.EventDestinationsDescriptor) }
