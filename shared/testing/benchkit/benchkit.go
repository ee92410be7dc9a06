// Package benchkit measures latency distributions for benchmarks that compare an operation
// with its baseline in the same run, interleaved so drift affects both alike.
package benchkit

import (
	"sort"
	"testing"
	"time"
)

// Samples is a set of latencies.
type Samples []time.Duration

// Quantile returns the q-quantile (0..1) of the samples.
func (s Samples) Quantile(q float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	c := append(Samples(nil), s...)
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	i := int(q * float64(len(c)-1))
	return c[i]
}

// Time runs f once and records its latency.
func (s *Samples) Time(f func()) {
	start := time.Now()
	f()
	*s = append(*s, time.Since(start))
}

// Compare runs op and baseline alternately b.N times each and reports both p50s and their ratio
// (op/baseline) as benchmark metrics; it returns the ratio.
func Compare(b *testing.B, name string, op, baseline func()) float64 {
	b.Helper()
	return CompareSetup(b, name, nil, op, nil, baseline)
}

// CompareSetup is Compare with untimed preparation before each op and each baseline run (nil
// for none): for operations that consume what they act on, such as deletes.
func CompareSetup(b *testing.B, name string, opSetup, op, baseSetup, baseline func()) float64 {
	b.Helper()
	s := Interleave(b, Op{Name: name, Setup: opSetup, Run: op}, Op{Name: "baseline", Setup: baseSetup, Run: baseline})
	ratio := P50Ratio(s[0], s[1])
	b.ReportMetric(ratio, "p50-ratio")
	return ratio
}

// Op is one operation of an interleaved comparison.
type Op struct {
	// Name names the op's metric, Name-p50-µs.
	Name string
	// Setup, when not nil, runs untimed before each run of Run: for operations that consume
	// what they act on, such as deletes.
	Setup func()
	Run   func()
}

// warmRounds is how many untimed rounds of every op Interleave runs first.
const warmRounds = 20

// Interleave runs ops in turn, each once per round, warmRounds rounds untimed and then b.N
// timed, so that drift in the machine or a dependency affects each alike; it reports each
// op's p50 as Name-p50-µs and returns each op's samples in the order of ops. Comparing more
// than two ops in one interleaving shows how they stand against each other under the same
// conditions: each op runs right after the one before it in ops (the first after the last),
// and what ran just before shapes what an op costs (caches, scheduling).
func Interleave(b *testing.B, ops ...Op) []Samples {
	b.Helper()
	prepare := func(o Op) {
		if o.Setup != nil {
			b.StopTimer()
			o.Setup()
			b.StartTimer()
		}
	}
	for range warmRounds {
		for _, o := range ops {
			prepare(o)
			o.Run()
		}
	}
	samples := make([]Samples, len(ops))
	b.ResetTimer()
	for range b.N {
		for i, o := range ops {
			prepare(o)
			samples[i].Time(o.Run)
		}
	}
	b.StopTimer()
	for i, o := range ops {
		b.ReportMetric(float64(samples[i].Quantile(0.5).Microseconds()), o.Name+"-p50-µs")
	}
	return samples
}

// P50Ratio is the ratio of the p50s of two sets of samples, op over baseline.
func P50Ratio(op, baseline Samples) float64 {
	return float64(op.Quantile(0.5)) / float64(baseline.Quantile(0.5))
}
