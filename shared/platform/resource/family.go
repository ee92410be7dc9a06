package resource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/listfilter"
	"tunnelapi/shared/platform/store"
)

// labelItem labels the write of the resource item itself in a mutation.
const labelItem = "item"

// Family serves the operations (Descriptor.Operations) of one resource kind: the generic shape every family shares,
// with the family's own rules supplied by its Hooks. T is the stored item type; P is *T and
// embeds store.Meta. Hooks see the item and the mutation being built; they decode, validate and
// add any further writes (token items, reference checks, guards).
//
// The operations themselves are written once over store.Resource (core): only the small
// adapters from P to store.Resource are compiled per family, so a function serving several
// families of a package does not carry a copy of every operation for each.
//
// A request's authentication state is its auth.Session (auth.Of), which alone changes it: Kit's
// reads call its Resolve, ReadKeys and VerifyRead; a Mutation holds it and calls Refresh (begin),
// Assumed (Mutation.Account), Guard and Committed (commit).
//
// DynamoDB calls per request (the conformance suite asserts them for every family with
// testkit.RoundTrips): get 1 (BatchGetItem: the caller's token and account with the resource,
// as no auth cache outlives a request), create 1 (TransactWriteItems), update 2 and delete 2
// (read, transaction), list 2 issued concurrently (the caller's items and the page's Query);
// a Joiner's get and list add the query of what they join, concurrent with them. A create
// that derives from another item (Facts) reads it the first time in a process; one that
// prepares a secret (a Preparer of a family whose Binding keeps secrets) reads the caller's
// items first. No SQS call on any request.
//
// Races answer truthfully: a mutation whose target changed or vanished under it is read and
// built again (retrying), so it ends as the fresh read decides (a 404 for a deleted target),
// never as a failed guard of some other write; only the caller's own token or account failing
// its guard is an authentication error.
type Family[T any, P interface {
	*T
	store.Resource
}] struct {
	*Descriptor
	Kit   *Kit
	Hooks Hooks[P]
}

// core is a family's operations over store.Resource, calling the family's hooks through
// erasedHooks.
type core struct {
	*Descriptor
	kit   *Kit
	hooks erasedHooks
	// secrets are what the hooks seal and open (Binding.Keeping).
	secrets Secrets
}

// core is f's operations, calling f.Hooks.
func (f *Family[T, P]) core() *core {
	return &core{Descriptor: f.Descriptor, kit: f.Kit, hooks: eraseHooks[T](f.Hooks)}
}

