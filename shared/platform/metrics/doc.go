// Package metrics is the service's own numbers: each Kind of metric line declared once here,
// written as a CloudWatch Embedded Metric Format (EMF) log line to standard output, from which
// CloudWatch Logs extracts the metrics with no call on the request path. template.yaml's alarms
// and dashboard name these metrics; the tests in infra/samtemplate hold them to the declarations here
// (namespace, metric names, dimension sets), and the tests of the emitting packages parse the
// lines back with Parse.
//
// Usage lines are written beside them, one per request, per batch of events delivered to a
// destination and per certificate job of an account (Usage), with what it used: a Tally
// carried by the work's context sums the DynamoDB capacity its calls consumed and what its
// transactions committed (package store adds to it).
// They are no metrics (an account is no dimension): a subscription filter sends them to the
// usage worker, which sums them per account and day (package usage).
package metrics
