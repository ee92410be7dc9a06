package frpplugin

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/families/tunnels"
	"tunnelapi/shared/families/tunnels/lease"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/store"
)

// userInfo is the agent a request after its login comes from, as the login's rewrite left it
// (frp's UserInfo).
type userInfo struct {
	User  string            `json:"user"`
	Metas map[string]string `json:"metas"`
	RunID string            `json:"run_id"`
}

// generation is the generation of the agent's connection (MetaGeneration); 0 for a login
// rewritten without one.
func (u userInfo) generation() int64 {
	n, _ := strconv.ParseInt(u.Metas[MetaGeneration], 10, 64)
	return n
}

// account, credential and session are the ids the login's rewrite gave the agent; ok is false
// when they are not (the agent logged in before frps asked this plugin).
func (u userInfo) ids() (account, credential, session string, ok bool) {
	account, credential, session = u.Metas[MetaAccount], u.Metas[MetaAuthtoken], u.RunID
	return account, credential, session, ids.Is(account, ids.Account) && ids.Is(credential, ids.Credential) && ids.Is(session, ids.TunnelSession)
}

// notOurs is the answer to a request from an agent whose login this API did not admit: the
// refusal, once the server's key is verified.
func (p *Plugin) notOurs(ctx context.Context, s server) (Response, error) {
	items, err := p.DB.GetMany(ctx, s.key())
	if err != nil {
		return Response{}, err
	}
	if _, err := s.verify(items[0]); err != nil {
		return Response{}, err
	}
	return refuse("the agent's login was not admitted by this API (no session id, credential and account from its rewrite): restart frpc"), nil
}

// agentState is what every request after a login is decided on: the server's key, the session,
// its credential and its account, read in one round trip.
type agentState struct {
	key        tunnels.ServerTokenItem
	session    *lease.SessionItem
	credential *principals.CredentialItem
	account    auth.AccountItem
}

// read reads the agent's state for s; the error is errUnauthorized for a key that is not s's.
func (p *Plugin) read(ctx context.Context, s server, account, credential, session string) (*agentState, error) {
	items, err := p.DB.GetMany(ctx, s.key(), lease.SessionKey(account, session), store.ResourceKey(account, credential), store.AccountKey(account))
	if err != nil {
		return nil, err
	}
	var a agentState
	if a.key, err = s.verify(items[0]); err != nil {
		return nil, err
	}
	if items[1] != nil {
		a.session = &lease.SessionItem{}
		if err := store.Unmarshal(items[1], a.session); err != nil {
			return nil, err
		}
	}
	if items[2] != nil {
		a.credential = &principals.CredentialItem{}
		if err := store.Unmarshal(items[2], a.credential); err != nil {
			return nil, err
		}
	}
	if items[3] != nil {
		if err := store.Unmarshal(items[3], &a.account); err != nil {
			return nil, err
		}
	} else {
		a.account.Status = auth.StatusDeleting
	}
	return &a, nil
}

// ended is why the session must end now, with the state it ends in; "" while it goes on.
func (a *agentState) ended(credential string) (why, state string) {
	switch {
	case a.session.Revoked != "":
		return a.session.Revoked, ""
	case a.session.State == lease.StateStopped:
		return "tunnel session " + a.session.ID + " was stopped through the API", lease.StateStopped
	case a.session.State == lease.StateRestarting:
		return "tunnel session " + a.session.ID + " was asked to restart through the API: the agent reconnects as a new session", lease.StateRestarting
	case a.credential == nil || a.session.CredentialID != credential:
		return "the tunnel credential " + credential + " of tunnel session " + a.session.ID + " was deleted", ""
	case a.account.Status == auth.StatusSuspended:
		return "the account of tunnel session " + a.session.ID + " is suspended", ""
	case a.account.Status != "":
		return "the account of tunnel session " + a.session.ID + " is being deleted", ""
	}
	return "", ""
}

// gone is the refusal for a session that no longer exists.
func gone(session string) Response {
	return refuse("tunnel session %s has ended (its lease lapsed, or it was stopped, restarted or its credential deleted)", session)
}

// end ends the session in state, logging a failure: the refusal that follows ends it on frps
// anyway, and the next heartbeat or the sweep ends it here.
func (p *Plugin) end(ctx context.Context, it *lease.SessionItem, state string) {
	if err := lease.End(ctx, p.DB, it, state, time.Now()); err != nil && !errors.Is(err, lease.ErrChanged) {
		p.logger().Warn("a tunnel session could not be ended", "session", it.ID, "err", err.Error())
	}
}

