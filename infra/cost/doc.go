// Package cost says what a request of each kind costs in AWS: the DynamoDB capacity it
// consumed (measured by BenchmarkCostPerRequest with ReturnConsumedCapacity on the real calls
// against DynamoDB Local), its Lambda duration at the template's memory size (measured in
// process), and from those and the dated price table in prices.go, the price of a million.
// `make bench` prints the table; the README shows it.
//
// The package ships in no function: only the benchmark uses it.
package cost
