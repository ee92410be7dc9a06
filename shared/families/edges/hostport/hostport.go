// Package hostport is the guard an edge holds on each of its hostports, at most one across every
// edge family, and what frees those guards when the edge's account is erased. It is apart from
// package edges so that the operator's erasure, which calls GuardRelease, does not link the edges'
// rules: they validate traffic policies with cel-go, whose packages' initialisation alone is
// megabytes of a function's binary.
package hostport

import (
	"context"

	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// GuardKey is the key of the guard of hostport hp.
func GuardKey(hp string) store.Key { return store.GuardKey("edge_hostport", hp) }

// GuardRelease frees the guards of a stored edge's hostports (resource.Descriptor.Release of
// every kind of edge).
type GuardRelease struct{}

// Release implements resource.Releaser.
func (GuardRelease) Release(_ context.Context, _ *store.DB, it store.Item, tx *store.Tx) error {
	a := store.Attrs{Item: it}
	for _, hp := range a.Strings("hostports") {
		resource.Free(tx, a.String("account"), GuardKey(hp))
	}
	return a.Err()
}
