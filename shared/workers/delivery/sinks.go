package delivery

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"tunnelapi/shared/families/eventsub"
)

// Record is one event on its way to one destination.
type Record struct {
	EventID   string
	EventType string
	Time      time.Time
	// Data is the delivered event envelope (package audit) as JSON.
	Data []byte
}

// Destination is a destination as the worker uses it: its target and opened secret.
type Destination struct {
	ID, AccountID string
	Version       int64
	Target        eventsub.Target
	Secret        string

	mu sync.Mutex
	// client caches the SDK client of an AWS target for this version of the destination.
	client any
}

// cachedClient returns the destination's client, building it on first use.
func (d *Destination) cachedClient(build func() (any, error)) (any, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.client == nil {
		c, err := build()
		if err != nil {
			return nil, err
		}
		d.client = c
	}
	return d.client, nil
}

// Sink delivers a batch of records to one destination. It returns one error per record, nil
// for each the sink accepted, so a partial failure retries only what failed.
type Sink interface {
	Deliver(ctx context.Context, d *Destination, recs []Record) []error
}

// every returns err for each of n records.
func every(n int, err error) []error {
	out := make([]error, n)
	for i := range out {
		out[i] = err
	}
	return out
}

// chunks splits recs into runs of at most maxCount records and maxBytes of data (each record
// costs overhead bytes more), the per-call limits of a sink. A record larger than maxBytes on
// its own travels alone; the sink refuses it and the refusal is its reason in the DLQ.
func chunks(recs []Record, maxCount, maxBytes, overhead int) [][]int {
	var out [][]int
	var cur []int
	size := 0
	for i, r := range recs {
		n := len(r.Data) + overhead
		if len(cur) > 0 && (len(cur) == maxCount || size+n > maxBytes) {
			out = append(out, cur)
			cur, size = nil, 0
		}
		if cur == nil {
			cur = make([]int, 0, min(maxCount, len(recs)-i))
		}
		cur = append(cur, i)
		size += n
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// deliverChunked runs send over each chunk and assembles the per-record errors.
func deliverChunked(recs []Record, maxCount, maxBytes, overhead int, send func(idx []int) []error) []error {
	out := make([]error, len(recs))
	for _, idx := range chunks(recs, maxCount, maxBytes, overhead) {
		errs := send(idx)
		for j, i := range idx {
			out[i] = errs[j]
		}
	}
	return out
}

// errNoSecret is a destination whose secret did not open (or is missing).
var errNoSecret = errors.New("the destination's secret is not available")

// httpStatusError is a sink's refusal over HTTP, kept short for the DLQ reason.
func httpStatusError(sink string, status int, body []byte) error {
	if len(body) > 256 {
		body = body[:256]
	}
	return fmt.Errorf("%s: HTTP %d: %s", sink, status, body)
}
