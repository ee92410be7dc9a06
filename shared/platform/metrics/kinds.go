package metrics

import "sync"

// Namespace is the CloudWatch namespace of every metric the service emits.
const Namespace = "tunnelapi"

// Unit is a CloudWatch unit.
type Unit string

// The units the service's metrics use.
const (
	Count        Unit = "Count"
	Milliseconds Unit = "Milliseconds"
)

// Metric is one metric of a line: its name and unit.
type Metric struct {
	Name string
	Unit Unit
}

// Kind is one kind of metric line: the metrics it carries, in the order Emit takes their values,
// and the dimension sets CloudWatch aggregates them by (an empty set is the metric with no
// dimensions, the total).
type Kind struct {
	Metrics    []Metric
	Dimensions [][]string
	// Values are the values a dimension takes, for dimensions with a fixed set.
	Values map[string][]string

	once sync.Once
	// fixed is what every line of the kind has the same, made on its first line (Line).
	fixed fixedParts
}

// Dimension names and the values the emitting packages give them.
const (
	DimSink    = "Sink"    // an event destination's target kind (eventsub.Kind*)
	DimOutcome = "Outcome" // what became of a delivery or a certificate job
	DimCode    = "Code"    // the error code a request was refused with

	// Outcomes of a delivery attempt.
	Delivered    = "delivered"     // the sink took the event
	Retried      = "retried"       // it failed and is tried again later
	DeadLettered = "dead_lettered" // it failed for the last time: the dead-letter queue has it

	// Outcomes of a certificate job's run.
	Issued = "issued" // the certificate is stored
	Failed = "failed" // ordering it failed; the job records why and when it is tried again
	Stale  = "stale"  // the job was no longer its resource's pending one
)

// The kinds of lines the service emits.
var (
	// Delivery counts delivery attempts of events to a destination; DeliveryLatency is from an
	// event's commit (its id's second) to its attempt's end, a sample per attempt (a line may
	// carry a batch's attempts of one outcome: Kind.AppendSamples).
	Delivery = &Kind{
		Metrics:    []Metric{{"Deliveries", Count}, {"DeliveryLatency", Milliseconds}},
		Dimensions: [][]string{{DimSink, DimOutcome}, {DimOutcome}},
		Values:     map[string][]string{DimOutcome: {Delivered, Retried, DeadLettered}},
	}
	// CertificateJob is one run of a certificate job that reached an outcome.
	CertificateJob = &Kind{
		Metrics:    []Metric{{"CertificateJobs", Count}},
		Dimensions: [][]string{{DimOutcome}},
		Values:     map[string][]string{DimOutcome: {Issued, Failed, Stale}},
	}
	// RateLimited is one request refused for its account's rate limit (429).
	RateLimited = &Kind{
		Metrics:    []Metric{{"RateLimitedRequests", Count}},
		Dimensions: [][]string{{}},
	}
	// AuthFailure is one request refused because its credentials are missing, malformed,
	// unknown or of the wrong kind.
	AuthFailure = &Kind{
		Metrics:    []Metric{{"AuthenticationFailures", Count}},
		Dimensions: [][]string{{DimCode}, {}},
	}
	// IdempotentReplay is one create answered with the response kept for its Idempotency-Key.
	IdempotentReplay = &Kind{
		Metrics:    []Metric{{"IdempotentReplays", Count}},
		Dimensions: [][]string{{}},
	}
)

// Kinds is every kind of line the service emits.
var Kinds = []*Kind{Delivery, CertificateJob, RateLimited, AuthFailure, IdempotentReplay}

// DimensionNames is the union of k's dimension sets, in first-seen order: the keys every line of
// k carries.
func (k *Kind) DimensionNames() []string {
	var out []string
	seen := map[string]bool{}
	for _, set := range k.Dimensions {
		for _, d := range set {
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	return out
}
