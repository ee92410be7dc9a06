package trafficpolicy_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/rules/trafficpolicy"
	"tunnelapi/shared/rules/trafficpolicy/policytest"
	"tunnelapi/shared/testing/testkit"
)

// validateCPU validates doc and returns the process CPU it took.
func validateCPU(doc string) (time.Duration, error) {
	start := policytest.CPU()
	err := trafficpolicy.Validate(context.Background(), "traffic_policy", doc)
	return policytest.CPU() - start, err
}

func TestAdversarialDocumentsAreBounded(t *testing.T) {
	validateCPU("on_http_request: []") // build the shared parts once, as a warm process has them
	for _, c := range policytest.Cases() {
		var err error
		took := policytest.LeastCPU(3, func(int) {
			err = trafficpolicy.Validate(context.Background(), "traffic_policy", c.Doc)
		})
		t.Logf("%-50s %7d bytes  %6.1f ms CPU  %v", c.Name, len(c.Doc), float64(took.Microseconds())/1000, short(err))
		if took > policytest.MaxCPU {
			t.Errorf("%s: %v of CPU, over %v", c.Name, took, policytest.MaxCPU)
		}
		if err != nil {
			if e, ok := api.AsError(err); !ok || e.Status != 400 || e.Field != "traffic_policy" {
				t.Errorf("%s: %v, not a 400 naming traffic_policy", c.Name, err)
			}
		}
	}
}

func short(err error) string {
	if err == nil {
		return "accepted"
	}
	s := err.Error()
	if len(s) > 110 {
		s = s[:110] + "…"
	}
	return s
}

func TestLimitsAreNamed(t *testing.T) {
	expr := func(e string) string {
		return "on_http_request:\n  - expressions: [" + testkit.JSONString(e) + "]\n    actions: [{type: deny}]\n"
	}
	many := func(n int, gen func(i int) string) string {
		var b strings.Builder
		b.WriteString("on_http_request:\n")
		for i := 0; i < n; i++ {
			b.WriteString("  - expressions: [" + testkit.JSONString(gen(i)) + "]\n    actions: [{type: deny}]\n")
		}
		return b.String()
	}
	cases := []struct{ name, doc, limit, path string }{
		{"size", strings.Repeat(" ", trafficpolicy.MaxBytes) + "{}", "MaxBytes", ""},
		{"depth", "on_http_request: " + strings.Repeat("[", 40) + strings.Repeat("]", 40), "MaxDepth", ""},
		{"json depth", `{"on_http_request": ` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "}", "MaxDepth", ""},
		{"values", "on_http_request: [" + strings.Repeat("1,", trafficpolicy.MaxValues) + "1]", "MaxValues", ""},
		{"expression size", expr("'" + strings.Repeat("a", trafficpolicy.MaxExpressionBytes) + "' == req.method"), "MaxExpressionBytes", "on_http_request[0].expressions[0]"},
		{"expressions", many(trafficpolicy.MaxExpressions+1, func(i int) string {
			return "req.method == '" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + "'"
		}), "MaxExpressions", ""},
		{"expression bytes", many(30, func(i int) string { return "'" + strings.Repeat("x", 1000) + string(rune('a'+i)) + "' == req.method" }), "MaxExpressionBytesTotal", ""},
		{"cost", expr("req.headers.all(a, req.headers.all(b, req.headers.all(c, a.matches(b + c))))"), "MaxExpressionCost", "on_http_request[0].expressions[0]"},
		{"regex", "on_http_request:\n  - actions:\n      - type: url-rewrite\n        config: {from: " + testkit.JSONString(strings.Repeat("a", trafficpolicy.MaxRegexBytes+1)) + ", to: /}\n", "MaxRegexBytes", "on_http_request[0].actions[0].config.from"},
	}
	for _, c := range cases {
		err := trafficpolicy.Validate(context.Background(), "traffic_policy", c.doc)
		e, ok := api.AsError(err)
		if !ok || e.Status != 400 || e.Field != "traffic_policy" {
			t.Errorf("%s: %v, want a 400 naming traffic_policy", c.name, err)
			continue
		}
		if e.Details["limit"] != c.limit || !strings.Contains(e.Msg, c.limit) {
			t.Errorf("%s: limit %q in %q, want %s", c.name, e.Details["limit"], e.Msg, c.limit)
		}
		if c.path != "" && e.Details["path"] != c.path {
			t.Errorf("%s: path %q, want %q", c.name, e.Details["path"], c.path)
		}
	}
}

// The request's context bounds the work: a cancelled request stops at the next expression.
func TestCancelledRequestStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := trafficpolicy.Validate(ctx, "traffic_policy", "on_http_request:\n  - expressions: ['req.method == \"GET\"']\n    actions: [{type: deny}]\n")
	e, ok := api.AsError(err)
	if !ok || e.Details["limit"] != "Budget" || !strings.Contains(e.Msg, "cancelled") {
		t.Fatalf("%v, want a refusal naming the budget", err)
	}
}

// FuzzValidateIsBounded: whatever the document, a 400 naming the field or acceptance, within
// the CPU bound.
func FuzzValidateIsBounded(f *testing.F) {
	for _, c := range policytest.Cases() {
		if len(c.Doc) < 4<<10 { // big seeds make the engine spend its time minimising them
			f.Add(c.Doc)
		}
	}
	f.Add("on_http_request:\n  - expressions: ['size([[[[1]]]]) > 0']\n    actions: [{type: custom-response, config: {body: '${req.url.path}'}}]\n")
	f.Add("on_event_stream_message: [{actions: [{type: sse-find-replace, config: {replacements: [{from: a, to: b}]}}]}]")
	trafficpolicy.Validate(context.Background(), "traffic_policy", "on_http_request: []")
	f.Fuzz(func(t *testing.T, doc string) {
		took, err := validateCPU(doc)
		if took > policytest.MaxCPU {
			t.Fatalf("%v of CPU for %q", took, doc)
		}
		if err == nil {
			return
		}
		if e, ok := api.AsError(err); !ok || e.Status != 400 || e.Field != "traffic_policy" {
			t.Fatalf("Validate(%q) = %v, not a 400 naming traffic_policy", doc, err)
		}
	})
}

// BenchmarkValidateCPU reports the CPU of validating each adversarial document, and its ratio
// to the bare parse of the same document (YAML or JSON into values) measured in the same run.
func BenchmarkValidateCPU(b *testing.B) {
	trafficpolicy.Validate(context.Background(), "traffic_policy", "on_http_request: []")
	for _, c := range policytest.Cases() {
		b.Run(c.Name, func(b *testing.B) {
			var validate, parse time.Duration
			n := min(b.N, 10) // each is up to a bound of 200 ms: a few runs give the number
			for i := 0; i < n; i++ {
				took, _ := validateCPU(c.Doc)
				validate += took
				start := policytest.CPU()
				var v any
				if strings.HasPrefix(c.Doc, "{") || strings.HasPrefix(c.Doc, "[") {
					json.Unmarshal([]byte(c.Doc), &v)
				} else {
					yaml.Unmarshal([]byte(c.Doc), &v)
				}
				parse += policytest.CPU() - start
			}
			b.ReportMetric(float64(validate.Microseconds())/1000/float64(n), "cpu-ms/validate")
			b.ReportMetric(float64(parse.Microseconds())/1000/float64(n), "cpu-ms/parse")
			b.ReportMetric(float64(validate)/float64(max(parse, time.Microsecond)), "validate/parse-ratio")
		})
	}
}
