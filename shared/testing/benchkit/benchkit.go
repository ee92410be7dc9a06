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
	run := func(setup, f func()) func() {
		return func() {
			if setup != nil {
				b.StopTimer()
				setup()
				b.StartTimer()
			}
			f()
		}
	}
	for i := 0; i < 20; i++ {
		run(opSetup, op)()
		run(baseSetup, baseline)()
	}
	var got, base Samples
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if opSetup != nil {
			b.StopTimer()
			opSetup()
			b.StartTimer()
		}
		got.Time(op)
		if baseSetup != nil {
			b.StopTimer()
			baseSetup()
			b.StartTimer()
		}
		base.Time(baseline)
	}
	b.StopTimer()
	return report(b, name, got, base)
}

func report(b *testing.B, name string, got, base Samples) float64 {
	ratio := float64(got.Quantile(0.5)) / float64(base.Quantile(0.5))
	b.ReportMetric(float64(got.Quantile(0.5).Microseconds()), name+"-p50-µs")
	b.ReportMetric(float64(base.Quantile(0.5).Microseconds()), "baseline-p50-µs")
	b.ReportMetric(ratio, "p50-ratio")
	return ratio
}
