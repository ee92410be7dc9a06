package frpplugin_test

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tunnelapi/shared/testing/frptest"
	"tunnelapi/shared/testing/testkit"
)

// frpRelay forwards connections to a port on 127.0.0.1. Cut silences the connections open so
// far, as a path that drops everything would: nothing more crosses them either way, and neither
// end sees them close; later connections are forwarded.
type frpRelay struct {
	ln     net.Listener
	mu     sync.Mutex
	cut    []*atomic.Bool
	closed []net.Conn
}

// startRelay starts a relay to 127.0.0.1:to, stopped with the test.
func startRelay(t *testing.T, to int) *frpRelay {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &frpRelay{ln: ln}
	t.Cleanup(func() {
		ln.Close()
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, c := range r.closed {
			c.Close()
		}
	})
	go func() {
		for {
			down, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", to))
			if err != nil {
				down.Close()
				continue
			}
			silenced := &atomic.Bool{}
			r.mu.Lock()
			r.cut = append(r.cut, silenced)
			r.closed = append(r.closed, down, up)
			r.mu.Unlock()
			go relayCopy(up, down, silenced)
			go relayCopy(down, up, silenced)
		}
	}()
	return r
}

// relayCopy copies src to dst until src ends, dropping what it reads once silenced; it closes
// dst at the end only while not silenced.
func relayCopy(dst, src net.Conn, silenced *atomic.Bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !silenced.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !silenced.Load() {
				dst.Close()
			}
			return
		}
	}
}

// Cut silences every connection open now.
func (r *frpRelay) Cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.cut {
		c.Store(true)
	}
}

// Port is where the relay listens.
func (r *frpRelay) Port() int { return r.ln.Addr().(*net.TCPAddr).Port }

// frpc whose connection to frps goes silent reconnects with its session's id while frps still
// holds the old connection: frps replaces it, reports its proxy closed from a goroutine of its
// own and opens the new connection's, in either order. The tunnel serves on, and stays listed
// with its endpoint once the replaced connection's close has been reported.
func TestFrpReconnectKeepsTheTunnel(t *testing.T) {
	s, a := testkit.AppAccount(t)
	// frps waits long for heartbeats: it never drops the silent connection itself.
	p := frptest.StartPlane(t, s, frptest.PlaneConfig{Lease: time.Minute})
	host, _ := a.ReserveDomain(t)
	_, token := frpCredential(t, a, "bind:"+host)
	relay := startRelay(t, p.BindPort)
	agent := frptest.RunClient(t, frptest.ClientTOML(frptest.ClientConfig{Token: p.Token, Authtoken: token, HeartbeatInterval: time.Second,
		Extra:   "transport.heartbeatTimeout = 3",
		Proxies: []frptest.Proxy{{Name: "web", Type: "http", LocalPort: frpUpstream(t, "upstream"), CustomDomains: []string{host}}}}, relay.Port()))
	session := agent.WaitLogin(t)
	agent.WaitProxy(t, "web")
	frpServes(t, p, host, "upstream")

	relay.Cut()
	const login = "login to server success, get run id [" + "%s]"
	frptest.Eventually(t, frptest.Patience, func() error {
		if n := strings.Count(agent.Log(), fmt.Sprintf(login, session)); n < 2 {
			return fmt.Errorf("frpc has not logged in again with %s yet", session)
		}
		if n := strings.Count(agent.Log(), "[web] start proxy success"); n < 2 {
			return fmt.Errorf("frpc has not started its proxy again yet")
		}
		if !strings.Contains(p.Log(), "client exit success") {
			return fmt.Errorf("frps has not finished the replaced connection yet")
		}
		return nil
	})
	frpServes(t, p, host, "upstream")
	// The replaced connection's CloseProxy leaves frps in a goroutine once it logged the exit:
	// whenever it arrives, the tunnel stays.
	for range 12 {
		if l := frpListed(t, a, "/tunnels", "tunnels"); len(l) != 1 {
			t.Fatalf("after the reconnect the tunnels are %v, want the one frpc serves", l)
		}
		if l := frpListed(t, a, "/endpoints", "endpoints"); len(l) != 1 || l[0]["type"] != "ephemeral" {
			t.Fatalf("after the reconnect the endpoints are %v, want the tunnel's", l)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if l := frpListed(t, a, "/tunnel_sessions", "tunnel_sessions"); len(l) != 1 || l[0]["id"] != session {
		t.Errorf("after the reconnect the sessions are %v, want %s", l, session)
	}
	if code, _ := p.Get(host, "/"); code != http.StatusOK {
		t.Errorf("after the reconnect %s answers %d", host, code)
	}
}
