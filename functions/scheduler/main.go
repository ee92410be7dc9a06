// Command scheduler is the Lambda function an EventBridge schedule runs every minute: it
// republishes committed events left in the outbox.
package main

import "tunnelapi/shared/workers/scheduler"

func main() { scheduler.Main() }
