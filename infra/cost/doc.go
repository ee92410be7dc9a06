// Package cost says what a request of each kind costs in AWS: the DynamoDB capacity it
// consumed (measured by BenchmarkCostPerRequest with ReturnConsumedCapacity on the real calls
// against DynamoDB Local, a transaction counted item by item as DynamoDB bills it), its Lambda invocations and duration at the template's memory size
// (measured in process), its SQS, Pipe and KMS requests, and from those and the dated price
// table in prices.go, the price of a million. A delivered event and an issued certificate are
// kinds too: their workers are driven as their SQS triggers drive them, in the template's batch
// sizes, so a batch's invocation is shared by its messages.
// `make bench` prints the table; the README shows it.
//
// The package ships in no function: only the benchmark uses it.
package cost
