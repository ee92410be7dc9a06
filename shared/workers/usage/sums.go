package usage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/metrics"
	"tunnelapi/shared/platform/store"
)

// Attribute names of a day's usage item (store.UsageKey). Requests are counted in one attribute
// per status class and family: "<class> <family>", as "2xx api_keys".
const (
	AttrMutations    = "m"
	AttrEvents       = "e"
	AttrCertificates = "c"
	AttrItems        = "n" // resources created less resources deleted that day
	AttrReadUnits    = "r"
	AttrWriteUnits   = "w"
)

// DayFormat is how a day is written: its UTC date.
const DayFormat = "2006-01-02"

// Sums are usage lines summed per account and UTC day.
type Sums map[accountDay]*sum

type accountDay struct{ account, day string }

type sum struct {
	requests                               map[string]int64 // by attribute name
	mutations, events, certificates, items int64
	readUnits, writeUnits                  float64
}

// Class is the status class of an HTTP status: "2xx", "4xx", "5xx".
func Class(status int) string { return strconv.Itoa(status/100) + "xx" }

// Add counts the line u, written at.
func (s Sums) Add(at time.Time, u metrics.Usage) {
	k := accountDay{u.Account, at.UTC().Format(DayFormat)}
	m := s[k]
	if m == nil {
		m = &sum{requests: map[string]int64{}}
		s[k] = m
	}
	if u.Family != "" && u.Status != 0 {
		m.requests[Class(u.Status)+" "+u.Family]++
	}
	m.mutations += int64(u.Mutation)
	m.events += int64(u.Events)
	m.certificates += int64(u.Certificates)
	m.items += int64(u.Items)
	m.readUnits += u.ReadUnits
	m.writeUnits += u.WriteUnits
}

// Merge adds every sum of o to s.
func (s Sums) Merge(o Sums) {
	for k, v := range o {
		m := s[k]
		if m == nil {
			s[k] = v
			continue
		}
		for a, n := range v.requests {
			m.requests[a] += n
		}
		m.mutations += v.mutations
		m.events += v.events
		m.certificates += v.certificates
		m.items += v.items
		m.readUnits += v.readUnits
		m.writeUnits += v.writeUnits
	}
}

// update is the sum as the additions to its day's item.
func (m *sum) update() expression.UpdateBuilder {
	var u expression.UpdateBuilder
	add := func(attr string, v any) { u = u.Add(expression.Name(attr), expression.Value(v)) }
	for _, a := range slices.Sorted(maps.Keys(m.requests)) {
		add(a, m.requests[a])
	}
	for _, f := range []struct {
		attr string
		n    int64
	}{{AttrMutations, m.mutations}, {AttrEvents, m.events}, {AttrCertificates, m.certificates}, {AttrItems, m.items}} {
		if f.n != 0 {
			add(f.attr, f.n)
		}
	}
	if m.readUnits != 0 {
		add(AttrReadUnits, m.readUnits)
	}
	if m.writeUnits != 0 {
		add(AttrWriteUnits, m.writeUnits)
	}
	return u
}

// batchChunk is how many days one transaction adds to: with a check of each day's account and
// the batch's marker, within DynamoDB's limit on a transaction's items.
const batchChunk = (store.MaxTxItems - 1) / 2

// BatchRetention is how long a batch's marker stays: longer than CloudWatch Logs retries a
// delivery.
const BatchRetention = 24 * time.Hour

// batchConsumer names the markers' partition (store.StreamCheckpointKey): which batches of
// lines the usage worker has added.
const batchConsumer = "usage"

type marker struct {
	store.Key
	TTL int64 `dynamodbav:"ttl"`
}

