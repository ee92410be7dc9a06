// Command benchreport prints the performance goals of `make bench` beside their figures, from
// the output of its run (infra/bench.sh): every goal of issue 40 and issue 38, marked when its
// figure misses, "(not run)" when its benchmark was left out of the run, with figures that
// have no goal where they explain one (the floor of a GET over HTTP); then one line per
// function with its zip's size and its cold start against hello-world's, each against its goal.
//
// Usage:
//
//	go run ./infra/benchreport FILE...
//
// The files hold `go test -bench` output and TestZipSizes' verbose log, in any order. A goal
// is one line of goals: the benchmark, the metric it reports and the bound.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// goal is one performance goal: the figure is metric of benchmark (its name without the
// -GOMAXPROCS suffix), or for a cost goal the ratio to its floor the cost table prints for
// the request kind named by cost.
type goal struct {
	what      string
	benchmark string
	metric    string
	cost      string
	bound     bound
}

// bound is the range a figure must be in: at least min and at most max (0 is no bound).
type bound struct{ min, max float64 }

func atMost(v float64) bound      { return bound{max: v} }
func atLeast(v float64) bound     { return bound{min: v} }
func within(lo, hi float64) bound { return bound{lo, hi} }

// meets reports whether v is within b.
func (b bound) meets(v float64) bool {
	return (b.min == 0 || v >= b.min) && (b.max == 0 || v <= b.max)
}

func (b bound) String() string {
	switch {
	case b.min == 0 && b.max == 0:
		return "(none)"
	case b.min == 0:
		return "≤ " + num(b.max)
	case b.max == 0:
		return "≥ " + num(b.min)
	}
	return num(b.min) + "–" + num(b.max)
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// goals are the goals printed, in order. A new benchmark with a goal is one more line here.
var goals = []goal{
	{what: "GET over HTTP / its BatchGetItem", benchmark: "BenchmarkRequestsVsBareOperations/get", metric: "p50-ratio", bound: atMost(1.10)},
	// The floor beside the GET over HTTP: any HTTP server's GET on this machine, the loopback
	// hop and net/http on both ends around the same call (get-hop's bare server).
	{what: "an HTTP server doing only the call / its BatchGetItem", benchmark: "BenchmarkRequestsVsBareOperations/get-hop", metric: "hop/call-p50-ratio"},
	{what: "GET as a Lambda / its BatchGetItem", benchmark: "BenchmarkRequestsVsBareOperations/get-lambda", metric: "p50-ratio", bound: atMost(1.10)},
	{what: "create over HTTP / its TransactWriteItems", benchmark: "BenchmarkRequestsVsBareOperations/create", metric: "p50-ratio", bound: atMost(1.15)},
	{what: "create as a Lambda / its TransactWriteItems", benchmark: "BenchmarkRequestsVsBareOperations/create-lambda", metric: "p50-ratio", bound: atMost(1.15)},
	{what: "ip_policies get cost / the GET floor", cost: "ip_policies get", bound: atMost(1.40)},
	{what: "rate limit, 4 instances: admitted / budget", benchmark: "BenchmarkRateLimitFourInstances", metric: "budget-ratio", bound: within(0.90, 1.10)},
	{what: "Kinesis delivery: worker / raw PutRecords", benchmark: "BenchmarkKinesisWorkerVsRaw", metric: "worker/raw-p50-ratio", bound: atLeast(0.95)},
	{what: "load: req/s / 2800fb0's", benchmark: "BenchmarkLoadVs2800fb0", metric: "ratio", bound: atLeast(0.98)},
	{what: "frps Ping / a GET (both Lambdas)", benchmark: "BenchmarkPlugin/ping", metric: "p50-ratio", bound: atMost(1.0)},
	{what: "frps Login / a GET (both Lambdas)", benchmark: "BenchmarkPlugin/login", metric: "p50-ratio"},
}

// The per-function goals: a zip of at most maxZip bytes, a cold start at most maxColdStart
// times hello-world's (BenchmarkColdStart/<function>'s coldStartMetric).
const (
	maxZip          = 5 << 20
	maxColdStart    = 1.5
	coldStart       = "BenchmarkColdStart/"
	coldStartMetric = "p50-ratio"
)

// results is what a run's output holds.
type results struct {
	// metrics are each benchmark's reported metrics, by unit.
	metrics map[string]map[string]float64
	// zips are the functions' zip sizes in bytes, by function folder, in the order logged.
	zips      map[string]int64
	functions []string
	// floors are the ratios of a request kind's cost to its floor, by kind.
	floors map[string]float64
}

var (
	// gomaxprocs is the suffix go test adds to a benchmark's name.
	gomaxprocs = regexp.MustCompile(`-\d+$`)
	// zipLine is TestZipSizes' log line of one function.
	zipLine = regexp.MustCompile(`: zip (\S+) (\d+) bytes$`)
	// floorLine is the cost table's line of a request kind against its floor
	// ("ip_policies get: $2.28 per million, 1.70x its floor $1.34 (...)").
	floorLine = regexp.MustCompile(`^(?:Benchmark\S*\s+)?(.+?): \$([0-9.]+) per million, [0-9.]+x its floor \$([0-9.]+)`)
)

func newResults() results {
	return results{metrics: map[string]map[string]float64{}, zips: map[string]int64{}, floors: map[string]float64{}}
}

// parse adds what r holds of a run's output to res.
func (res *results) parse(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := floorLine.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			cost, err1 := strconv.ParseFloat(m[2], 64)
			floor, err2 := strconv.ParseFloat(m[3], 64)
			if err1 == nil && err2 == nil && floor > 0 {
				res.floors[m[1]] = cost / floor
			}
			continue
		}
		if m := zipLine.FindStringSubmatch(line); m != nil {
			n, _ := strconv.ParseInt(m[2], 10, 64) // \d+: it parses
			if _, seen := res.zips[m[1]]; !seen {
				res.functions = append(res.functions, m[1])
			}
			res.zips[m[1]] = n
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue // not a result line (a log line that names a benchmark)
		}
		name := gomaxprocs.ReplaceAllString(f[0], "")
		ms := res.metrics[name]
		if ms == nil {
			ms = map[string]float64{}
			res.metrics[name] = ms
		}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				ms[f[i+1]] = v
			}
		}
	}
	return sc.Err()
}

