package metrics_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"tunnelapi/shared/platform/metrics"
)

// A line of every kind reads back with its namespace, dimension sets, units and values; a line
// that is not EMF is refused.
func TestLinesParseBack(t *testing.T) {
	at := time.UnixMilli(1_700_000_000_123)
	for _, k := range metrics.Kinds {
		dims := map[string]string{}
		for _, d := range k.DimensionNames() {
			dims[d] = "v-" + d
		}
		values := make([]float64, len(k.Metrics))
		for i := range values {
			values[i] = float64(i) + 1.5
		}
		rec, err := metrics.Parse(k.Line(at, dims, values...))
		if err != nil {
			t.Fatalf("%s: %v", k.Metrics[0].Name, err)
		}
		if rec.Namespace != metrics.Namespace || !rec.Time.Equal(at) || len(rec.Dimensions) != len(k.Dimensions) {
			t.Errorf("%s: %+v", k.Metrics[0].Name, rec)
		}
		for i, m := range k.Metrics {
			if rec.Values[m.Name] != values[i] || rec.Units[m.Name] != m.Unit {
				t.Errorf("%s: %v %s, want %v %s", m.Name, rec.Values[m.Name], rec.Units[m.Name], values[i], m.Unit)
			}
		}
		for d, v := range dims {
			if rec.Dims[d] != v {
				t.Errorf("%s: dimension %s = %q, want %q", k.Metrics[0].Name, d, rec.Dims[d], v)
			}
		}
	}
	for _, bad := range []string{`{"level":"INFO","msg":"request"}`, `not json`, `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[]}}`,
		`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[["Sink"]],"Metrics":[{"Name":"M"}]}]},"M":1}`} {
		if _, err := metrics.Parse([]byte(bad)); err == nil {
			t.Errorf("%s parsed as EMF", bad)
		}
	}
}

// Emit writes one line per call, of the kind it is given, which Of finds among other lines.
func TestEmitAndOf(t *testing.T) {
	var buf metrics.Buffer
	e := &metrics.Emitter{W: &buf}
	e.Emit(metrics.Delivery, map[string]string{metrics.DimSink: "kinesis", metrics.DimOutcome: metrics.Delivered}, 1, 42)
	_, _ = buf.Write([]byte(`{"level":"INFO","msg":"unrelated"}` + "\n"))
	e.Emit(metrics.RateLimited, nil, 1)
	got := metrics.Of(metrics.Delivery, buf.Bytes())
	if len(got) != 1 || got[0].Dims[metrics.DimSink] != "kinesis" || got[0].Values["DeliveryLatency"] != 42 {
		t.Fatalf("deliveries: %+v", got)
	}
	if n := len(metrics.Of(metrics.RateLimited, buf.Bytes())); n != 1 {
		t.Fatalf("%d rate-limited lines, want 1", n)
	}
}

// A usage line reads back as written, with the capacity and items a Tally summed; a line of
// another kind is no usage line, and a usage without an account is not written.
func TestUsageLines(t *testing.T) {
	var tally metrics.Tally
	tally.AddCapacity(0.5, 0)
	tally.AddCapacity(1, 2)
	tally.AddCommit(1)
	tally.AddCommit(-1)
	u := metrics.Usage{Account: "acct_2Bxz7mWl3jk8UpN5sQ0vR9tYc1a", Family: "api_keys", Status: 201}
	tally.Fill(&u)
	if u.ReadUnits != 1.5 || u.WriteUnits != 2 || u.Mutation != 1 || u.Items != 0 {
		t.Fatalf("filled %+v", u)
	}
	var buf metrics.Buffer
	e := &metrics.Emitter{W: &buf}
	e.EmitUsage(u)
	e.EmitUsage(metrics.Usage{Family: "api_keys", Status: 200})
	e.Emit(metrics.RateLimited, nil, 1)
	var got []metrics.Usage
	for _, line := range strings.Split(strings.TrimSpace(string(buf.Bytes())), "\n") {
		if v, err := metrics.ParseUsage([]byte(line)); err == nil {
			got = append(got, v)
		}
	}
	if len(got) != 1 || got[0] != u {
		t.Fatalf("read back %+v, want %+v", got, u)
	}
	for _, bad := range []string{`{"level":"INFO","msg":"request","usage":"acct_x"}`, `{"usage":""}`, `{"usage":1}`, `not json`} {
		if _, err := metrics.ParseUsage([]byte(bad)); err == nil {
			t.Errorf("%s read as a usage line", bad)
		}
	}
	if metrics.TallyOf(context.Background()) != nil || metrics.TallyOf(metrics.WithTally(context.Background(), &tally)) != &tally {
		t.Error("a context's tally")
	}
}

