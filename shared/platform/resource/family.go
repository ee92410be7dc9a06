package resource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/listfilter"
	"tunnelapi/shared/platform/store"
)

// labelItem labels the write of the resource item itself in a mutation.
const labelItem = "item"

// Family serves the five operations of one resource kind: the generic shape every family shares,
// with the family's own rules supplied by its Hooks. T is the stored item type; P is *T and
// embeds store.Meta. Hooks see the item and the mutation being built; they decode, validate and
// add any further writes (token items, reference checks, guards).
type Family[T any, P interface {
	*T
	store.Resource
}] struct {
	*Descriptor
	Kit   *Kit
	Hooks Hooks[P]
}

// Register adds the family's routes to mux.
func (f *Family[T, P]) Register(mux api.Mux, s *api.Server) {
	mux.Handle("POST "+f.Path, s.Handle(http.StatusCreated, f.create))
	mux.Handle("GET "+f.Path, s.Handle(http.StatusOK, f.list))
	mux.Handle("GET "+f.Path+"/{id}", s.Handle(http.StatusOK, f.get))
	mux.Handle("PATCH "+f.Path+"/{id}", s.Handle(http.StatusOK, f.update))
	mux.Handle("DELETE "+f.Path+"/{id}", s.Handle(http.StatusNoContent, f.delete))
}

