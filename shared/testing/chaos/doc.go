// Package chaos holds the tests of how the service behaves while its dependencies fail: the
// network to DynamoDB Local and the SQS emulator misbehaving (toxiproxy, package faults) and
// DynamoDB answering with its own failures (an SDK middleware on the real client). Histories of
// concurrent clients are recorded over the local server's HTTP and checked for linearizability
// with porcupine against a sequential model of the API: API keys, event subscriptions, IP
// policies with their rules (a rule needs its policy and goes with it) and cloud endpoints on a
// few URLs (one endpoint per URL). Answers are checked to be a 2xx, a documented 4xx or a 503
// with Retry-After, each within its request's deadline, and the audit log to hold one event per
// committed mutation.
package chaos
