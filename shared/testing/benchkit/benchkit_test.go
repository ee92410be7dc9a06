package benchkit

import (
	"flag"
	"slices"
	"strings"
	"testing"
	"time"
)

// benchtime sets -test.benchtime for the test (testing.Benchmark reads it), so that a benchmark
// of ops that take no time runs a few rounds rather than a second's worth.
func benchtime(t *testing.T, v string) {
	f := flag.Lookup("test.benchtime")
	old := f.Value.String()
	if err := f.Value.Set(v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Value.Set(old) })
}

// Interleave runs its ops in turn, each setup right before its op, the warm-up rounds before
// the timed ones, and returns and reports one p50 per op from b.N samples each.
func TestInterleaveRunsOpsInTurn(t *testing.T) {
	benchtime(t, "5x")
	var trace []string
	var got []Samples
	res := testing.Benchmark(func(b *testing.B) {
		trace = trace[:0]
		op := func(name string, setup bool) Op {
			o := Op{Name: name, Run: func() { trace = append(trace, name) }}
			if setup {
				o.Setup = func() { trace = append(trace, "setup-"+name) }
			}
			return o
		}
		got = Interleave(b, op("a", false), op("b", true), op("c", false))
	})
	if res.N != 5 {
		t.Fatalf("the benchmark ran %d times, want 5", res.N)
	}
	want := slices.Repeat([]string{"a", "setup-b", "b", "c"}, warmRounds+res.N)
	if !slices.Equal(trace, want) {
		t.Errorf("the last run's ops ran in the order %s, want %d rounds of a, setup-b, b, c",
			strings.Join(trace, ","), warmRounds+res.N)
	}
	if len(got) != 3 {
		t.Fatalf("%d sets of samples, want 3", len(got))
	}
	for i, s := range got {
		if len(s) != res.N {
			t.Errorf("op %d: %d samples, want b.N = %d", i, len(s), res.N)
		}
	}
	for _, name := range []string{"a", "b", "c"} {
		if _, ok := res.Extra[name+"-p50-µs"]; !ok {
			t.Errorf("no %s-p50-µs metric among %v", name, res.Extra)
		}
	}
}

// Compare reports both p50s and their ratio under the names it always had.
func TestCompareReportsRatio(t *testing.T) {
	benchtime(t, "5x")
	res := testing.Benchmark(func(b *testing.B) {
		Compare(b, "op", func() {}, func() {})
	})
	for _, m := range []string{"op-p50-µs", "baseline-p50-µs", "p50-ratio"} {
		if _, ok := res.Extra[m]; !ok {
			t.Errorf("no %s metric among %v", m, res.Extra)
		}
	}
}

// P50Ratio divides the medians, and a quantile is one of the samples.
func TestP50Ratio(t *testing.T) {
	op := Samples{3 * time.Millisecond, 9 * time.Millisecond, 2 * time.Millisecond}
	base := Samples{2 * time.Millisecond, 1 * time.Millisecond, 7 * time.Millisecond}
	if r := P50Ratio(op, base); r != 1.5 {
		t.Errorf("p50 ratio %v, want 3ms/2ms = 1.5", r)
	}
	if q := op.Quantile(1); q != 9*time.Millisecond {
		t.Errorf("quantile 1 is %v, want the largest, 9ms", q)
	}
	if !slices.Equal(op, Samples{3 * time.Millisecond, 9 * time.Millisecond, 2 * time.Millisecond}) {
		t.Error("Quantile reordered the samples")
	}
}
