package tunnels

import (
	"context"
	"net/http"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// Session states: a session is live until the API asks it to stop or restart; its next
// heartbeat then ends it (package frpplugin).
const (
	StateLive       = ""
	StateStopped    = "stopped"
	StateRestarting = "restarting"
)

// Transport is what a session's transport reports: frp's control protocol.
const Transport = "frp"

// MaxTunnelsPerSession bounds the tunnels of one session, so that ending it (its tunnels, their
// endpoints and events deleted with it: 4 + 3 per tunnel writes) stays one transaction.
const MaxTunnelsPerSession = 25

// SessionItem is a stored tunnel session: one agent's connection to a tunnel server.
type SessionItem struct {
	store.Meta
	AgentVersion string `dynamodbav:"agent_version"`
	CredentialID string `dynamodbav:"credential"`
	IP           string `dynamodbav:"ip"`
	Metadata     string `dynamodbav:"metadata"`
	OS           string `dynamodbav:"os"`
	Hostname     string `dynamodbav:"hostname"`
	Region       string `dynamodbav:"region"`
	// ServerID is the tunnel-server key (tsk_…) of the server the agent is connected to.
	ServerID string `dynamodbav:"server"`
	// KeyHash is the hash of the secret of the server key the agent logged in through (the key
	// of its token item), which a heartbeat from that server is verified by without reading the
	// key; "" once the key is revoked (ForgetServer), and then every heartbeat reads the key.
	KeyHash string `dynamodbav:"key_hash,omitempty"`
	// ServerName is the name of that server (its region is Region), as its key names it.
	ServerName string `dynamodbav:"server_name,omitempty"`
	// Revoked is why the session's credential or account no longer admits it (Revoke): its next
	// heartbeat is refused with it and ends the session.
	Revoked string `dynamodbav:"revoked,omitempty"`
	// State is StateLive, StateStopped or StateRestarting.
	State string `dynamodbav:"state"`
	// LeaseUntil is when the session ends unless a heartbeat renews it (Unix seconds); LeaseSK
	// is the sort key of its entry in the lease partition (store.LeaseKey).
	LeaseUntil int64  `dynamodbav:"lease_until"`
	LeaseSK    string `dynamodbav:"lease_sk"`
	// Generation counts the agent's connections to the session: 1 at its login, one more at
	// each reconnect with its id (Reconnect). Each connection's requests carry the generation
	// it logged in with, so that a late report of an older connection (a CloseProxy of the one
	// a reconnect replaced) never ends what a newer one opened.
	Generation int64 `dynamodbav:"generation"`
	// Tunnels are the session's tunnel ids by the name of the proxy each is.
	Tunnels map[string]string `dynamodbav:"tunnels"`
	// Behalf is who the session's events are recorded as: the credential's owner.
	Behalf audit.OnBehalf `dynamodbav:"behalf"`
}

// SessionJSON is the wire form of a tunnel session, in the platform's member order.
type SessionJSON struct {
	AgentVersion string  `json:"agent_version"`
	Credential   api.Ref `json:"credential"`
	ID           string  `json:"id"`
	IP           string  `json:"ip"`
	Metadata     string  `json:"metadata,omitempty"`
	OS           string  `json:"os"`
	Region       string  `json:"region"`
	StartedAt    string  `json:"started_at"`
	Transport    string  `json:"transport"`
	URI          string  `json:"uri"`
}

// TunnelSessionsDescriptor is the /tunnel_sessions family.
var TunnelSessionsDescriptor = &resource.Descriptor{
	Path: "/tunnel_sessions", Prefix: ids.TunnelSession, ListKey: "tunnel_sessions", EventKind: "tunnel_session", Filter: true,
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
	*resource.Family[SessionItem, *SessionItem]
}

func newSessions(f *resource.Family[SessionItem, *SessionItem]) Sessions { return Sessions{f} }

// Render returns a session as GET returns it.
func (f Sessions) Render(r *api.Request, it *SessionItem) any {
	return RenderSession(r, it)
}

// RenderSession is a session's wire form on r's host, for the plugin's events.
func RenderSession(r *api.Request, it *SessionItem) SessionJSON {
	return SessionJSON{AgentVersion: it.AgentVersion, Credential: *resource.Ref(r, "/credentials", it.CredentialID),
		ID: it.ID, IP: it.IP, Metadata: it.Metadata, OS: it.OS, Region: it.Region, StartedAt: api.Timestamp(it.CreatedAt),
		Transport: Transport, URI: resource.URI(r, TunnelSessionsDescriptor.Path, it.ID)}
}

// errReported refuses a create: sessions are reported by tunnel servers. No route reaches it
// (the family serves list and get only); Create exists because every family's hooks have one.
var errReported = api.Invalid("body", "tunnel sessions and tunnels are reported by tunnel servers; the API does not create them")

// Create refuses: see errReported.
func (Sessions) Create(ctx context.Context, r *api.Request, it *SessionItem, m *resource.Mutation) (any, error) {
	return nil, errReported
}

// stop asks the session's agent to stop: its next heartbeat is refused and ends the session,
// and its reconnects with the session's id are refused.
func (f Sessions) stop(ctx context.Context, r *api.Request) (any, error) {
	return nil, f.setState(ctx, r, StateStopped)
}

// restart asks the session's agent to reconnect: its next heartbeat is refused and ends the
// session, and the agent's reconnect starts a new one.
func (f Sessions) restart(ctx context.Context, r *api.Request) (any, error) {
	return nil, f.setState(ctx, r, StateRestarting)
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
	_, err := f.Modify(ctx, r, r.PathValue("id"), nil, func(it *SessionItem, m *resource.Mutation) error {
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