func (f *Family[T, P]) create(ctx context.Context, r *api.Request) (_ any, err error) {
	defer derrors.Wrap(&err, "resource.create(%s)", f.EventKind)
	c, err := f.Kit.Auth.Resolve(ctx, r)
	if err != nil {
		return nil, err
	}
	idem, err := idempotency(r, c.AccountID)
	if err != nil {
		return nil, err
	}
	// The id is chosen once, so a retried transaction and anything Prepare bound to the id (a
	// signature, the sealing context of a private key) still agree.
	now := time.Now().UTC()
	prepared := P(new(T))
	meta := prepared.Base()
	meta.ID = ids.NewAt(f.Prefix, now)
	meta.AccountID = c.AccountID
	meta.Key = store.ResourceKey(c.AccountID, meta.ID)
	meta.CreatedAt = now.Unix()
	meta.Version = 1
	if p, ok := f.Hooks.(Preparer[P]); ok {
		if err := p.Prepare(ctx, r, prepared); err != nil {
			return nil, err
		}
	}
	var resp any
	// A create that touches a shared item (a parent's counter) can lose to a concurrent
	// transaction; it is retried like an update.
	err = retrying(ctx, func() error {
		err := f.Kit.Commit(ctx, r, func(m *Mutation) error {
			it := P(new(T))
			*it = *prepared
			own, err := f.Hooks.Create(ctx, r, it, m)
			if err != nil {
				return err
			}
			resp = own
			if own == nil {
				resp = f.Hooks.Render(r, it)
			}
			m.Put(labelItem, it, store.Absent())
			if idem != nil {
				// The stored response is the one sent, byte for byte, to this caller and to
				// every retry. A create's own response differs from Render only to show a
				// secret once: that one is sealed. Not HTML-escaped, which would triple the size
				// of a page in a policy (the answer is escaped as every answer is when sent).
				body, err := api.MarshalUnescaped(resp)
				if err != nil {
					return fmt.Errorf("resource: marshal the create response: %w", err)
				}
				if err := idem.record(ctx, f.Kit, m, meta.ID, body, own != nil, time.Now()); err != nil {
					return err
				}
				resp = json.RawMessage(body)
			}
			return m.Event(audit.Type(f.EventKind, "created"), f.Hooks.Render(r, it))
		})
		if err != nil && idem != nil {
			// A create that did not commit may repeat one that did (and failed because of it:
			// its key's record, a name now taken): answer as that one did. Only the failure
			// path reads the record.
			body, found, lerr := idem.replay(ctx, f.Kit, r)
			switch {
			case found:
				resp = body
				return nil
			case lerr != nil:
				if _, ok := api.AsError(lerr); ok {
					return lerr
				}
				return err
			case store.ConditionFailed(err, labelIdempotency):
				return errRetry // the record expired meanwhile: the key is free again
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

func (f *Family[T, P]) get(ctx context.Context, r *api.Request) (_ any, err error) {
	defer derrors.Wrap(&err, "resource.get(%s %s)", f.EventKind, r.PathValue("id"))
	it := P(new(T))
	if err := f.Kit.Get(ctx, r, f.Prefix, r.PathValue("id"), it); err != nil {
		return nil, err
	}
	return f.Hooks.Render(r, it), nil
}

// maxFilterScan bounds how many items one filtered list page examines, so a filter that
// matches rarely costs a bounded number of queries; the page then ends early with a
// next_page_uri that resumes after the last item examined.
const maxFilterScan = 1000

func (f *Family[T, P]) list(ctx context.Context, r *api.Request) (_ any, err error) {
	defer derrors.Wrap(&err, "resource.list(%s)", f.EventKind)
	p, err := api.ParsePage(r, f.Prefix, f.Filter)
	if err != nil {
		return nil, err
	}
	var flt *listfilter.Filter
	if p.Filter != "" {
		if flt, err = listfilter.Compile(p.Filter); err != nil {
			return nil, api.BadRequest(api.CodeBadFilter, "filter", "invalid filter: %s", err.Error())
		}
	}
	items, more, err := f.Kit.Page(ctx, r, f.Prefix, p)
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, len(items))
	last, examined, size, full := "", 0, 0, false
	for {
		for i, raw := range items {
			it := P(new(T))
			if err := store.Unmarshal(raw, it); err != nil {
				return nil, err
			}
			v := f.Hooks.Render(r, it)
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
				return nil, fmt.Errorf("resource: measure a list item: %w", err)
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
		if flt == nil || full || len(out) == p.Limit || !more || examined >= maxFilterScan {
			break
		}
		if items, more, err = f.Kit.DB.PageQuery(ctx, store.Collection(r.Caller().AccountID, f.Prefix), last, p.Limit); err != nil {
			return nil, err
		}
	}
	return api.List{Key: f.ListKey, Items: out, URI: r.URI(f.Path), NextPage: api.NextPageURI(r, f.Path, p, last, more)}, nil
}

func (f *Family[T, P]) update(ctx context.Context, r *api.Request) (_ any, err error) {
	defer derrors.Wrap(&err, "resource.update(%s %s)", f.EventKind, r.PathValue("id"))
	var ahead []store.Key
	if u, ok := f.Hooks.(UpdateReader); ok {
		c, err := f.Kit.Auth.Resolve(ctx, r)
		if err != nil {
			return nil, err
		}
		ahead = u.UpdateReads(r, c.AccountID)
	}
	it, err := f.modify(ctx, r, r.PathValue("id"), nil, ahead, func(it P, m *Mutation) error {
		return f.Hooks.Update(ctx, r, it, m)
	})
	if err != nil {
		return nil, err
	}
	return f.Hooks.Render(r, it), nil
}

// Modify is a read-modify-write of the item id under optimistic concurrency, recording the
// kind's updated event. Sub-resources kept inside their parent (a subscription's sources) use
// it as their update path. notFound replaces the 404 for an absent item when set; change
// applies the modification and adds any further writes to m.
func (f *Family[T, P]) Modify(ctx context.Context, r *api.Request, id string, notFound error, change func(it P, m *Mutation) error) (_ P, err error) {
	defer derrors.Wrap(&err, "resource.Modify(%s %s)", f.EventKind, id)
	return f.modify(ctx, r, id, notFound, nil, change)
}

// modify is Modify reading the keys ahead with the item (for change, through Mutation.GetMany).
func (f *Family[T, P]) modify(ctx context.Context, r *api.Request, id string, notFound error, ahead []store.Key, change func(it P, m *Mutation) error) (_ P, err error) {
	var it P
	err = retrying(ctx, func() error {
		it = P(new(T))
		read, err := f.Kit.getWith(ctx, r, f.Prefix, id, it, ahead)
		if err != nil {
			if errors.Is(err, api.ErrNotFound) && notFound != nil {
				return notFound
			}
			return err
		}
		return f.Kit.commit(ctx, r, read, func(m *Mutation) error {
			meta := it.Base()
			prev := meta.Version
			if err := change(it, m); err != nil {
				return err
			}
			meta.Version = prev + 1
			m.Put(labelItem, it, store.AtVersion(prev))
			return m.Event(audit.Type(f.EventKind, "updated"), f.Hooks.Render(r, it))
		})
	})
	return it, err
}

// Load reads the item id of r's account; notFound replaces the 404 for an absent item when set.
func (f *Family[T, P]) Load(ctx context.Context, r *api.Request, id string, notFound error) (_ P, err error) {
	defer derrors.Wrap(&err, "resource.Load(%s %s)", f.EventKind, id)
	it := P(new(T))
	err = f.Kit.Get(ctx, r, f.Prefix, id, it)
	if errors.Is(err, api.ErrNotFound) && notFound != nil {
		return nil, notFound
	}
	return it, err
}

func (f *Family[T, P]) delete(ctx context.Context, r *api.Request) (_ any, err error) {
	defer derrors.Wrap(&err, "resource.delete(%s %s)", f.EventKind, r.PathValue("id"))
	err = retrying(ctx, func() error {
		it := P(new(T))
		if err := f.Kit.Get(ctx, r, f.Prefix, r.PathValue("id"), it); err != nil {
			return err
		}
		return f.Kit.Commit(ctx, r, func(m *Mutation) error {
			if d, ok := f.Hooks.(Deleter[P]); ok {
				if err := d.Delete(ctx, r, it, m); err != nil {
					return err
				}
			}
			conds := []expression.ConditionBuilder{store.AtVersion(it.Base().Version)}
			if ref, ok := f.Hooks.(Referenceable); ok {
				if it.Base().Refs > 0 {
					return ref.InUse()
				}
				// References bump the version too; this states the invariant where it is relied on.
				conds = append(conds, store.Unreferenced())
			}
			m.Delete(labelItem, it.Base().Key, conds...)
			return m.Event(audit.Type(f.EventKind, "deleted"), f.Hooks.Render(r, it))
		})
	})
	return nil, err
}
