package resource

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"tunnelapi/shared/platform/api"
)

// versioned is one item under optimistic concurrency whose every write takes latency: a write
// fails (errRetry) when another committed between its read and its commit.
type versioned struct {
	mu      sync.Mutex
	version int
	latency time.Duration
}

func (v *versioned) write() error {
	v.mu.Lock()
	read := v.version
	v.mu.Unlock()
	time.Sleep(v.latency)
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.version != read {
		return errRetry
	}
	v.version++
	return nil
}

// TestRetryingUnderContention: writers racing on one item all commit, whether a write takes a
// millisecond or, as on a loaded machine, a hundred; the pauses grow with the latency, so the
// outcome does not depend on the machine's speed (fixed pauses of a few milliseconds ran many
// of the writers out of attempts at the longer latencies).
//
// The writers run on synctest's clock: a write takes exactly its latency and a pause exactly
// what retrying drew, so a loaded machine's late wake-ups (a sleep that runs long stretches the
// attempt, while the pauses stay capped at maxPause) do not change the race. At 100 ms the
// writers are 40: 60 writes of 100 ms, one after another, fill most of the span that
// maxAttempts attempts cover with pauses capped at maxPause, so even on synctest's clock a race
// now and then left one writer out of attempts; 40 leave room.
func TestRetryingUnderContention(t *testing.T) {
	for _, c := range []struct {
		latency time.Duration
		writers int
	}{{time.Millisecond, 60}, {20 * time.Millisecond, 60}, {100 * time.Millisecond, 40}} {
		t.Run(fmt.Sprint(c.latency), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				item := &versioned{latency: c.latency}
				writers := c.writers
				errs := make(chan error, writers)
				var wg sync.WaitGroup
				for range writers {
					wg.Go(func() { errs <- retrying(context.Background(), item.write) })
				}
				wg.Wait()
				close(errs)
				failed := 0
				for err := range errs {
					if err != nil {
						failed++
					}
				}
				if failed > 0 || item.version != writers {
					t.Fatalf("%d of %d writers failed; %d writes committed", failed, writers, item.version)
				}
			})
		})
	}
}

// TestRetryingBounded: a write that always loses is tried at most maxAttempts times and is a
// 429; a request whose deadline comes first stops before that, with the same 429.
func TestRetryingBounded(t *testing.T) {
	attempts := 0
	err := retrying(context.Background(), func() error { attempts++; return errRetry })
	var e *api.Error
	if !errors.As(err, &e) || e.Status != 429 || attempts != maxAttempts {
		// An instant loser's pauses stay within a millisecond: the count, not the budget, ends it.
		t.Fatalf("%d attempts, %v", attempts, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	attempts = 0
	err = retrying(ctx, func() error { attempts++; time.Sleep(20 * time.Millisecond); return errRetry })
	if !errors.As(err, &e) || e.Status != 429 || attempts >= maxAttempts {
		t.Fatalf("with a deadline: %d attempts, %v", attempts, err)
	}
}
