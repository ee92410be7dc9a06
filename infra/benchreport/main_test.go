package main

import (
	"os"
	"strings"
	"testing"
)

// A recorded run (testdata/run.txt: a sample of each line the run prints, with a log line
// that names a benchmark, TestZipSizes' failure for a zip over its goal, the cost table's
// floor line and a function with no cold start)
// reads back as every goal's figure with its mark, the GET over HTTP's floor right below it, "(not run)" for the goal whose benchmark
// the run left out, and one line per function with both its figures and their marks.
func TestReport(t *testing.T) {
	f, err := os.Open("testdata/run.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res := newResults()
	if err := res.parse(f); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	missed := report(&out, res)
	t.Log("\n" + out.String())
	lines := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		for _, g := range goals {
			if strings.HasPrefix(line, g.what+" ") {
				lines[g.what] = strings.Join(strings.Fields(strings.TrimPrefix(line, g.what)), " ")
			}
		}
		if f := strings.Fields(line); len(f) > 0 {
			lines[f[0]] = strings.Join(f[1:], " ")
		}
	}
	want := map[string]string{
		"GET over HTTP / its BatchGetItem":                      "1.192 ≤ 1.10 MISSES",
		"an HTTP server doing only the call / its BatchGetItem": "1.115 (none)",
		"GET as a Lambda / its BatchGetItem":                    "1.098 ≤ 1.10 ok",
		"create over HTTP / its TransactWriteItems":             "1.058 ≤ 1.15 ok",
		"create as a Lambda / its TransactWriteItems":           "1.059 ≤ 1.15 ok",
		"ip_policies get cost / the GET floor":                  "1.701 ≤ 1.40 MISSES",
		"rate limit, 4 instances: admitted / budget":            "1.031 0.90–1.10 ok",
		"Kinesis delivery: worker / raw PutRecords":             "0.932 ≥ 0.95 MISSES",
		"load: req/s / 2800fb0's":                               "(not run) ≥ 0.98",
		"frps Ping / a GET (both Lambdas)":                      "0.987 ≤ 1.00 ok",
		"frps Login / a GET (both Lambdas)":                     "1.412 (none)",
		"api_keys":                                              "3.57 ok 1.12× ok",
		"ip_policies":                                           "3.62 ok 1.40× ok",
		"https_edges":                                           "7.70 MISSES 2.03× MISSES",
		"event_worker":                                          "4.05 ok (not run)",
		"operator":                                              "(not run) 1.05× ok",
		"BenchmarkRequestsVsBareOperations/update":              "1.117 p50-ratio",
		"BenchmarkRequestsVsBareOperations/get-hop":             "1.206 get/call-p50-ratio",
	}
	for k, v := range want {
		if lines[k] != v {
			t.Errorf("%s: %q, want %q", k, lines[k], v)
		}
	}
	if missed != 5 {
		t.Errorf("%d figures missed, want 5", missed)
	}
	if !strings.Contains(out.String(), "5 figures miss their goals") {
		t.Error("no summary of the misses")
	}
	if strings.Contains(out.String(), "writes/request") || strings.Contains(out.String(), "worker/raw-mean") ||
		strings.Contains(out.String(), "hop/call-p50-ratio") {
		t.Error("a metric that is no ratio, or a goal's figure, is among the other ratios")
	}
	// The floor of a GET over HTTP is printed right below the GET's goal.
	get := strings.Index(out.String(), "GET over HTTP / its BatchGetItem ")
	floor := strings.Index(out.String(), "an HTTP server doing only the call / its BatchGetItem ")
	if get < 0 || floor < get || strings.Count(out.String()[get:floor], "\n") != 1 {
		t.Errorf("the floor (at %d) is not on the line after the GET over HTTP's goal (at %d)", floor, get)
	}
}

// Every goal names either a benchmark and its metric or a cost kind, and has a bound unless it
// is only reported.
func TestGoalsAreWhole(t *testing.T) {
	for _, g := range goals {
		if (g.benchmark == "") == (g.cost == "") || g.benchmark != "" && g.metric == "" {
			t.Errorf("%q: benchmark %q metric %q cost %q", g.what, g.benchmark, g.metric, g.cost)
		}
		if b := g.bound; b.min != 0 && b.max != 0 && b.min > b.max {
			t.Errorf("%q: bound %v is empty", g.what, b)
		}
	}
}