// ping is a heartbeat: it renews the session's lease when less than half is left, and is
// refused (ending the session) once the session was stopped or restarted, its credential
// deleted or its account suspended. A heartbeat the store cannot answer is admitted for any
// session this API issued.
//
// Most heartbeats read the session item alone: the revocations are written onto it
// (tunnels.Revoke), and the server is verified by the hash of its key's secret the session
// records. The full read (the server's key, the session, its credential and its account) is
// done when the session records another key or none (a reconnect through another server, a
// revoked key), and when the heartbeat renews the lease: that read ends a session whose
// revocation was committed but never written onto it.
func (p *Plugin) ping(ctx context.Context, s server, raw []byte) (Response, error) {
	var in struct {
		User userInfo `json:"user"`
	}
	if err := unmarshal(raw, &in); err != nil {
		return Response{}, errContent(OpPing)
	}
	account, credential, session, ok := in.User.ids()
	if !ok {
		return p.notOurs(ctx, s)
	}
	now := time.Now()
	it, err := p.readSession(ctx, account, session)
	if unreachable(err) {
		p.logger().Warn("heartbeat admitted without the store", "session", session, "err", err.Error())
		return admit, nil
	} else if err != nil {
		return Response{}, err
	}
	if it != nil && s.recorded(it) && it.CredentialID == credential && !tunnels.Renewable(it, now, p.lease()) {
		switch {
		case it.Revoked != "":
			p.end(ctx, it, "")
			return refuse("%s", it.Revoked), nil
		case it.State != lease.StateLive:
			a := agentState{session: it}
			why, state := a.ended(credential)
			p.end(ctx, it, state)
			return refuse("%s", why), nil
		}
		return admit, nil
	}
	a, err := p.read(ctx, s, account, credential, session)
	if unreachable(err) {
		p.logger().Warn("heartbeat admitted without the store", "session", session, "err", err.Error())
		return admit, nil
	} else if err != nil {
		return Response{}, err
	}
	if a.session == nil {
		return gone(session), nil
	}
	if why, state := a.ended(credential); why != "" {
		p.end(ctx, a.session, state)
		return refuse("%s", why), nil
	}
	if tunnels.Renewable(a.session, now, p.lease()) {
		if err := tunnels.Renew(ctx, p.DB, a.session, now, p.lease()); err != nil && !unreachable(err) && !store.IsNotFound(err) {
			return Response{}, err
		}
	}
	return admit, nil
}

// recorded reports whether s is the server whose key the session records: the same secret's
// hash, name and region.
func (s server) recorded(it *lease.SessionItem) bool {
	return it.KeyHash != "" && it.KeyHash == s.secretHash && it.ServerName == s.name && it.Region == s.region
}

// readSession reads account's session id alone; nil when it does not exist.
func (p *Plugin) readSession(ctx context.Context, account, id string) (*lease.SessionItem, error) {
	items, err := p.DB.GetMany(ctx, lease.SessionKey(account, id))
	if err != nil || items[0] == nil {
		return nil, err
	}
	it := &lease.SessionItem{}
	if err := store.Unmarshal(items[0], it); err != nil {
		return nil, err
	}
	return it, nil
}

// closeProxy ends the tunnel of a proxy frps closed, unless a newer connection of the agent
// reopened it (tunnels.Close); it only notifies, so it is always admitted.
func (p *Plugin) closeProxy(ctx context.Context, s server, raw []byte) (Response, error) {
	var in struct {
		User      userInfo `json:"user"`
		ProxyName string   `json:"proxy_name"`
	}
	if err := unmarshal(raw, &in); err != nil {
		return Response{}, errContent(OpCloseProxy)
	}
	account, credential, session, ok := in.User.ids()
	if !ok {
		if _, err := p.notOurs(ctx, s); err != nil {
			return Response{}, err
		}
		return admit, nil
	}
	for range 3 {
		a, err := p.read(ctx, s, account, credential, session)
		if err != nil {
			return Response{}, err
		}
		if a.session == nil {
			return admit, nil
		}
		if err := tunnels.Close(ctx, p.DB, a.session, in.ProxyName, in.User.generation()); !errors.Is(err, lease.ErrChanged) {
			return admit, err
		}
	}
	return admit, nil
}

// lower is s in lowercase without surrounding blanks: hosts as reservations hold them.
func lower(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