// A usage line is written directly, byte for byte what json.Marshal writes: every field, strings
// JSON escapes, and numbers in each of encoding/json's forms.
func TestUsageLineIsJSON(t *testing.T) {
	for _, u := range []metrics.Usage{
		{Account: "acct_2Bxz7mWl3jk8UpN5sQ0vR9tYc1a", Events: 10},
		{Account: "acct_x", Family: "backends/failover", Status: 201, Mutation: 1, Items: -2, Certificates: 3, ReadUnits: 1.5, WriteUnits: 28},
		{Account: "a\"b\\c<d>&\u00e9\x01\u2028", Family: "f\n", Status: -1},
		{Account: "acct_x", ReadUnits: 1e-7, WriteUnits: 2.5e21},
		{Account: "acct_x", ReadUnits: 0.1 + 0.2, WriteUnits: -1e-6},
		{Account: "acct_x", ReadUnits: 123456789.125, WriteUnits: 1e20},
		{},
	} {
		want, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(metrics.UsageLine(u)); got != string(want)+"\n" {
			t.Errorf("%+v: wrote %q, json.Marshal %q", u, got, want)
		}
	}
}

// A line is JSON whatever its values: a dimension value with quotes, escapes or non-ASCII text
// reads back as given, and a value JSON cannot carry (NaN, ±Inf) is 0.
func TestLineEscapes(t *testing.T) {
	at := time.UnixMilli(1_700_000_000_123)
	for _, v := range []string{`a "quoted" \ value`, "tab\there", "münchen <&>", "\u2028"} {
		rec, err := metrics.Parse(metrics.Delivery.Line(at, map[string]string{metrics.DimSink: v}, math.NaN(), math.Inf(1)))
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		if rec.Dims[metrics.DimSink] != v || rec.Dims[metrics.DimOutcome] != "none" || rec.Values["Deliveries"] != 0 || rec.Values["DeliveryLatency"] != 0 {
			t.Errorf("%q: %+v", v, rec)
		}
	}
}

// countingWriter counts the writes it takes.
type countingWriter struct {
	metrics.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) { w.writes++; return w.Buffer.Write(p) }

// A batch's lines, metric and usage lines alike, reach the writer in one write when flushed,
// each read back as Emit's would be and carrying the batch's time; an empty flush writes
// nothing.
func TestBatch(t *testing.T) {
	var w countingWriter
	at := time.UnixMilli(1_700_000_000_123)
	b := (&metrics.Emitter{W: &w, Now: func() time.Time { return at }}).Batch()
	b.Flush()
	b.Reserve(metrics.Delivery, 2)
	for _, outcome := range []string{metrics.Delivered, metrics.Retried} {
		b.Emit(metrics.Delivery, map[string]string{metrics.DimSink: "kinesis", metrics.DimOutcome: outcome}, 1, 7)
	}
	b.EmitUsage(metrics.Usage{Account: "ac_1", Events: 2})
	b.EmitUsage(metrics.Usage{Events: 1}) // no account: no line
	b.Flush()
	b.Flush()
	if w.writes != 1 || !b.At().Equal(at) {
		t.Fatalf("%d writes, batch time %v: want 1 and %v", w.writes, b.At(), at)
	}
	recs := metrics.Of(metrics.Delivery, w.Bytes())
	if len(recs) != 2 || recs[0].Dims[metrics.DimOutcome] != metrics.Delivered || recs[1].Dims[metrics.DimOutcome] != metrics.Retried ||
		!recs[0].Time.Equal(at) || recs[1].Values["DeliveryLatency"] != 7 {
		t.Fatalf("delivery lines %+v", recs)
	}
	lines := strings.Split(strings.TrimSpace(w.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3: %q", len(lines), w.String())
	}
	if u, err := metrics.ParseUsage([]byte(lines[2])); err != nil || u.Account != "ac_1" || u.Events != 2 {
		t.Fatalf("usage line %q: %+v %v", lines[2], u, err)
	}
}

// A line of samples carries one metric as a number and another as an array, as EMF allows;
// read back, the array's values are each a sample and their sum the metric's value. An array
// longer than EMF takes, or empty, is no EMF line.
func TestSamples(t *testing.T) {
	at := time.UnixMilli(1_700_000_000_123)
	dims := map[string]string{metrics.DimSink: "kinesis", metrics.DimOutcome: metrics.Delivered}
	line := metrics.Delivery.AppendSamples(nil, at, dims, []float64{3}, []float64{12, 7.5, math.NaN()})
	if !strings.Contains(string(line), `"Deliveries":3,"DeliveryLatency":[12,7.5,0]`) {
		t.Fatalf("line %s", line)
	}
	rec, err := metrics.Parse(line)
	if err != nil || rec.Values["Deliveries"] != 3 || !slices.Equal(rec.Samples["DeliveryLatency"], []float64{12, 7.5, 0}) ||
		rec.Values["DeliveryLatency"] != 19.5 || rec.Dims[metrics.DimSink] != "kinesis" || !rec.Time.Equal(at) {
		t.Fatalf("parsed %+v, %v", rec, err)
	}
	if one := metrics.Delivery.AppendSamples(nil, at, dims, []float64{1}, []float64{4}); !bytes.Equal(one, metrics.Delivery.Line(at, dims, 1, 4)) {
		t.Fatalf("one sample each: %s, want Line's %s", one, metrics.Delivery.Line(at, dims, 1, 4))
	}
	for _, n := range []int{0, metrics.MaxSamples + 1} {
		bad := strings.Replace(string(line), "[12,7.5,0]", "["+strings.TrimSuffix(strings.Repeat("1,", n), ",")+"]", 1)
		if _, err := metrics.Parse([]byte(bad)); err == nil {
			t.Errorf("an array of %d values parsed", n)
		}
	}
}
