// Command scheduler is the Lambda function run on a schedule: it requests the certificate jobs
// that have come due (renewals and retries).
package main

import "tunnelapi/shared/workers/scheduler"

func main() { scheduler.Main() }
