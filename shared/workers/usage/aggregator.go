package usage

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"tunnelapi/shared/platform/metrics"
	"tunnelapi/shared/platform/store"
)

// Aggregator is the usage worker in process, for the local server and the test stacks: the
// emitters' output is teed into it (it is an io.Writer taking their lines, as the subscription
// filter takes them from a log group) and Flush writes what it summed, as one invocation of
// the worker writes its batch. Like the subscription, it takes a line as it is written and
// reads it later (at Flush, or once maxPending are waiting), off the path of the request that
// wrote it.
type Aggregator struct {
	DB *store.DB
	// Now is the clock a line is dated by; nil is time.Now (in AWS, the log event's timestamp).
	Now func() time.Time

	mu      sync.Mutex
	pending []pendingLine
	sums    Sums
}

// pendingLine is a usage line taken and not yet summed, with the time it was written.
type pendingLine struct {
	at   time.Time
	line []byte
}

// maxPending bounds the lines kept unread: past it, Write sums them.
const maxPending = 1024

// Write takes emitted lines, keeping the usage lines (metrics.ParseUsage reads them at Flush)
// and ignoring the rest. It never fails.
func (a *Aggregator) Write(p []byte) (int, error) {
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	at := now()
	a.mu.Lock()
	defer a.mu.Unlock()
	for line := range bytes.Lines(p) {
		if metrics.IsUsageLine(line) {
			a.pending = append(a.pending, pendingLine{at, bytes.Clone(line)})
		}
	}
	if len(a.pending) >= maxPending {
		a.sumPending()
	}
	return len(p), nil
}

// sumPending adds the pending lines to the sums; a.mu is held.
func (a *Aggregator) sumPending() {
	for _, p := range a.pending {
		if u, err := metrics.ParseUsage(p.line); err == nil {
			if a.sums == nil {
				a.sums = Sums{}
			}
			a.sums.Add(p.at, u)
		}
	}
	a.pending = nil
}

// Flush writes everything summed so far; what it could not write is kept for the next Flush.
func (a *Aggregator) Flush(ctx context.Context) error {
	a.mu.Lock()
	a.sumPending()
	s := a.sums
	a.sums = nil
	a.mu.Unlock()
	if len(s) == 0 {
		return nil
	}
	var id [12]byte
	_, _ = rand.Read(id[:])
	if err := Write(ctx, a.DB, "local-"+hex.EncodeToString(id[:]), s); err != nil {
		a.mu.Lock()
		if a.sums == nil {
			a.sums = Sums{}
		}
		a.sums.Merge(s)
		a.mu.Unlock()
		return err
	}
	return nil
}

// LocalFlushEvery is how often the local server's aggregator flushes: about as late as
// CloudWatch Logs delivers a subscription's lines.
const LocalFlushEvery = 5 * time.Second

// Run flushes every interval until ctx ends, then once more.
func (a *Aggregator) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			_ = a.Flush(context.WithoutCancel(ctx))
			return
		case <-t.C:
			_ = a.Flush(ctx)
		}
	}
}
