package resource

import (
	"context"
	"reflect"
	"sync"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/store"
)

// Facts is a process's memory of items of other families that a create derives its answer
// from (the guard naming which reservation holds a name, the principal a secret is for), so
// that a create in a warm process reads nothing before its one transaction. It is never trusted:
// every fact a mutation uses is a condition of its transaction (store.Holds on exactly the
// attributes kept), so a stale fact fails the commit instead of producing a wrong answer; the
// item as DynamoDB returns it then (ALL_OLD) replaces the fact and the operation is built again.
// An item never seen is assumed absent on the same terms. A create refused with a 4xx while it
// used facts reads them before answering (Facts.Assume), so no refusal rests on a stale or
// assumed fact.
type Facts struct {
	attrs []string
	mu    sync.Mutex
	known map[store.Key]store.Item
}

// maxFacts bounds the items a Facts keeps; past it, it starts afresh.
const maxFacts = 10000

// NewFacts returns an empty memory of the attributes attrs of items.
func NewFacts(attrs ...string) *Facts { return &Facts{attrs: attrs} }

// get returns what f holds of the item at k (nil: absent, or never seen).
func (f *Facts) get(k store.Key) store.Item {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.known[k]
}

// learn replaces what f holds of the item at k with it (nil: absent), kept to f's attributes.
func (f *Facts) learn(k store.Key, it store.Item) {
	var kept store.Item
	if it != nil {
		kept = keep(it, f.attrs)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if kept == nil {
		delete(f.known, k)
		return
	}
	if f.known == nil || len(f.known) >= maxFacts {
		f.known = make(map[store.Key]store.Item)
	}
	f.known[k] = kept
}

// assumption is a fact one mutation used: which memory, of which item, and what it was.
type assumption struct {
	facts *Facts
	key   store.Key
	seen  store.Item
}

// Assume returns what f holds of the items at keys (nil for items it knows absent or has not
// seen), adding to m's transaction the condition that each is still exactly that. When one is
// not, the commit fails, f learns the item as it is and the whole operation is built again; when
// the mutation is refused with a client error, the items are read (with the caller's own) before
// the refusal is answered, and a fact that was wrong makes the operation run again instead.
// Keys repeated, or already checked in m, are checked once; a key another write of m touches is
// not checked at all (a transaction writes an item once), so that write's condition must cover
// the fact.
func (f *Facts) Assume(m *Mutation, keys ...store.Key) []store.Item {
	out := make([]store.Item, len(keys))
	for i, k := range keys {
		out[i] = f.get(k)
		label := "fact:" + k.PK + "|" + k.SK
		if _, done := m.assumed[label]; done || m.Touches(k) {
			continue
		}
		if m.assumed == nil {
			m.assumed = map[string]assumption{}
		}
		m.assumed[label] = assumption{facts: f, key: k, seen: out[i]}
		m.Check(label, k, store.Holds(out[i], f.attrs...))
		m.KeepOld(label)
		m.RetryOn(label)
	}
	return out
}

// AssumeWritten is Assume for an item m also writes, under label, in a write that must hold the
// returned condition (store.Holds of what f knows, on f's attributes): a transaction writes an
// item once, so the write carries the fact's check. When that write fails, f learns the item as
// it was (ALL_OLD) and the operation is built again unless a refusal of the write explains the
// failure; a client error built on the fact is confirmed by a read first, as for Assume.
func (f *Facts) AssumeWritten(m *Mutation, label string, key store.Key) (store.Item, expression.ConditionBuilder) {
	seen := f.get(key)
	if m.assumed == nil {
		m.assumed = map[string]assumption{}
	}
	m.assumed[label] = assumption{facts: f, key: key, seen: seen}
	m.KeepOld(label)
	m.RetryOn(label)
	return seen, store.Holds(seen, f.attrs...)
}

// On returns f as a reader of items (GetMany, the shape of the readers other families look
// items up through) whose answers are assumptions of m (Assume).
func (f *Facts) On(m *Mutation) Assumed { return Assumed{f: f, m: m} }

// Assumed reads items as assumptions of one mutation (Facts.On).
type Assumed struct {
	f *Facts
	m *Mutation
}

// GetMany returns Facts.Assume of keys; it never fails.
func (a Assumed) GetMany(ctx context.Context, keys ...store.Key) ([]store.Item, error) {
	return a.f.Assume(a.m, keys...), nil
}

// learnFailed replaces the facts whose check failed in c with the items DynamoDB returned.
func (m *Mutation) learnFailed(c *store.CanceledError) {
	for _, l := range c.Failed {
		if a, ok := m.assumed[l]; ok {
			a.facts.learn(a.key, c.Old[l])
		}
	}
}

// confirm is run when building m failed with err: a client error that may rest on the facts m
// assumed is answered only once a read in this operation (with the caller's own items, so
// nothing is told an unverified caller) shows them as m saw them; when one was not, errRetry
// builds the operation again on what the read found. Facts the operation already read
// (withReads) are not read twice.
func (m *Mutation) confirm(ctx context.Context, err error) error {
	if _, client := api.AsError(err); !client || len(m.assumed) == 0 {
		return err
	}
	done, _ := ctx.Value(readsKey{}).(*reads)
	var as []assumption
	var keys []store.Key
	for _, a := range m.assumed {
		if done != nil {
			if now, ok := done.get(a.key); ok && reflect.DeepEqual(now, a.seen) {
				continue // read in this operation, and used as read
			}
		}
		as = append(as, a)
		keys = append(keys, a.key)
	}
	if len(keys) == 0 {
		return err
	}
	items, rerr := m.kit.Read(ctx, m.r, keys...)
	if rerr != nil {
		return rerr
	}
	stale := false
	for i, a := range as {
		a.facts.learn(a.key, items[i])
		var now store.Item
		if items[i] != nil {
			now = keep(items[i], a.facts.attrs)
		}
		if done != nil {
			done.put(a.key, now)
		}
		if !reflect.DeepEqual(now, a.seen) {
			stale = true
		}
	}
	if stale {
		return errRetry
	}
	return err
}

// reads are the facts one operation read to confirm a refusal (kept to their facts'
// attributes; nil for absent items), so that its retries, which run one after another, do not
// read them again.
type reads struct {
	items map[store.Key]store.Item
}

type readsKey struct{}

// withReads returns ctx carrying an empty record of an operation's confirming reads.
func withReads(ctx context.Context) context.Context {
	return context.WithValue(ctx, readsKey{}, &reads{items: map[store.Key]store.Item{}})
}

func (r *reads) get(k store.Key) (store.Item, bool) {
	it, ok := r.items[k]
	return it, ok
}

func (r *reads) put(k store.Key, it store.Item) { r.items[k] = it }

// keep is it with only attrs.
func keep(it store.Item, attrs []string) store.Item {
	out := store.Item{}
	for _, a := range attrs {
		if v, ok := it[a]; ok {
			out[a] = v
		}
	}
	return out
}
