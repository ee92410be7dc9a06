// Package metrics is the service's own numbers: each Kind of metric line declared once here,
// written as a CloudWatch Embedded Metric Format (EMF) log line to standard output, from which
// CloudWatch Logs extracts the metrics with no call on the request path. template.yaml's alarms
// and dashboard name these metrics; the tests in shared/app hold them to the declarations here
// (namespace, metric names, dimension sets), and the tests of the emitting packages parse the
// lines back with Parse.
package metrics
