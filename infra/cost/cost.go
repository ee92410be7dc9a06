package cost

import (
	"fmt"
	"io"
	"math"
	"time"
)

// Usage is what one request of a kind used.
type Usage struct {
	Kind string
	// HTTP says it came through API Gateway (a worker's message does not).
	HTTP bool
	// Invocations is the number of Lambda invocations it takes (a share of one when a worker
	// handles a batch of them at once).
	Invocations float64
	// Lambda is an invocation's duration (billed rounded up to the millisecond) at MemoryMB.
	Lambda   time.Duration
	MemoryMB int
	// ReadUnits and WriteUnits are the DynamoDB request units consumed.
	ReadUnits, WriteUnits float64
	// SQS, Pipes and KMS count requests to each.
	SQS, Pipes, KMS float64
	// LogBytes are the bytes its usage line adds to CloudWatch Logs, with the overhead
	// CloudWatch Logs counts per log event (LogEventOverhead).
	LogBytes float64
	// UsageInvocations is its share of the usage worker's invocations (a delivery of lines is
	// one), each of UsageLambda at UsageMemoryMB; the worker's write units are in WriteUnits.
	UsageInvocations float64
	UsageLambda      time.Duration
	UsageMemoryMB    int
}

// LogEventOverhead is what CloudWatch Logs counts for a log event beyond its message.
const LogEventOverhead = 26

// gbSeconds is the compute of invocations of d each at memoryMB, billed by the millisecond.
func gbSeconds(invocations float64, d time.Duration, memoryMB int) float64 {
	billedMs := math.Ceil(float64(d) / float64(time.Millisecond))
	return invocations * float64(memoryMB) / 1024 * billedMs / 1000
}

// PerMillion is the price of a million requests like u under t, in US dollars.
func (t Table) PerMillion(u Usage) float64 {
	p := (u.Invocations+u.UsageInvocations)*t.LambdaPerMillion +
		(gbSeconds(u.Invocations, u.Lambda, u.MemoryMB)+gbSeconds(u.UsageInvocations, u.UsageLambda, u.UsageMemoryMB))*t.LambdaPerGBSecond*1e6 +
		u.LogBytes/1e9*t.LogsIngestedPerGB*1e6 +
		u.ReadUnits*t.ReadUnitsPerMillion + u.WriteUnits*t.WriteUnitsPerMillion +
		u.SQS*t.SQSPerMillion + u.Pipes*t.PipesPerMillion + u.KMS*t.KMSPerMillion
	if u.HTTP {
		p += t.HTTPAPIPerMillion
	}
	return p
}

// Print writes the cost table of usages under t.
func (t Table) Print(w io.Writer, usages []Usage) {
	fmt.Fprintf(w, "cost per request kind (prices: %s, %s; Lambda arm64)\n", t.Region, t.Date)
	fmt.Fprintf(w, "%-34s %6s %6s %5s %9s %5s %4s %4s %5s %6s %12s\n", "kind", "RRU", "WRU", "inv", "lambda", "SQS", "pipe", "KMS", "logB", "usage", "$/million")
	for _, u := range usages {
		fmt.Fprintf(w, "%-34s %6.1f %6.2f %5.2f %7.1fms %5.2f %4.0f %4.1f %5.0f %6.3f %12.2f\n", u.Kind, u.ReadUnits, u.WriteUnits,
			u.Invocations, float64(u.Lambda)/float64(time.Millisecond), u.SQS, u.Pipes, u.KMS, u.LogBytes, u.UsageInvocations, t.PerMillion(u))
	}
}

// Floor is the physical floor of a GET: API Gateway, one Lambda invocation of d at memoryMB
// and the read units of its one item (a consistent read of up to 4 KB is one), nothing else.
func Floor(d time.Duration, memoryMB int, readUnits float64) Usage {
	return Usage{Kind: "floor of a GET", HTTP: true, Invocations: 1, Lambda: d, MemoryMB: memoryMB, ReadUnits: readUnits}
}

// PrintVersusFloor writes the line setting u's price under t beside floor's, and their ratio.
func (t Table) PrintVersusFloor(w io.Writer, u, floor Usage) {
	fmt.Fprintf(w, "%s: $%.2f per million, %.2fx its floor $%.2f (API Gateway, one invocation of %.1fms, %.1f read units)\n",
		u.Kind, t.PerMillion(u), t.PerMillion(u)/t.PerMillion(floor), t.PerMillion(floor),
		float64(floor.Lambda)/float64(time.Millisecond), floor.ReadUnits)
}
