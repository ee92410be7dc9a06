package frpplugin_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"tunnelapi/shared/families/tunnels"
	"tunnelapi/shared/families/tunnels/lease"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/frpplugin"
	"tunnelapi/shared/workers/operator"
)

// operatorDo sends an operator request and fails unless it answers want.
func operatorDo(t *testing.T, s *testkit.Stack, method, path string, want int) {
	t.Helper()
	mux := http.NewServeMux()
	(&operator.Operator{DB: s.DB}).Register(mux, func(*http.Request, []byte) error { return nil })
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest(method, path, nil))
	if w.Code != want {
		t.Fatalf("%s %s answered %d %s, want %d", method, path, w.Code, w.Body, want)
	}
}

// session reads the stored session of login's rewrite; nil when it is gone.
func session(t *testing.T, s *testkit.Stack, login map[string]any) *lease.SessionItem {
	t.Helper()
	metas := login["metas"].(map[string]any)
	var it lease.SessionItem
	err := s.DB.Get(t.Context(), lease.SessionKey(metas[frpplugin.MetaAccount].(string), login["run_id"].(string)), &it)
	if store.IsNotFound(err) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	return &it
}

// Each revocation is written onto the sessions it ends, which a heartbeat reading the session
// alone (the lease is fresh: no renewal) refuses at once: a deleted credential's and a
// suspended account's sessions are marked revoked, a revoked server key's sessions lose the key
// they were verified by (their heartbeats read the key, and answer 401). Sessions of another
// credential, and those logged in through another server, are left alone.
func TestRevocationsMarkSessions(t *testing.T) {
	t.Run("credential deleted", func(t *testing.T) {
		s, a := testkit.AppAccount(t)
		g := newRig(t, s)
		cred := a.Do(t, "POST", "/credentials", map[string]any{}).Expect(t, http.StatusCreated)
		kept := a.Do(t, "POST", "/credentials", map[string]any{}).Expect(t, http.StatusCreated)["token"].(string)
		_, login := g.login(cred["token"].(string), "")
		_, other := g.login(kept, "")
		g.expect(frpplugin.OpPing, ping(user(login)), false, "")
		a.Do(t, "DELETE", "/credentials/"+cred["id"].(string), nil).Expect(t, http.StatusNoContent)
		if it := session(t, s, login); it == nil || it.Revoked == "" {
			t.Fatalf("the deleted credential's session is %+v, want it marked revoked", it)
		}
		if it := session(t, s, other); it == nil || it.Revoked != "" {
			t.Fatalf("another credential's session is %+v, want it live and unmarked", it)
		}
		g.expect(frpplugin.OpPing, ping(user(login)), true, "was deleted")
		if it := session(t, s, login); it != nil {
			t.Errorf("the refused heartbeat left the session %+v", it)
		}
		g.expect(frpplugin.OpPing, ping(user(other)), false, "")
	})
	t.Run("account suspended", func(t *testing.T) {
		s, a := testkit.AppAccount(t)
		g := newRig(t, s)
		token := a.Do(t, "POST", "/credentials", map[string]any{}).Expect(t, http.StatusCreated)["token"].(string)
		_, login := g.login(token, "")
		g.expect(frpplugin.OpPing, ping(user(login)), false, "")
		operatorDo(t, s, http.MethodPost, "/operator/tenants/"+a.AccountID+"/suspend", http.StatusOK)
		if it := session(t, s, login); it == nil || it.Revoked == "" {
			t.Fatalf("the suspended account's session is %+v, want it marked revoked", it)
		}
		// Resumed before the heartbeat: the session was ended by the suspension all the same.
		operatorDo(t, s, http.MethodPost, "/operator/tenants/"+a.AccountID+"/resume", http.StatusOK)
		g.expect(frpplugin.OpPing, ping(user(login)), true, "is suspended")
	})
	t.Run("server key revoked", func(t *testing.T) {
		s, a := testkit.AppAccount(t)
		g := newRig(t, s)
		token := a.Do(t, "POST", "/credentials", map[string]any{}).Expect(t, http.StatusCreated)["token"].(string)
		_, login := g.login(token, "")
		h := newRig(t, s) // another server, whose session stays
		_, other := h.login(token, "")
		g.expect(frpplugin.OpPing, ping(user(login)), false, "")
		if it := session(t, s, login); it == nil || it.KeyHash == "" {
			t.Fatalf("the session %+v records no server key", it)
		}
		operatorDo(t, s, http.MethodDelete, "/operator/tunnel_servers/"+g.key.ID, http.StatusNoContent)
		if it := session(t, s, login); it == nil || it.KeyHash != "" {
			t.Fatalf("the revoked server's session is %+v, want its key hash removed", it)
		}
		if it := session(t, s, other); it == nil || it.KeyHash == "" {
			t.Fatalf("another server's session is %+v, want its key hash kept", it)
		}
		if status, _, body := g.send(frpplugin.OpPing, ping(user(login))); status != http.StatusUnauthorized {
			t.Errorf("a revoked key's next heartbeat answered %d %s, want 401", status, body)
		}
		h.expect(frpplugin.OpPing, ping(user(other)), false, "")
	})
}