// figure is g's figure in res, and whether the run has it.
func (res results) figure(g goal) (float64, bool) {
	if g.cost != "" {
		v, ok := res.floors[g.cost]
		return v, ok
	}
	v, ok := res.metrics[g.benchmark][g.metric]
	return v, ok
}

// mark is what a figure shows against its goal.
func mark(b bound, v float64) string {
	if b.meets(v) {
		return "ok"
	}
	return "MISSES"
}

// report writes the goals table and the functions table of res to w, and returns how many
// figures miss their goals.
func report(w io.Writer, res results) int {
	missed := 0
	fmt.Fprintln(w, "== goals (issues 38 and 40)")
	fmt.Fprintf(w, "%-54s %10s %11s  %s\n", "goal", "figure", "target", "")
	for _, g := range goals {
		v, ok := res.figure(g)
		switch {
		case !ok:
			fmt.Fprintf(w, "%-54s %10s %11s\n", g.what, "(not run)", g.bound)
		case g.bound == bound{}:
			fmt.Fprintf(w, "%-54s %10.3f %11s\n", g.what, v, g.bound)
		default:
			m := mark(g.bound, v)
			if m != "ok" {
				missed++
			}
			fmt.Fprintf(w, "%-54s %10.3f %11s  %s\n", g.what, v, g.bound, m)
		}
	}
	functions := slices.Clone(res.functions)
	for name := range res.metrics {
		if fn, ok := strings.CutPrefix(name, coldStart); ok && !slices.Contains(functions, fn) {
			functions = append(functions, fn)
		}
	}
	fmt.Fprintf(w, "== functions (zip ≤ %d MB; cold start, exec to first poll, p50 ≤ %.1f× hello-world's)\n", maxZip>>20, maxColdStart)
	fmt.Fprintf(w, "%-30s %10s %-6s %10s %s\n", "function", "zip MB", "", "cold start", "")
	for _, fn := range functions {
		zip, zipMark := "(not run)", ""
		if n, ok := res.zips[fn]; ok {
			zip = fmt.Sprintf("%.2f", float64(n)/(1<<20))
			if zipMark = mark(atMost(maxZip), float64(n)); zipMark != "ok" {
				missed++
			}
		}
		start, startMark := "(not run)", ""
		if v, ok := res.metrics[coldStart+fn][coldStartMetric]; ok {
			start = fmt.Sprintf("%.2f×", v)
			if startMark = mark(atMost(maxColdStart), v); startMark != "ok" {
				missed++
			}
		}
		fmt.Fprintf(w, "%-30s %10s %-6s %10s %s\n", fn, zip, zipMark, start, startMark)
	}
	if len(functions) == 0 {
		fmt.Fprintln(w, "(not run)")
	}
	var others []string
	for name, ms := range res.metrics {
		if strings.HasPrefix(name, coldStart) {
			continue
		}
		for unit, v := range ms {
			if strings.Contains(unit, "ratio") && !slices.ContainsFunc(goals, func(g goal) bool { return g.benchmark == name && g.metric == unit }) {
				others = append(others, fmt.Sprintf("%-66s %10.3f %s", name, v, unit))
			}
		}
	}
	if len(others) > 0 {
		slices.Sort(others)
		fmt.Fprintln(w, "== other ratios (no goal)")
		for _, o := range others {
			fmt.Fprintln(w, o)
		}
	}
	if missed == 0 {
		fmt.Fprintln(w, "every figure of the run meets its goal")
	} else {
		fmt.Fprintf(w, "%d figures miss their goals (MISSES above)\n", missed)
	}
	return missed
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: benchreport FILE...")
		os.Exit(2)
	}
	res := newResults()
	for _, name := range os.Args[1:] {
		f, err := os.Open(name)
		if err == nil {
			err = res.parse(f)
			f.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchreport:", err)
			os.Exit(1)
		}
	}
	report(os.Stdout, res)
}
