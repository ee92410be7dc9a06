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

// deliverChunked runs send over runs of recs of at most maxCount records and maxBytes of data
// (each record costs overhead bytes more), the per-call limits of a sink, and assembles the
// per-record errors. A record larger than maxBytes on its own travels alone; the sink refuses it
// and the refusal is its reason in the DLQ. A batch that fits one call, the common case, is
// sent as it is and its errors returned as send returned them.
func deliverChunked(recs []Record, maxCount, maxBytes, overhead int, send func(chunk []Record) []error) []error {
	var out []error
	start, size := 0, 0
	for i := 0; i <= len(recs); i++ {
		n := 0
		if i < len(recs) {
			n = len(recs[i].Data) + overhead
		}
		if i > start && (i == len(recs) || i-start == maxCount || size+n > maxBytes) {
			errs := send(recs[start:i:i])
			if start == 0 && i == len(recs) {
				return errs
			}
			if out == nil {
				out = make([]error, len(recs))
			}
			copy(out[start:i], errs)
			start, size = i, 0
		}
		size += n
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
