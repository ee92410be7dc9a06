// Command event_worker is the Lambda function triggered by the events queue: it fans committed
// events out to their subscriptions' destinations and delivers them.
package main

import "tunnelapi/shared/workers/delivery"

func main() { delivery.Main() }
