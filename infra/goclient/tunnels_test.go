package goclient_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ngrok/ngrok-api-go/v8"
	"github.com/ngrok/ngrok-api-go/v8/tunnel_sessions"
	"github.com/ngrok/ngrok-api-go/v8/tunnels"
)

// patience is how long a wait for an agent's heartbeat polls.
const patience = time.Minute

// eventually polls cond until it returns nil, failing the test with its last error after
// patience.
func eventually(t *testing.T, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %v", patience, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// The tunnel_sessions and tunnels packages work against a live session of real frpc (v0.70.1)
// through real frps, which the driving test (shared/app's TestOfficialGoClient) started and
// names in NGROK_TUNNEL_SESSION, NGROK_TUNNEL_CREDENTIAL and NGROK_TUNNEL_URL: List and Get
// return it as frpc reported itself, Update answers the documented 400 (frp cannot update
// itself), Restart brings the agent back as a new session, and Stop ends it and its tunnel.
func TestTunnelSessions(t *testing.T) {
	cfg := clientConfig(t)
	session, credential, publicURL := os.Getenv("NGROK_TUNNEL_SESSION"), os.Getenv("NGROK_TUNNEL_CREDENTIAL"), os.Getenv("NGROK_TUNNEL_URL")
	if session == "" {
		t.Skip("NGROK_TUNNEL_SESSION is unset: shared/app's TestOfficialGoClient starts a session and names it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*patience)
	defer cancel()
	sessions, tuns := tunnel_sessions.NewClient(cfg), tunnels.NewClient(cfg)

	listed := collect(ctx, t, sessions.List(nil))
	if len(listed) != 1 || listed[0].ID != session {
		t.Fatalf("List: %v, want the one session %s", listed, session)
	}
	s, err := sessions.Get(ctx, session)
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != session || s.AgentVersion != "0.70.1" || s.OS != "linux" || !strings.HasPrefix(s.IP, "127.0.0.1") || s.Credential.ID != credential ||
		s.Transport == "" || s.Region == "" || s.StartedAt == "" || !strings.HasSuffix(s.URI, "/tunnel_sessions/"+session) {
		t.Errorf("Get: %#v", s)
	}
	if _, err := sessions.Get(ctx, "ts_"+strings.Repeat("0", 27)); !ngrok.IsNotFound(err) {
		t.Errorf("Get of an unknown session: %v, want a 404", err)
	}

	tl := collect(ctx, t, tuns.List(nil))
	if len(tl) != 1 || tl[0].TunnelSession.ID != session || tl[0].PublicURL != publicURL {
		t.Fatalf("tunnels List: %v, want one tunnel of %s at %s", tl, session, publicURL)
	}
	tun, err := tuns.Get(ctx, tl[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if tun.ID != tl[0].ID || tun.PublicURL != publicURL || tun.Proto != "http" || tun.TunnelSession.ID != session || tun.Region != s.Region || tun.StartedAt == "" {
		t.Errorf("tunnels Get: %#v", tun)
	}

	err = sessions.Update(ctx, session)
	var apiErr *ngrok.Error
	if e, ok := err.(*ngrok.Error); ok {
		apiErr = e
	}
	if apiErr == nil || apiErr.StatusCode != http.StatusBadRequest || apiErr.Msg == "" {
		t.Errorf("Update: %v, want the documented 400 (frp's client cannot update itself)", err)
	}

	if err := sessions.Restart(ctx, session); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	var next string
	eventually(t, func() error {
		l := collect(ctx, t, sessions.List(nil))
		if len(l) != 1 || l[0].ID == session {
			return fmt.Errorf("sessions after Restart: %v, want one new session", l)
		}
		next = l[0].ID
		return nil
	})
	eventually(t, func() error {
		l := collect(ctx, t, tuns.List(nil))
		if len(l) != 1 || l[0].TunnelSession.ID != next {
			return fmt.Errorf("tunnels after Restart: %v, want one of session %s", l, next)
		}
		return nil
	})
	if _, err := sessions.Get(ctx, session); !ngrok.IsNotFound(err) {
		t.Errorf("Get of the restarted session %s: %v, want a 404", session, err)
	}

	if err := sessions.Stop(ctx, next); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	eventually(t, func() error {
		if l := collect(ctx, t, sessions.List(nil)); len(l) != 0 {
			return fmt.Errorf("sessions after Stop: %v", l)
		}
		if l := collect(ctx, t, tuns.List(nil)); len(l) != 0 {
			return fmt.Errorf("tunnels after Stop: %v", l)
		}
		return nil
	})
}