func (c *core) createOp(ctx context.Context, r *api.Request) (_ any, err error) {
	defer derrors.Wrap(&err, "resource.create(%s)", c.EventKind)
	ctx = withReads(ctx) // a refusal resting on facts (Facts) reads them once, whatever the retries
	session := auth.Of(r)
	caller, err := session.Resolve(ctx)
	if err != nil {
		return nil, err
	}
	idem, err := idempotency(r, caller)
	if err != nil {
		return nil, err
	}
	// The id is chosen once, so a retried transaction and anything Prepare bound to the id (a
	// signature, the sealing context of a private key) still agree.
	now := time.Now().UTC()
	prepared := c.hooks.New()
	meta := prepared.Base()
	meta.ID = ids.NewAt(c.Prefix, now)
	meta.AccountID = caller.AccountID
	meta.Key = store.ResourceKey(caller.AccountID, meta.ID)
	meta.CreatedAt = now.Unix()
	meta.Version = 1
	if c.hooks.has(preparer) {
		// A family that keeps secrets prepares at a cost (a key pair generated, KMS, a
		// signature): only for a caller verified, checked against the account's IP restriction
		// and admitted by the rate limit, at the price of that read (auth.Session.VerifyRead)
		// before the transaction. Other families' Prepare only checks the body.
		if c.secrets != 0 && !session.Verified() {
			if _, err := c.kit.Read(ctx, r); err != nil {
				return nil, err
			}
		}
		if err := c.hooks.Prepare(ctx, r, prepared); err != nil {
			return nil, err
		}
	}
	// A create that touches a shared item (a parent's counter) can lose to a concurrent
	// transaction; it is retried like an update.
	var resp any
	err = retrying(ctx, func() error {
		resp, err = c.createAttempt(ctx, r, prepared, idem)
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// createAttempt is one transaction attempt of a create. When it fails and the request carries an
// idempotency key, it may repeat a create that committed: the answer is then that create's.
func (c *core) createAttempt(ctx context.Context, r *api.Request, prepared store.Resource, idem *idempotentCreate) (any, error) {
	resp, err := c.commitCreate(ctx, r, prepared, idem)
	if err == nil || idem == nil {
		return resp, err
	}
	// A create that did not commit may repeat one that did (and failed because of it: its
	// key's record, a name now taken): answer as that one did. Only the failure path reads the
	// record.
	body, found, lerr := idem.replay(ctx, c.kit, r)
	switch {
	case found:
		return body, nil
	case lerr != nil:
		if _, ok := api.AsError(lerr); ok {
			return nil, lerr
		}
	case store.ConditionFailed(err, labelIdempotency):
		return nil, errRetry // the record expired meanwhile: the key is free again
	}
	return nil, err
}

// commitCreate builds a create's transaction from a copy of the prepared item and commits it.
func (c *core) commitCreate(ctx context.Context, r *api.Request, prepared store.Resource, idem *idempotentCreate) (any, error) {
	m, err := c.kit.begin(ctx, r, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.buildCreate(ctx, r, m, prepared, idem)
	if err != nil {
		return nil, m.confirm(ctx, err)
	}
	if err := m.commit(); err != nil {
		return nil, err
	}
	return resp, nil
}

// buildCreate adds a create's writes to m, top to bottom: the item from a copy of the prepared
// one and the hooks' writes, the idempotency record, the event. The item is rendered once: the
// response (unless the hooks return their own) and the event show the same rendering.
func (c *core) buildCreate(ctx context.Context, r *api.Request, m *Mutation, prepared store.Resource, idem *idempotentCreate) (any, error) {
	it := c.hooks.Clone(prepared)
	own, err := c.hooks.Create(ctx, r, it, m)
	if err != nil {
		return nil, err
	}
	view := c.hooks.Render(r, it)
	resp := own
	if own == nil {
		resp = view
	}
	m.Put(labelItem, it, store.Absent())
	if idem != nil {
		// The stored response is the one sent, byte for byte, to this caller and to every
		// retry. A create's own response differs from Render only to show a secret once: that
		// one is sealed. Not HTML-escaped, which would triple the size of a page in a policy
		// (the answer is escaped as every answer is when sent).
		body, err := api.MarshalUnescaped(resp)
		if err != nil {
			return nil, fmt.Errorf("marshal the create response: %w", err)
		}
		if err := idem.record(ctx, c.kit, m, prepared.Base().ID, body, own != nil, time.Now()); err != nil {
			return nil, err
		}
		resp = json.RawMessage(body)
	}
	return resp, m.Event(audit.Type(c.EventKind, "created"), view)
}

func (c *core) get(ctx context.Context, r *api.Request) (_ any, err error) {
	// The operation is named only on failure: boxing its arguments for a deferred Wrap would
	// cost every successful GET two allocations.
	defer func() {
		if err != nil {
			derrors.Wrap(&err, "resource.get(%s %s)", c.EventKind, r.PathValue("id"))
		}
	}()
	it := c.hooks.New()
	joined, err := c.join(ctx, r, func() error { return c.kit.Get(ctx, r, c.Prefix, r.PathValue("id"), it) })
	if err != nil {
		return nil, err
	}
	return c.render(r, it, joined), nil
}

// join runs read and, for hooks that join another collection (Joiner), the query of that
// collection in parallel with it; it returns what the query read once read succeeded (which
// verifies the caller).
func (c *core) join(ctx context.Context, r *api.Request, read func() error) (joined []store.Item, err error) {
	if !c.hooks.has(joiner) {
		return nil, read()
	}
	caller, err := auth.Of(r).Resolve(ctx)
	if err != nil {
		return nil, err
	}
	prefix, attrs := c.hooks.Joined()
	type result struct {
		items []store.Item
		err   error
	}
	ch := make(chan result, 1)
	go func() {
		items, err := c.kit.DB.QueryAll(ctx, store.Collection(caller.AccountID, prefix), attrs...)
		ch <- result{items, err}
	}()
	rerr := read()
	res := <-ch
	if rerr != nil {
		return nil, rerr
	}
	return res.items, res.err
}

// render is the item as get and list answer it: joined with the items join read, for a Joiner.
func (c *core) render(r *api.Request, it store.Resource, joined []store.Item) any {
	if c.hooks.has(joiner) {
		return c.hooks.RenderJoined(r, it, joined)
	}
	return c.hooks.Render(r, it)
}

// maxFilterScan bounds how many items one filtered list page examines, so a filter that
// matches rarely costs a bounded number of queries; the page then ends early with a
// next_page_uri that resumes after the last item examined.
const maxFilterScan = 1000

func (c *core) list(ctx context.Context, r *api.Request) (_ any, err error) {
	defer derrors.Wrap(&err, "resource.list(%s)", c.EventKind)
	p, err := api.ParsePage(r, c.Prefix, c.Filter)
	if err != nil {
		return nil, err
	}
	var flt *listfilter.Filter
	if p.Filter != "" {
		if flt, err = listfilter.Compile(p.Filter); err != nil {
			return nil, api.BadRequest(api.CodeBadFilter, "filter", "invalid filter: %s", err.Error())
		}
	}
	var items []store.Item
	var more bool
	joined, err := c.join(ctx, r, func() (err error) {
		items, more, err = c.kit.Page(ctx, r, c.Prefix, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, len(items))
	last, examined, size, full := "", 0, 0, false
	for {
		for i, raw := range items {
			it := c.hooks.New()
			if err := store.Decode(raw, it); err != nil {
				return nil, err
			}
			v := c.render(r, it, joined)
			if flt != nil {
				if ok, err := flt.Match(v); err != nil {
					return nil, err
				} else if !ok {
					examined++
					last = it.Base().ID
					continue
				}
			}
			b, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("measure a list item: %w", err)
			}
			if len(out) > 0 && size+len(b) > api.MaxPageBytes {
				// The page is full by size: the next one starts at this item.
				more, full = true, true
				break
			}
			size += len(b)
			examined++
			last = it.Base().ID
			out = append(out, v)
			if len(out) == p.Limit {
				more = more || i < len(items)-1
				break
			}
		}
		// A page short of its limit and of its bytes continues: the filter left items out, or
		// DynamoDB's answer ended at 1 MB (Kit.Page).
		if full || len(out) == p.Limit || !more || examined >= maxFilterScan {
			break
		}
		if items, more, err = c.kit.DB.PageQueryStart(ctx, store.Collection(r.Caller().AccountID, c.Prefix), last, p.Limit); err != nil {
			return nil, err
		}
	}
	return api.List{Key: c.ListKey, Items: out, URI: r.URI(c.Path), NextPage: api.NextPageURI(r, c.Path, p, last, more)}, nil
}

func (c *core) updateOp(ctx context.Context, r *api.Request) (_ any, err error) {
	defer derrors.Wrap(&err, "resource.update(%s %s)", c.EventKind, r.PathValue("id"))
	var ahead []store.Key
	if c.hooks.has(updateReader) {
		caller, err := auth.Of(r).Resolve(ctx)
		if err != nil {
			return nil, err
		}
		ahead = c.hooks.UpdateReads(r, caller.AccountID)
	}
	// The response is the item as the updated event shows it, rendered once.
	_, view, err := c.modify(ctx, r, r.PathValue("id"), nil, ahead, func(it store.Resource, m *Mutation) error {
		return c.hooks.Update(ctx, r, it, m)
	}, nil)
	if err != nil {
		return nil, err
	}
	return view, nil
}

// Modify is a read-modify-write of the item id under optimistic concurrency, recording the
// kind's updated event. Sub-resources kept inside their parent (a subscription's sources) use
// it as their update path. notFound replaces the 404 for an absent item when set; change
// applies the modification and adds any further writes to m.
func (f *Family[T, P]) Modify(ctx context.Context, r *api.Request, id string, notFound error, change func(it P, m *Mutation) error) (_ P, err error) {
	defer derrors.Wrap(&err, "resource.Modify(%s %s)", f.EventKind, id)
	it, _, err := f.core().modify(ctx, r, id, notFound, nil, func(it store.Resource, m *Mutation) error { return change(it.(P), m) }, nil)
	p, _ := it.(P)
	return p, err
}

// ModifyAs is Modify recording the event that event returns for the changed item instead of
// the kind's updated event: a sub-resource stored inside its parent (an HTTPS edge's routes)
// records its own created, updated and deleted events.
func (f *Family[T, P]) ModifyAs(ctx context.Context, r *api.Request, id string, notFound error, change func(it P, m *Mutation) error, event func(it P) (eventType string, object any)) (_ P, err error) {
	defer derrors.Wrap(&err, "resource.ModifyAs(%s %s)", f.EventKind, id)
	it, _, err := f.core().modify(ctx, r, id, notFound, nil, func(it store.Resource, m *Mutation) error { return change(it.(P), m) },
		func(it store.Resource) (string, any) { return event(it.(P)) })
	p, _ := it.(P)
	return p, err
}

// modify is Modify reading the keys ahead with the item (for change, through Mutation.GetMany),
// recording the event event returns (the kind's updated event when nil). It returns the item and
// the object its event shows.
func (c *core) modify(ctx context.Context, r *api.Request, id string, notFound error, ahead []store.Key, change func(it store.Resource, m *Mutation) error, event func(it store.Resource) (string, any)) (it store.Resource, object any, err error) {
	if event == nil {
		event = func(it store.Resource) (string, any) {
			return audit.Type(c.EventKind, "updated"), c.hooks.Render(r, it)
		}
	}
	err = retrying(ctx, func() error {
		it, object, err = c.modifyAttempt(ctx, r, id, notFound, ahead, change, event)
		return err
	})
	return it, object, err
}

// modifyAttempt is one read-modify-write attempt, top to bottom: the item read (with the keys
// ahead and the caller's items), changed, its version bumped, its event recorded, committed.
func (c *core) modifyAttempt(ctx context.Context, r *api.Request, id string, notFound error, ahead []store.Key, change func(it store.Resource, m *Mutation) error, event func(it store.Resource) (string, any)) (store.Resource, any, error) {
	it := c.hooks.New()
	read, err := c.kit.getWith(ctx, r, c.Prefix, id, it, ahead)
	if err != nil {
		if errors.Is(err, api.ErrNotFound) && notFound != nil {
			return it, nil, notFound
		}
		return it, nil, err
	}
	m, err := c.kit.begin(ctx, r, read)
	if err != nil {
		return it, nil, err
	}
	meta := it.Base()
	prev := meta.Version
	if err := change(it, m); err != nil {
		return it, nil, m.confirm(ctx, err)
	}
	meta.Version = prev + 1
	m.Put(labelItem, it, store.AtVersion(prev))
	eventType, object := event(it)
	if err := m.Event(eventType, object); err != nil {
		return it, nil, m.confirm(ctx, err)
	}
	return it, object, m.commit()
}

// Load reads the item id of r's account; notFound replaces the 404 for an absent item when set.
func (f *Family[T, P]) Load(ctx context.Context, r *api.Request, id string, notFound error) (P, error) {
	it, err := f.core().load(ctx, r, id, notFound)
	p, _ := it.(P)
	return p, err
}

func (c *core) load(ctx context.Context, r *api.Request, id string, notFound error) (_ store.Resource, err error) {
	defer derrors.Wrap(&err, "resource.Load(%s %s)", c.EventKind, id)
	it := c.hooks.New()
	err = c.kit.Get(ctx, r, c.Prefix, id, it)
	if errors.Is(err, api.ErrNotFound) && notFound != nil {
		return nil, notFound
	}
	return it, err
}

func (c *core) deleteOp(ctx context.Context, r *api.Request) (_ any, err error) {
	defer derrors.Wrap(&err, "resource.delete(%s %s)", c.EventKind, r.PathValue("id"))
	return nil, retrying(ctx, func() error { return c.deleteAttempt(ctx, r) })
}

// deleteAttempt is one attempt of a delete, top to bottom: the item read, the hooks' further
// writes, the refusal while it is referenced, the deletion under its version, the event, the
// commit.
func (c *core) deleteAttempt(ctx context.Context, r *api.Request) error {
	it := c.hooks.New()
	if err := c.kit.Get(ctx, r, c.Prefix, r.PathValue("id"), it); err != nil {
		return err
	}
	m, err := c.kit.begin(ctx, r, nil)
	if err != nil {
		return err
	}
	if err := c.buildDelete(ctx, r, m, it); err != nil {
		return m.confirm(ctx, err)
	}
	return m.commit()
}

// buildDelete adds a delete's writes and event to m.
func (c *core) buildDelete(ctx context.Context, r *api.Request, m *Mutation, it store.Resource) error {
	if c.hooks.has(deleter) {
		if err := c.hooks.Delete(ctx, r, it, m); err != nil {
			return err
		}
	}
	conds := []expression.ConditionBuilder{store.AtVersion(it.Base().Version)}
	if c.hooks.has(referenceable) {
		if it.Base().Refs > 0 {
			return c.hooks.InUse()
		}
		// References bump the version too; this states the invariant where it is relied on.
		conds = append(conds, store.Unreferenced())
	}
	m.Delete(labelItem, it.Base().Key, conds...)
	return m.Event(audit.Type(c.EventKind, "deleted"), c.hooks.Render(r, it))
}

// Retries of a request's optimistic writes (retrying). An attempt that fails this way lost to
// another writer of the same item, which committed while it ran. The pause before the next
// attempt is drawn at random (full jitter) from a window that starts at the duration of the
// attempt that failed and doubles with each attempt, up to maxPause: writers that collided
// spread over a span that grows with their number and with the store's latency, where fixed
// pauses would have the same writers meet again at every attempt on a slow store. The budget
// is work, maxAttempts attempts, whatever the machine's speed (a time budget is what load
// exhausts first); a request with a deadline (its function's timeout) also
// stops before a pause would outlast it. Out of budget, the answer is a 429 ERR_NGROK_225 with
// Retry-After (api.TooConcurrent): nothing was changed; never a timeout.
const (
	maxAttempts = 16
	maxPause    = 2 * time.Second
)

// errTooManyConflicts is the answer of a write still losing when its retry budget is spent.
var errTooManyConflicts = api.TooConcurrent("other requests changed what this one writes too many times while it ran; nothing was changed: retry it after the time in Retry-After")

// retrying runs op until it does not fail with a version conflict, a changed item it derived
// from (RetryOn) or changed account access settings (auth.ErrRetry), pausing between attempts
// and within the budget described above. It is the one retry policy of a request: nothing it
// calls retries on its own.
func retrying(ctx context.Context, op func() error) error {
	deadline, bounded := ctx.Deadline()
	window := time.Duration(0)
	for i := 0; i < maxAttempts; i++ {
		start := time.Now()
		err := op()
		if !store.ConditionFailed(err, labelItem) && !store.IsConflict(err) && !errors.Is(err, errRetry) && !errors.Is(err, auth.ErrRetry) {
			return err
		}
		if i == maxAttempts-1 {
			break
		}
		window = min(max(2*window, time.Since(start)), maxPause)
		pause := time.Duration(rand.Int64N(int64(window) + 1))
		if bounded && time.Now().Add(pause).After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return errTooManyConflicts
		case <-time.After(pause):
		}
	}
	return errTooManyConflicts
}
