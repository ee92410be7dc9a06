// Package usage is what each tenant used, per UTC day: requests by family and status class,
// mutations, events delivered, certificates issued, resources stored, and the DynamoDB capacity
// those consumed. Nothing is written for it on a request's path: every HTTP function writes one
// usage line per request whose caller was verified (api.Server), the event worker one per event
// delivered and the certificate worker one per job run (metrics.Usage), each carrying the
// capacity its DynamoDB calls consumed (reported in the same round trips, or for a transaction
// counted by package store by DynamoDB's rule when it knows every item's size). In AWS a
// subscription filter on every function's log group (template.yaml, generated from package
// app's lists) sends the lines to the usage worker (Main), which sums them per account and day
// (lines of the stack's own log groups only: Sources) and adds each sum to that day's item with
// one transaction per batch of lines, so a batch delivered again is counted once. A transaction checks the tenant's
// entry in the operator's list, which no tenant request touches, and is tried again when it
// loses to a concurrent one; a batch the worker still cannot write fails its invocation, which
// Lambda retries and then sends to the function's on-failure destination (template.yaml: a
// queue with an alarm), so no batch is dropped unseen. Locally the same sums
// are fed the lines in process (Aggregator as the emitters' tee) and flushed on an interval and
// on demand.
//
// Resources stored are counted from what committed transactions created and deleted (a day's
// item keeps the day's difference) and summed over the tenant's days when read (Days), so the
// figure costs nothing to keep. Days reads a tenant's usage; WriteCSV exports it for billing.
package usage
