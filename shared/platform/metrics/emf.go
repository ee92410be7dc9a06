package metrics

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Emitter writes metric lines to W, one line per Emit.
type Emitter struct {
	mu sync.Mutex
	W  io.Writer
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Stdout is the emitter Lambda's log capture reads: standard output. A nil *Emitter is Stdout.
var Stdout = &Emitter{W: os.Stdout}

type metricDirective struct {
	Namespace  string       `json:"Namespace"`
	Dimensions [][]string   `json:"Dimensions"`
	Metrics    []metricSpec `json:"Metrics"`
}

type metricSpec struct {
	Name string `json:"Name"`
	Unit Unit   `json:"Unit"`
}

type metadata struct {
	Timestamp         int64             `json:"Timestamp"`
	CloudWatchMetrics []metricDirective `json:"CloudWatchMetrics"`
}

// Line is k's EMF line for one event: dims gives each of k's dimension names its value (a
// missing one is "none"), values are k's metrics' values in order (a missing one is 0, as is
// one JSON cannot carry: NaN, ±Inf). The line is written out directly from the parts every line
// of k shares (fixedParts): the event worker writes lines for every batch it delivers, and
// encoding a map through reflection cost more than the rest of the delivery's own work.
func (k *Kind) Line(at time.Time, dims map[string]string, values ...float64) []byte {
	k.once.Do(k.fix)
	return k.AppendLine(make([]byte, 0, k.fixed.size), at, dims, values...)
}

// AppendLine appends k's line for one event (see Line) to line.
func (k *Kind) AppendLine(line []byte, at time.Time, dims map[string]string, values ...float64) []byte {
	return k.appendLine(line, at, dims, func(line []byte, i int) []byte {
		v := 0.0
		if i < len(values) {
			v = values[i]
		}
		return appendNumber(line, finite(v))
	})
}

// MaxSamples is the most values one metric of an EMF line may carry.
const MaxSamples = 100

// AppendSamples appends k's line for a group of events sharing dims (see Line): samples[i] are
// the values of k's metric i, written as a number when there is one and as an array (EMF's
// form for several samples in one line, at most MaxSamples) otherwise; a missing metric is 0.
// CloudWatch takes each value of an array as a sample of its own.
func (k *Kind) AppendSamples(line []byte, at time.Time, dims map[string]string, samples ...[]float64) []byte {
	return k.appendLine(line, at, dims, func(line []byte, i int) []byte {
		var vs []float64
		if i < len(samples) {
			vs = samples[i]
		}
		switch len(vs) {
		case 0:
			return appendNumber(line, 0)
		case 1:
			return appendNumber(line, finite(vs[0]))
		}
		line = append(line, '[')
		for j, v := range vs {
			if j > 0 {
				line = append(line, ',')
			}
			line = appendNumber(line, finite(v))
		}
		return append(line, ']')
	})
}

// appendLine appends k's line with each metric's value written by value(line, its index).
func (k *Kind) appendLine(line []byte, at time.Time, dims map[string]string, value func(line []byte, i int) []byte) []byte {
	k.once.Do(k.fix)
	f := &k.fixed
	line = append(line, `{"_aws":{"Timestamp":`...)
	line = strconv.AppendInt(line, at.UnixMilli(), 10)
	line = append(line, f.directive...)
	for i, key := range f.metricKeys {
		line = value(append(line, key...), i)
	}
	for i, key := range f.dimKeys {
		v := dims[f.dimNames[i]]
		if v == "" {
			v = "none"
		}
		line = appendString(append(line, key...), v)
	}
	return append(line, "}\n"...)
}

// finite is v, or 0 for a value JSON cannot carry (NaN, ±Inf).
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// fixedParts are the parts of a kind's lines that never change: the rest of its _aws member
// after the timestamp, and each metric's and dimension's key (`,"Name":`).
type fixedParts struct {
	directive           []byte
	metricKeys, dimKeys [][]byte
	dimNames            []string
	// size is a line's usual length, its buffer's first capacity.
	size int
}

func (k *Kind) fix() {
	specs := make([]metricSpec, len(k.Metrics))
	for i, m := range k.Metrics {
		specs[i] = metricSpec(m)
	}
	directive, _ := json.Marshal([]metricDirective{{Namespace: Namespace, Dimensions: k.Dimensions, Metrics: specs}}) // strings only: it cannot fail
	f := fixedParts{directive: append(append([]byte(`,"CloudWatchMetrics":`), directive...), '}'), dimNames: k.DimensionNames()}
	key := func(name string) []byte { return append(appendString([]byte{','}, name), ':') }
	for _, m := range k.Metrics {
		f.metricKeys = append(f.metricKeys, key(m.Name))
	}
	for _, d := range f.dimNames {
		f.dimKeys = append(f.dimKeys, key(d))
	}
	f.size = 64 + len(f.directive) + 32*(len(f.metricKeys)+len(f.dimKeys))
	k.fixed = f
}

// appendNumber appends v as a JSON number: a whole one (a count, milliseconds) as an integer.
func appendNumber(b []byte, v float64) []byte {
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return strconv.AppendInt(b, int64(v), 10)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// appendString appends s as a JSON string: as it is between quotes when it holds nothing JSON
// escapes, else as encoding/json writes it.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string: it cannot fail
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

// Emit writes k's line for one event (see Kind.Line). A write error is dropped: a metric never
// fails the work it counts.
func (e *Emitter) Emit(k *Kind, dims map[string]string, values ...float64) {
	if e == nil {
		e = Stdout
	}
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	line := k.Line(now(), dims, values...)
	e.mu.Lock()
	defer e.mu.Unlock()
	_, _ = e.W.Write(line)
}

// Batch is lines written together, in one write when flushed: a worker that emits a line per
// item of the batch it handles pays for one write, not one per item. Every line carries the
// time the batch was begun.
type Batch struct {
	e     *Emitter
	at    time.Time
	lines []byte
}

// buffers are the buffers of flushed batches, for the next ones.
var buffers = sync.Pool{New: func() any { return new([]byte) }}

// Batch begins a batch of lines of e, at the emitter's current time.
func (e *Emitter) Batch() *Batch {
	if e == nil {
		e = Stdout
	}
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	return &Batch{e: e, at: now(), lines: (*buffers.Get().(*[]byte))[:0]}
}

// At is the time the batch's lines carry.
func (b *Batch) At() time.Time { return b.at }

// Reserve makes room for n more lines of k, so that adding them copies nothing.
func (b *Batch) Reserve(k *Kind, n int) {
	k.once.Do(k.fix)
	b.lines = slices.Grow(b.lines, n*k.fixed.size)
}

// Emit adds k's line for one event (see Kind.Line).
func (b *Batch) Emit(k *Kind, dims map[string]string, values ...float64) {
	b.lines = k.AppendLine(b.lines, b.at, dims, values...)
}

// EmitUsage adds u's line (see Emitter.EmitUsage).
func (b *Batch) EmitUsage(u Usage) {
	if u.Account != "" {
		b.lines = appendUsageLine(b.lines, u)
	}
}

// EmitSamples adds k's line for a group of events sharing dims (see Kind.AppendSamples).
func (b *Batch) EmitSamples(k *Kind, dims map[string]string, samples ...[]float64) {
	b.lines = k.AppendSamples(b.lines, b.at, dims, samples...)
}

// Flush writes the lines added since the last flush (a write error is dropped, as Emit drops
// it); their buffer serves a later batch.
func (b *Batch) Flush() {
	if len(b.lines) > 0 {
		b.e.mu.Lock()
		_, _ = b.e.W.Write(b.lines)
		b.e.mu.Unlock()
	}
	buf := b.lines[:0]
	buffers.Put(&buf)
	b.lines = nil
}

// Record is one EMF line read back: its namespace, dimension sets, and each metric's unit, and
// the value of every metric and dimension it names. A metric written as an array of samples
// has their sum in Values (what CloudWatch's Sum statistic adds for the line) and each of them
// in Samples; one written as a number has that number in both.
type Record struct {
	Namespace  string
	Dimensions [][]string
	Units      map[string]Unit
	Values     map[string]float64
	Samples    map[string][]float64
	Dims       map[string]string
	Time       time.Time
}

// Parse reads one line as CloudWatch reads an EMF log event: a JSON object whose _aws member
// names exactly one metric directive, every metric and dimension it names present at the top
// level (metrics as numbers or arrays of at most MaxSamples numbers, dimensions as strings). A
// line that is not EMF is an error.
func Parse(line []byte) (Record, error) {
	var root map[string]json.RawMessage
	if err := json.Unmarshal(line, &root); err != nil {
		return Record{}, err
	}
	raw, ok := root["_aws"]
	if !ok {
		return Record{}, errors.New("no _aws member: not an EMF line")
	}
	var md metadata
	if err := json.Unmarshal(raw, &md); err != nil {
		return Record{}, fmt.Errorf("_aws: %w", err)
	}
	if len(md.CloudWatchMetrics) != 1 || md.Timestamp <= 0 {
		return Record{}, fmt.Errorf("_aws: %d metric directives, timestamp %d", len(md.CloudWatchMetrics), md.Timestamp)
	}
	d := md.CloudWatchMetrics[0]
	rec := Record{Namespace: d.Namespace, Dimensions: d.Dimensions, Units: map[string]Unit{}, Values: map[string]float64{},
		Samples: map[string][]float64{}, Dims: map[string]string{}, Time: time.UnixMilli(md.Timestamp)}
	for _, m := range d.Metrics {
		var vs []float64
		if raw := bytes.TrimSpace(root[m.Name]); len(raw) > 0 && raw[0] == '[' {
			if err := json.Unmarshal(raw, &vs); err != nil || len(vs) == 0 || len(vs) > MaxSamples {
				return Record{}, fmt.Errorf("metric %s: not an array of 1 to %d numbers", m.Name, MaxSamples)
			}
		} else {
			var v float64
			if err := json.Unmarshal(raw, &v); err != nil {
				return Record{}, fmt.Errorf("metric %s: %w", m.Name, err)
			}
			vs = []float64{v}
		}
		sum := 0.0
		for _, v := range vs {
			sum += v
		}
		rec.Units[m.Name], rec.Values[m.Name], rec.Samples[m.Name] = m.Unit, sum, vs
	}
	for _, set := range d.Dimensions {
		for _, name := range set {
			var v string
			if err := json.Unmarshal(root[name], &v); err != nil || v == "" {
				return Record{}, fmt.Errorf("dimension %s: not a string", name)
			}
			rec.Dims[name] = v
		}
	}
	return rec, nil
}

// Of returns the records of kind k in out (a capture of emitted lines), skipping lines that are
// not EMF or are of another kind.
func Of(k *Kind, out []byte) []Record {
	var recs []Record
	for _, line := range bytes.Split(out, []byte("\n")) {
		rec, err := Parse(line)
		if err != nil || rec.Namespace != Namespace {
			continue
		}
		if _, ok := rec.Units[k.Metrics[0].Name]; ok {
			recs = append(recs, rec)
		}
	}
	return recs
}

// Buffer collects emitted lines safely while emitters write to it (a test's capture).
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Bytes is a copy of everything written so far.
func (b *Buffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// String is everything written so far.
func (b *Buffer) String() string { return string(b.Bytes()) }
