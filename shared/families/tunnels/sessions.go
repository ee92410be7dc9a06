package tunnels

import (
	"context"
	"net/http"

	"tunnelapi/shared/families/tunnels/lease"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// TunnelSessionsDescriptor is the /tunnel_sessions family.
var TunnelSessionsDescriptor = &resource.Descriptor{
	Path: lease.SessionsPath, Prefix: ids.TunnelSession, ListKey: "tunnel_sessions", EventKind: lease.SessionKind, Filter: true,
	Operations: resource.OpList | resource.OpGet,
	Reported:   audit.AllVerbs,
	Binding: func() resource.Binding {
		return resource.Bind(newSessions,
			resource.Route[Sessions]{Method: http.MethodPost, Pattern: "/{id}/stop", Status: http.StatusNoContent, Handle: Sessions.stop},
			resource.Route[Sessions]{Method: http.MethodPost, Pattern: "/{id}/restart", Status: http.StatusNoContent, Handle: Sessions.restart},
			// Update never succeeds: its answer for a session of the account is errNoUpdate.
			resource.Route[Sessions]{Method: http.MethodPost, Pattern: "/{id}/update", Status: http.StatusBadRequest, Handle: Sessions.update},
		)
	},
	Release: SessionRelease{},
}

// Sessions is the tunnel session family's rules.
type Sessions struct {
	*resource.Family[lease.SessionItem, *lease.SessionItem]
}

func newSessions(f *resource.Family[lease.SessionItem, *lease.SessionItem]) Sessions {
	return Sessions{f}
}

// Render returns a session as GET returns it.
func (f Sessions) Render(r *api.Request, it *lease.SessionItem) any {
	return lease.RenderSession(r, it)
}

// errReported refuses a create: sessions are reported by tunnel servers. No route reaches it
// (the family serves list and get only); Create exists because every family's hooks have one.
var errReported = api.Invalid("body", "tunnel sessions and tunnels are reported by tunnel servers; the API does not create them")

// Create refuses: see errReported.
func (Sessions) Create(ctx context.Context, r *api.Request, it *lease.SessionItem, m *resource.Mutation) (any, error) {
	return nil, errReported
}

// stop asks the session's agent to stop: its next heartbeat is refused and ends the session,
// and its reconnects with the session's id are refused.
func (f Sessions) stop(ctx context.Context, r *api.Request) (any, error) {
	return nil, f.setState(ctx, r, lease.StateStopped)
}

// restart asks the session's agent to reconnect: its next heartbeat is refused and ends the
// session, and the agent's reconnect starts a new one.
func (f Sessions) restart(ctx context.Context, r *api.Request) (any, error) {
	return nil, f.setState(ctx, r, lease.StateRestarting)
}

// errNoUpdate is the answer to update: frp agents have no remote update.
var errNoUpdate = api.BadRequest("ERR_NGROK_806", "id", "the agent of this tunnel session does not support remote update: frp's client cannot update itself; update it where it runs, then restart the session")

// update answers errNoUpdate for a session of the caller's account (404 for any other).
func (f Sessions) update(ctx context.Context, r *api.Request) (any, error) {
	if err := decodeItem(r); err != nil {
		return nil, err
	}
	if _, err := f.Load(ctx, r, r.PathValue("id"), nil); err != nil {
		return nil, err
	}
	return nil, errNoUpdate
}

// decodeItem checks the body of stop, restart and update: empty, or the platform's Item (the
// path's id, as the official clients send it).
func decodeItem(r *api.Request) error {
	var in struct{}
	return api.Decode(r, &in)
}

// setState records the session's new state, with its updated event; a session already asked to
// stop or restart takes the latest request.
func (f Sessions) setState(ctx context.Context, r *api.Request, state string) error {
	if err := decodeItem(r); err != nil {
		return err
	}
	_, err := f.Modify(ctx, r, r.PathValue("id"), nil, func(it *lease.SessionItem, m *resource.Mutation) error {
		it.State = state
		return nil
	})
	return err
}

// SessionRelease frees what a stored session holds outside its account's partitions: its lease
// entry.
type SessionRelease struct{}

// Release adds the deletion of the session's lease entry to tx.
func (SessionRelease) Release(ctx context.Context, db *store.DB, it store.Item, tx *store.Tx) error {
	a := store.Attrs{Item: it}
	if sk := a.String("lease_sk"); sk != "" {
		resource.Free(tx, a.String("account"), store.Key{PK: store.LeasePartition, SK: sk})
	}
	return a.Err()
}
