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
}

// PerMillion is the price of a million requests like u under t, in US dollars.
func (t Table) PerMillion(u Usage) float64 {
	billedMs := math.Ceil(float64(u.Lambda) / float64(time.Millisecond))
	gbSeconds := u.Invocations * float64(u.MemoryMB) / 1024 * billedMs / 1000
	p := u.Invocations*t.LambdaPerMillion + gbSeconds*t.LambdaPerGBSecond*1e6 +
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
	fmt.Fprintf(w, "%-34s %6s %6s %5s %9s %5s %4s %4s %12s\n", "kind", "RRU", "WRU", "inv", "lambda", "SQS", "pipe", "KMS", "$/million")
	for _, u := range usages {
		fmt.Fprintf(w, "%-34s %6.1f %6.1f %5.2f %7.1fms %5.2f %4.0f %4.1f %12.2f\n", u.Kind, u.ReadUnits, u.WriteUnits,
			u.Invocations, float64(u.Lambda)/float64(time.Millisecond), u.SQS, u.Pipes, u.KMS, t.PerMillion(u))
	}
}
