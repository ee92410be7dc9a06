package resource

import (
	"context"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/store"
)

// erasedHooks is a family's hooks as the operations, written once over store.Resource, call
// them: the methods of Hooks and of the optional Updater, Preparer, Deleter, Referenceable,
// UpdateReader and Joiner, each called only when has reports the hooks implement it. typedHooks is its one
// implementation; each method asserts the item's type and calls the family's own.
type erasedHooks interface {
	// New returns a new empty item; Clone a copy of it.
	New() store.Resource
	Clone(it store.Resource) store.Resource
	Render(r *api.Request, it store.Resource) any
	Create(ctx context.Context, r *api.Request, it store.Resource, m *Mutation) (any, error)
	Update(ctx context.Context, r *api.Request, it store.Resource, m *Mutation) error
	Prepare(ctx context.Context, r *api.Request, it store.Resource) error
	Delete(ctx context.Context, r *api.Request, it store.Resource, m *Mutation) error
	InUse() *api.Error
	UpdateReads(r *api.Request, account string) []store.Key
	Joined() (prefix string, attrs []string)
	RenderJoined(r *api.Request, it store.Resource, joined []store.Item) any
	// has reports whether the hooks implement the optional interface o.
	has(o optional) bool
}

// optional is a set of the optional hooks interfaces.
type optional uint8

const (
	updater optional = 1 << iota
	preparer
	deleter
	referenceable
	updateReader
	joiner
)

// typedHooks adapts the hooks h of item type P to erasedHooks.
type typedHooks[T any, P interface {
	*T
	store.Resource
}] struct {
	h    Hooks[P]
	opts optional
}

// eraseHooks returns h as the operations call it.
func eraseHooks[T any, P interface {
	*T
	store.Resource
}](h Hooks[P]) erasedHooks {
	t := typedHooks[T, P]{h: h}
	if _, ok := h.(Updater[P]); ok {
		t.opts |= updater
	}
	if _, ok := h.(Preparer[P]); ok {
		t.opts |= preparer
	}
	if _, ok := h.(Deleter[P]); ok {
		t.opts |= deleter
	}
	if _, ok := h.(Referenceable); ok {
		t.opts |= referenceable
	}
	if _, ok := h.(UpdateReader); ok {
		t.opts |= updateReader
	}
	if _, ok := h.(Joiner[P]); ok {
		t.opts |= joiner
	}
	return &t
}

func (t *typedHooks[T, P]) has(o optional) bool { return t.opts&o != 0 }
func (*typedHooks[T, P]) New() store.Resource   { return P(new(T)) }
func (*typedHooks[T, P]) Clone(it store.Resource) store.Resource {
	out := P(new(T))
	*out = *it.(P)
	return out
}

func (t *typedHooks[T, P]) Render(r *api.Request, it store.Resource) any {
	return t.h.Render(r, it.(P))
}

func (t *typedHooks[T, P]) Create(ctx context.Context, r *api.Request, it store.Resource, m *Mutation) (any, error) {
	return t.h.Create(ctx, r, it.(P), m)
}

func (t *typedHooks[T, P]) Update(ctx context.Context, r *api.Request, it store.Resource, m *Mutation) error {
	return t.h.(Updater[P]).Update(ctx, r, it.(P), m)
}

func (t *typedHooks[T, P]) Prepare(ctx context.Context, r *api.Request, it store.Resource) error {
	return t.h.(Preparer[P]).Prepare(ctx, r, it.(P))
}

func (t *typedHooks[T, P]) Delete(ctx context.Context, r *api.Request, it store.Resource, m *Mutation) error {
	return t.h.(Deleter[P]).Delete(ctx, r, it.(P), m)
}

func (t *typedHooks[T, P]) InUse() *api.Error { return t.h.(Referenceable).InUse() }

func (t *typedHooks[T, P]) UpdateReads(r *api.Request, account string) []store.Key {
	return t.h.(UpdateReader).UpdateReads(r, account)
}

func (t *typedHooks[T, P]) Joined() (string, []string) { return t.h.(Joiner[P]).Joined() }

func (t *typedHooks[T, P]) RenderJoined(r *api.Request, it store.Resource, joined []store.Item) any {
	return t.h.(Joiner[P]).RenderJoined(r, it.(P), joined)
}
