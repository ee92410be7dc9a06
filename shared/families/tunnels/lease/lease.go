// Package lease is a tunnel session and its tunnels as the table stores them and as their
// events show them, and the two ways a session ends without the API: its tunnel server says so
// (End), or its lease lapses and the scheduler's sweep ends it (Sweep). It holds none of the
// families' rules, so the scheduler links only what it runs; package tunnels serves the
// families and records the other reports of a tunnel server.
package lease

import (
	"context"
	"fmt"
	"time"

	"tunnelapi/shared/families/endpoints/view"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// The families' paths and event kinds, which their descriptors declare (package tunnels) and
// the events recorded here name.
const (
	SessionsPath = "/tunnel_sessions"
	SessionKind  = "tunnel_session"
	TunnelsPath  = "/tunnels"
	TunnelKind   = "tunnel"
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
	// key; "" once the key is revoked (tunnels.ForgetServer), and then every heartbeat reads the
	// key.
	KeyHash string `dynamodbav:"key_hash,omitempty"`
	// ServerName is the name of that server (its region is Region), as its key names it.
	ServerName string `dynamodbav:"server_name,omitempty"`
	// Revoked is why the session's credential or account no longer admits it (tunnels.Revoke):
	// its next heartbeat is refused with it and ends the session.
	Revoked string `dynamodbav:"revoked,omitempty"`
	// State is StateLive, StateStopped or StateRestarting.
	State string `dynamodbav:"state"`
	// LeaseUntil is when the session ends unless a heartbeat renews it (Unix seconds); LeaseSK
	// is the sort key of its entry in the lease partition (store.LeaseKey).
	LeaseUntil int64  `dynamodbav:"lease_until"`
	LeaseSK    string `dynamodbav:"lease_sk"`
	// Generation counts the agent's connections to the session: 1 at its login, one more at
	// each reconnect with its id (tunnels.Reconnect). Each connection's requests carry the
	// generation it logged in with, so that a late report of an older connection (a CloseProxy
	// of the one a reconnect replaced) never ends what a newer one opened.
	Generation int64 `dynamodbav:"generation"`
	// Tunnels are the session's tunnel ids by the name of the proxy each is.
	Tunnels map[string]string `dynamodbav:"tunnels"`
	// Behalf is who the session's events are recorded as: the credential's owner.
	Behalf audit.OnBehalf `dynamodbav:"behalf"`
}

// SessionKey is the key of account's session id.
func SessionKey(account, id string) store.Key { return store.ResourceKey(account, id) }

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

// RenderSession is a session's wire form on r's host, as GET returns it and its events show it.
func RenderSession(r *api.Request, it *SessionItem) SessionJSON {
	return SessionJSON{AgentVersion: it.AgentVersion, Credential: *resource.Ref(r, "/credentials", it.CredentialID),
		ID: it.ID, IP: it.IP, Metadata: it.Metadata, OS: it.OS, Region: it.Region, StartedAt: api.Timestamp(it.CreatedAt),
		Transport: Transport, URI: resource.URI(r, SessionsPath, it.ID)}
}

// TunnelItem is a stored tunnel: one proxy an agent opened on its session.
type TunnelItem struct {
	store.Meta
	SessionID string `dynamodbav:"session"`
	// ProxyName is the proxy's name in the agent's configuration, unique in its session.
	ProxyName string `dynamodbav:"proxy"`
	PublicURL string `dynamodbav:"public_url"`
	Proto     string `dynamodbav:"proto"`
	Region    string `dynamodbav:"region"`
	// Labels are the proxy's metadatas, which tunnel-group backends match.
	Labels   map[string]string `dynamodbav:"labels"`
	Metadata string            `dynamodbav:"metadata"`
	// ForwardsTo is the upstream the agent forwards to, when the tunnel server tells it.
	ForwardsTo string `dynamodbav:"forwards_to"`
	// Generation is the session's generation (SessionItem.Generation) of the connection that
	// opened the proxy, or reopened it after a reconnect (tunnels.Adopt).
	Generation int64 `dynamodbav:"generation"`
	// EndpointID is the tunnel's ephemeral endpoint (ep_…), written and deleted with it.
	EndpointID string `dynamodbav:"endpoint,omitempty"`
}

// TunnelJSON is the wire form of a tunnel, in the platform's member order.
type TunnelJSON struct {
	ID            string  `json:"id"`
	PublicURL     string  `json:"public_url"`
	StartedAt     string  `json:"started_at"`
	Metadata      string  `json:"metadata,omitempty"`
	Proto         string  `json:"proto"`
	Region        string  `json:"region"`
	TunnelSession api.Ref `json:"tunnel_session"`
	// Endpoint is the tunnel's ephemeral endpoint.
	Endpoint   *api.Ref          `json:"endpoint"`
	Labels     map[string]string `json:"labels"`
	Backends   []api.Ref         `json:"backends"`
	ForwardsTo string            `json:"forwards_to"`
}

// RenderTunnel is a tunnel's wire form on r's host, as GET returns it and its events show it.
func RenderTunnel(r *api.Request, it *TunnelItem) TunnelJSON {
	out := TunnelJSON{ID: it.ID, PublicURL: it.PublicURL, StartedAt: api.Timestamp(it.CreatedAt), Metadata: it.Metadata,
		Proto: it.Proto, Region: it.Region, TunnelSession: *resource.Ref(r, SessionsPath, it.SessionID),
		Labels: labels(it.Labels), Backends: []api.Ref{}, ForwardsTo: it.ForwardsTo}
	if it.EndpointID != "" {
		out.Endpoint = resource.Ref(r, view.Path, it.EndpointID)
	}
	return out
}

// labels is a tunnel's labels as the wire shows them: an object, empty when it has none.
func labels(l map[string]string) map[string]string {
	if l == nil {
		return map[string]string{}
	}
	return l
}

// EntryItem is a session's entry in the lease partition (store.LeaseKey): the sweep reads the
// entries due and ends the sessions whose lease lapsed.
type EntryItem struct {
	store.Key
	AccountID string `dynamodbav:"account"`
	ID        string `dynamodbav:"id"`
	// Server is the session's ServerID, so that revoking a server's key finds its sessions
	// (tunnels.ForgetServer).
	Server string `dynamodbav:"server,omitempty"`
}

// EndedItem marks a session ended by stop or restart (store.EndedSessionKey) until it expires:
// a reconnect carrying the session's id is refused after a stop and starts a new session after
// a restart.
type EndedItem struct {
	store.Key
	State   string `dynamodbav:"state"`
	Expires int64  `dynamodbav:"ttl"`
}

// EndedRetention is how long an ended session's mark stays: longer than any agent keeps
// reconnecting with the same id.
const EndedRetention = 24 * time.Hour

// ErrChanged reports that the session or its tunnels changed under a write derived from them:
// read them again.
var ErrChanged = fmt.Errorf("tunnels: the session changed meanwhile")

// Commit commits tx, reporting a failed condition on the session (the write labelled
// "session") as ErrChanged.
func Commit(ctx context.Context, db *store.DB, tx *store.Tx) error {
	err := db.Commit(ctx, tx)
	if store.ConditionFailed(err, "session") {
		return ErrChanged
	}
	return err
}

// End deletes the session it (at the version read) with its tunnels, their endpoints and its
// lease entry. A state of StateStopped or StateRestarting leaves the mark a reconnect is
// answered by (EndedItem).
func End(ctx context.Context, db *store.DB, it *SessionItem, state string, now time.Time) (err error) {
	defer derrors.Wrap(&err, "lease.End(%s)", it.ID)
	var keys []store.Key
	for _, id := range it.Tunnels {
		keys = append(keys, store.ResourceKey(it.AccountID, id))
	}
	var items []store.Item
	if len(keys) > 0 {
		if items, err = db.GetMany(ctx, keys...); err != nil {
			return err
		}
	}
	tx := &store.Tx{}
	r := it.Behalf.Request(it.AccountID)
	tx.Delete("session", it.Key, store.AtVersion(it.Version))
	if it.LeaseSK != "" {
		tx.Delete("lease", store.Key{PK: store.LeasePartition, SK: it.LeaseSK})
	}
	if state == StateStopped || state == StateRestarting {
		tx.Put("ended", EndedItem{Key: store.EndedSessionKey(it.AccountID, it.ID), State: state, Expires: now.Add(EndedRetention).Unix()})
	}
	if _, err := audit.Record(tx, r, audit.Type(SessionKind, "deleted"), RenderSession(r, it)); err != nil {
		return err
	}
	for _, raw := range items {
		if raw == nil {
			continue
		}
		var t TunnelItem
		if err := store.Unmarshal(raw, &t); err != nil {
			return err
		}
		tx.Delete("tunnel."+t.ID, t.Key)
		if t.EndpointID != "" {
			tx.Delete("endpoint."+t.ID, store.ResourceKey(t.AccountID, t.EndpointID))
		}
		if _, err := audit.Record(tx, r, audit.Type(TunnelKind, "deleted"), RenderTunnel(r, &t)); err != nil {
			return err
		}
	}
	return Commit(ctx, db, tx)
}

// MaxTunnelsPerSession bounds the tunnels of one session, so that ending it (its tunnels, their
// endpoints and events deleted with it: 4 + 3 per tunnel writes) stays one transaction.
const MaxTunnelsPerSession = 25