// A login racing a revocation either fails or committed before it (and is then marked, as
// TestRevocationsMarkSessions shows): the session's Start, run after the revocation committed
// (as when it commits between a login's reads and its transaction), is refused with
// tunnels.ErrRevoked and stores nothing.
func TestStartAfterRevocationRefused(t *testing.T) {
	s, a := testkit.AppAccount(t)
	g := newRig(t, s)
	cred := a.Do(t, "POST", "/credentials", map[string]any{}).Expect(t, http.StatusCreated)
	start := func(name, credential string, key operator.TunnelServer) {
		t.Helper()
		now := time.Now()
		id := ids.NewAt(ids.TunnelSession, now.UTC())
		it := &lease.SessionItem{Meta: store.Meta{Key: lease.SessionKey(a.AccountID, id), ID: id, AccountID: a.AccountID, CreatedAt: now.Unix(), Version: 1},
			CredentialID: credential, Region: key.Region, ServerID: key.ID, ServerName: key.Name, KeyHash: store.TokenHash(key.Secret),
			Behalf: audit.OnBehalf{PrincipalID: a.UserID, CredentialID: credential, BaseURL: "http://api.test"}}
		if err := tunnels.Start(t.Context(), s.DB, it, time.Minute); !errors.Is(err, tunnels.ErrRevoked) {
			t.Errorf("%s: Start answered %v, want tunnels.ErrRevoked", name, err)
		}
		var got lease.SessionItem
		if err := s.DB.Get(t.Context(), it.Key, &got); !store.IsNotFound(err) {
			t.Errorf("%s: the refused Start stored %+v (%v)", name, got, err)
		}
	}
	// The control: the same Start before any revocation succeeds.
	now := time.Now()
	id := ids.NewAt(ids.TunnelSession, now.UTC())
	ok := &lease.SessionItem{Meta: store.Meta{Key: lease.SessionKey(a.AccountID, id), ID: id, AccountID: a.AccountID, CreatedAt: now.Unix(), Version: 1},
		CredentialID: cred["id"].(string), Region: g.key.Region, ServerID: g.key.ID, ServerName: g.key.Name, KeyHash: store.TokenHash(g.key.Secret),
		Behalf: audit.OnBehalf{PrincipalID: a.UserID, BaseURL: "http://api.test"}}
	if err := tunnels.Start(t.Context(), s.DB, ok, time.Minute); err != nil {
		t.Fatalf("Start before any revocation: %v", err)
	}

	revoked := newRig(t, s).key
	operatorDo(t, s, http.MethodDelete, "/operator/tunnel_servers/"+revoked.ID, http.StatusNoContent)
	start("server key revoked", cred["id"].(string), revoked)

	gone := a.Do(t, "POST", "/credentials", map[string]any{}).Expect(t, http.StatusCreated)["id"].(string)
	a.Do(t, "DELETE", "/credentials/"+gone, nil).Expect(t, http.StatusNoContent)
	start("credential deleted", gone, g.key)

	operatorDo(t, s, http.MethodPost, "/operator/tenants/"+a.AccountID+"/suspend", http.StatusOK)
	start("account suspended", cred["id"].(string), g.key)
}

// The backstop for a crash between a revocation's commit and its marking: a session of a
// credential deleted without its sessions being marked is refused, and ended, by the heartbeat
// that renews its lease (at most half a lease after the deletion).
func TestUnmarkedRevocationEndsAtRenewal(t *testing.T) {
	s, a := testkit.AppAccount(t)
	g := newRig(t, s)
	cred := a.Do(t, "POST", "/credentials", map[string]any{}).Expect(t, http.StatusCreated)
	_, login := g.login(cred["token"].(string), "")
	g.expect(frpplugin.OpPing, ping(user(login)), false, "")
	// The credential's deletion as it commits, without the marking that follows it.
	tx := &store.Tx{}
	tx.Delete("credential", store.ResourceKey(a.AccountID, cred["id"].(string)))
	tx.Delete("token", store.TokenKey(store.TokenHash(cred["token"].(string))))
	if err := s.DB.Commit(t.Context(), tx); err != nil {
		t.Fatal(err)
	}
	it := session(t, s, login)
	if it == nil || it.Revoked != "" {
		t.Fatalf("the session is %+v, want it live and unmarked", it)
	}
	// Less than half of the rig's one-minute lease left: this heartbeat renews, reading all.
	if err := s.DB.SetNumber(t.Context(), it.Key, "lease_until", time.Now().Add(10*time.Second).Unix()); err != nil {
		t.Fatal(err)
	}
	g.expect(frpplugin.OpPing, ping(user(login)), true, "was deleted")
	if it := session(t, s, login); it != nil {
		t.Errorf("the refused heartbeat left the session %+v", it)
	}
}