// Write adds the sums to their days' items, in transactions of at most batchChunk days, each
// with a marker of batch (an id the same lines always get) that makes it apply once: a chunk
// whose marker exists is already counted and is skipped. A day is added only while its tenant
// exists and is not being deleted (a check in the same transaction), so that lines arriving
// after a tenant's erasure began never write an item the erasure would leave behind; such
// days are dropped and the rest of their chunk written.
//
// A chunk that loses to a concurrent transaction (another batch adding to the same day, the
// operator changing the tenant) or whose attempt may or may not have applied (a dependency
// failure) is tried again (writeRetrying); its marker keeps an attempt after one that applied
// from counting twice.
func Write(ctx context.Context, db *store.DB, batch string, s Sums) error {
	keys := make([]accountDay, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b accountDay) int {
		return strings.Compare(a.account+" "+a.day, b.account+" "+b.day)
	})
	for i := 0; i < len(keys); i += batchChunk {
		mk := marker{Key: store.StreamCheckpointKey(batchConsumer, fmt.Sprintf("%s#%d", batch, i/batchChunk)),
			TTL: time.Now().Add(BatchRetention).Unix()}
		if err := writeRetrying(ctx, db, keys[i:min(i+batchChunk, len(keys))], s, mk); err != nil {
			return err
		}
	}
	return nil
}

// How a chunk is tried again: after a wait drawn between half and all of a backoff that starts
// at firstBackoff and doubles up to maxBackoff, at most maxAttempts times in all, and only while
// the context's deadline leaves retryMargin after the wait (the Lambda answers within its
// timeout, and a batch it could not write is retried by Lambda, then sent to the function's
// on-failure destination).
const (
	maxAttempts  = 10
	firstBackoff = 25 * time.Millisecond
	maxBackoff   = time.Second
	retryMargin  = 2 * time.Second
)

// writeRetrying is writeChunk tried again while it fails in a way another attempt may not
// (retryable), with bounded backoff.
func writeRetrying(ctx context.Context, db *store.DB, keys []accountDay, s Sums, mk marker) error {
	backoff := firstBackoff
	for attempt := 1; ; attempt++ {
		err := writeChunk(ctx, db, keys, s, mk)
		if err == nil || !retryable(err) || attempt == maxAttempts {
			return err
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		if d, ok := ctx.Deadline(); ok && time.Until(d) < wait+retryMargin {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// retryable reports whether a chunk's failure may pass on another attempt: a transaction that
// lost to a concurrent one, or a dependency that failed (the attempt may have applied, which
// the marker then shows).
func retryable(err error) bool {
	var dep *store.DependencyError
	return store.IsConflict(err) || errors.As(err, &dep)
}

// live is the condition on a tenant's entry (store.TenantKey) that its usage may be added: it
// exists and is not being deleted. The entry is written with the account and changed with its
// status in the same transactions (principals.Bootstrap, operator.Erase and SetStatus), and no
// tenant's request touches it, so checking it, rather than the account item every tenant
// write checks, keeps the usage worker's transactions from conflicting with the tenants'.
func live() expression.ConditionBuilder {
	status := expression.Name("status")
	return expression.And(store.Exists(), expression.Or(expression.AttributeNotExists(status),
		status.NotEqual(expression.Value(auth.StatusDeleting))))
}

// writeChunk adds the days of keys in one transaction with mk, dropping the days of tenants
// gone or being deleted.
func writeChunk(ctx context.Context, db *store.DB, keys []accountDay, s Sums, mk marker) error {
	for len(keys) > 0 {
		tx := &store.Tx{}
		for _, k := range keys {
			if label := "tenant " + k.account; !tx.Touches(store.TenantKey(k.account)) {
				tx.Check(label, store.TenantKey(k.account), live())
			}
			tx.Update("usage "+k.account+" "+k.day, store.UsageKey(k.account, k.day), s[k].update())
		}
		tx.Put("batch", mk, store.Absent())
		err := db.Commit(ctx, tx)
		var c *store.CanceledError
		switch {
		case err == nil || store.ConditionFailed(err, "batch"):
			return nil
		case !errors.As(err, &c) || len(c.Failed) == 0:
			return err
		}
		n := len(keys)
		keys = slices.DeleteFunc(keys, func(k accountDay) bool { return slices.Contains(c.Failed, "tenant "+k.account) })
		if len(keys) == n {
			return err
		}
	}
	return nil
}
