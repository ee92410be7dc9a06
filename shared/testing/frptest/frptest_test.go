package frptest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tunnelapi/shared/testing/frptest"
)

// call is one request frps made to the plugin.
type call struct {
	Query, User, Password, ContentType string
	Body                               struct {
		Version string         `json:"version"`
		Op      string         `json:"op"`
		Content map[string]any `json:"content"`
	}
}

// plugin is a tiny frps HTTP plugin: Login admits metas.authtoken "good" (rewriting run_id to
// runID and the authtoken to credID) and refuses any other; NewProxy refuses the custom domain
// "refused.test"; Ping is refused while rejectPings is set. It records every call.
type plugin struct {
	*httptest.Server
	mu          sync.Mutex
	calls       []call
	rejectPings atomic.Bool
}

const (
	runID  = "ts_fromplugin"
	credID = "cr_fromplugin"
)

func newPlugin(t *testing.T) *plugin {
	p := &plugin{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var c call
		c.Query, c.ContentType = r.URL.RawQuery, r.Header.Get("Content-Type")
		c.User, c.Password, _ = r.BasicAuth()
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &c.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.calls = append(p.calls, c)
		p.mu.Unlock()
		// The answer's content is a copy of the request's, so the recorded call stays as sent.
		var req struct {
			Content map[string]any `json:"content"`
		}
		json.Unmarshal(b, &req)
		content := req.Content
		answer := map[string]any{"reject": false, "unchange": true}
		switch c.Body.Op {
		case "Login":
			metas, _ := content["metas"].(map[string]any)
			if metas["authtoken"] != "good" {
				answer = map[string]any{"reject": true, "reject_reason": "the authtoken is not one of this test's"}
				break
			}
			content["run_id"] = runID
			metas["authtoken"] = credID
			answer = map[string]any{"reject": false, "unchange": false, "content": content}
		case "NewProxy":
			if domains, _ := content["custom_domains"].([]any); len(domains) > 0 && domains[0] == "refused.test" {
				answer = map[string]any{"reject": true, "reject_reason": "refused.test is reserved by another account"}
			}
		case "Ping":
			if p.rejectPings.Load() {
				answer = map[string]any{"reject": true, "reject_reason": "the session was stopped"}
			}
		}
		json.NewEncoder(w).Encode(answer)
	}))
	t.Cleanup(p.Close)
	return p
}

// of returns the calls of op so far.
func (p *plugin) of(op string) []call {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []call
	for _, c := range p.calls {
		if c.Body.Op == op {
			out = append(out, c)
		}
	}
	return out
}

// upstream is a local HTTP server answering every request with its own name and the Host.
func upstream(t *testing.T, name string) int {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s saw %s", name, r.Host)
	}))
	t.Cleanup(s.Close)
	return s.Listener.Addr().(*net.TCPAddr).Port
}

func startServer(t *testing.T, p *plugin) *frptest.Server {
	return frptest.StartServer(t, frptest.ServerConfig{
		PluginAddr:       strings.Replace(p.URL, "http://", "http://edge-1.us:s3cret@", 1),
		PluginPath:       "/frp/plugin",
		SubDomainHost:    "tunnels.test",
		HeartbeatTimeout: 5 * time.Second,
	})
}

// The harness drives real frps and frpc through a plugin that admits, refuses and rewrites,
// and pins what issue 38 measured of frps v0.70.1's plugin protocol: the request's shape and
// Basic auth from the address, Login's content and its rewrite (run_id becomes the session's id
// and the rewritten metas are what later operations carry), NewProxy's content, a refusal's
// reason in frpc's log, Pings only with a heartbeat, and a refused Ping dropping the agent's
// tunnels, after which frpc logs in again with the same run id.
func TestHarnessAgainstATinyPlugin(t *testing.T) {
	p := newPlugin(t)
	srv := startServer(t, p)
	up := upstream(t, "upstream")
	c := srv.StartClient(t, frptest.ClientConfig{
		Authtoken: "good",
		Metadatas: map[string]string{"team": "edge"},
		Proxies: []frptest.Proxy{
			{Name: "web", Type: "http", LocalPort: up, CustomDomains: []string{"app.example.test"}, Metadatas: map[string]string{"env": "test"}},
			{Name: "sub", Type: "http", LocalPort: up, Subdomain: "blue"},
			{Name: "taken", Type: "http", LocalPort: up, CustomDomains: []string{"refused.test"}},
		},
	})
	if id := c.WaitLogin(t); id != runID {
		t.Errorf("frpc's run id is %q, want the plugin's rewrite %q", id, runID)
	}
	c.WaitProxy(t, "web")
	c.WaitProxy(t, "sub")
	if reason := c.ProxyRefusal(t, "taken"); !strings.Contains(reason, "refused.test is reserved by another account") {
		t.Errorf("frpc logged the refusal as %q, want the plugin's reason", reason)
	}
	frptest.Eventually(t, frptest.Patience, func() error {
		if code, body := srv.Get("app.example.test", "/"); code != 200 || body != "upstream saw app.example.test" {
			return fmt.Errorf("GET through the vhost port: %d %q", code, body)
		}
		if code, body := srv.Get("blue.tunnels.test", "/"); code != 200 || body != "upstream saw blue.tunnels.test" {
			return fmt.Errorf("GET of the subdomain: %d %q", code, body)
		}
		return nil
	})
	if code, _ := srv.Get("refused.test", "/"); code != http.StatusNotFound {
		t.Errorf("the refused proxy's host answered %d, want 404", code)
	}

	logins := p.of("Login")
	if len(logins) != 1 {
		t.Fatalf("%d Login calls, want 1", len(logins))
	}
	l := logins[0]
	if l.Query != "op=Login&version=0.1.0" || l.ContentType != "application/json" || l.Body.Version != "0.1.0" || l.Body.Op != "Login" {
		t.Errorf("Login request: query %q, content type %q, version %q, op %q", l.Query, l.ContentType, l.Body.Version, l.Body.Op)
	}
	if l.User != "edge-1.us" || l.Password != "s3cret" {
		t.Errorf("Login's Basic auth is %q:%q, want the address's edge-1.us:s3cret", l.User, l.Password)
	}
	for _, k := range []string{"version", "hostname", "os", "arch", "privilege_key", "timestamp", "metas", "client_address", "pool_count"} {
		if _, ok := l.Body.Content[k]; !ok {
			t.Errorf("Login content lacks %q: %v", k, l.Body.Content)
		}
	}
	if l.Body.Content["version"] != "0.70.1" || (l.Body.Content["run_id"] != nil && l.Body.Content["run_id"] != "") || !strings.HasPrefix(fmt.Sprint(l.Body.Content["client_address"]), "127.0.0.1:") {
		t.Errorf("Login content: version %v, run_id %v (a first login has none), client_address %v", l.Body.Content["version"], l.Body.Content["run_id"], l.Body.Content["client_address"])
	}
	if m, _ := l.Body.Content["metas"].(map[string]any); m["authtoken"] != "good" || m["team"] != "edge" {
		t.Errorf("Login metas %v, want frpc's metadatas", m)
	}

	var web map[string]any
	for _, np := range p.of("NewProxy") {
		if np.Body.Content["proxy_name"] == "web" {
			web = np.Body.Content
		}
	}
	if web == nil {
		t.Fatal("no NewProxy call for proxy web")
	}
	user, _ := web["user"].(map[string]any)
	if metas, _ := user["metas"].(map[string]any); user["run_id"] != runID || metas["authtoken"] != credID {
		t.Errorf("NewProxy's user is %v: want the rewritten run_id %q and authtoken %q", user, runID, credID)
	}
	if pm, _ := web["metas"].(map[string]any); web["proxy_type"] != "http" || fmt.Sprint(web["custom_domains"]) != "[app.example.test]" || pm["env"] != "test" {
		t.Errorf("NewProxy content: %v", web)
	}

	// Pings come with the heartbeat, carrying the session's user.
	frptest.Eventually(t, frptest.Patience, func() error {
		pings := p.of("Ping")
		if len(pings) == 0 {
			return fmt.Errorf("no Ping yet")
		}
		if u, _ := pings[0].Body.Content["user"].(map[string]any); u["run_id"] != runID {
			return fmt.Errorf("Ping's user is %v, want run_id %q", u, runID)
		}
		return nil
	})

	// A refused Ping drops the agent: its tunnel stops serving, and frpc logs in again with
	// the run id it was given.
	p.rejectPings.Store(true)
	frptest.Eventually(t, frptest.Patience, func() error {
		if code, _ := srv.Get("app.example.test", "/"); code != http.StatusNotFound {
			return fmt.Errorf("the tunnel still answers %d after its Ping was refused", code)
		}
		return nil
	})
	frptest.Eventually(t, frptest.Patience, func() error {
		for _, l := range p.of("Login")[1:] {
			if l.Body.Content["run_id"] == runID {
				return nil
			}
		}
		return fmt.Errorf("no second Login with run_id %q", runID)
	})
	frptest.Eventually(t, frptest.Patience, func() error {
		if len(p.of("CloseProxy")) == 0 {
			return fmt.Errorf("no CloseProxy after the agent was dropped")
		}
		return nil
	})
	if _, exited := c.Exited(); exited {
		t.Errorf("frpc exited after a dropped session; it should keep reconnecting:\n%s", c.Log())
	}
}

// A refused login makes frpc (loginFailExit, the default here) exit non-zero with the
// plugin's reason in its log.
func TestRefusedLoginExitsNonZero(t *testing.T) {
	p := newPlugin(t)
	srv := startServer(t, p)
	c := srv.StartClient(t, frptest.ClientConfig{Authtoken: "bad"})
	if code := c.Wait(t); code == 0 {
		t.Errorf("frpc exited 0 after a refused login")
	}
	if !strings.Contains(c.Log(), "the authtoken is not one of this test's") {
		t.Errorf("frpc's log lacks the plugin's reason:\n%s", c.Log())
	}
}

// Without transport.heartbeatInterval, frpc sends no Ping (so frpc.toml must set it); killing
// frps with SIGKILL ends its listeners while frpc keeps running, trying to reconnect.
func TestNoHeartbeatNoPingAndKill(t *testing.T) {
	p := newPlugin(t)
	srv := frptest.StartServer(t, frptest.ServerConfig{PluginAddr: p.URL, PluginPath: "/frp/plugin"})
	up := upstream(t, "upstream")
	c := srv.StartClient(t, frptest.ClientConfig{Authtoken: "good", HeartbeatInterval: -1, Proxies: []frptest.Proxy{
		{Name: "web", Type: "http", LocalPort: up, CustomDomains: []string{"app.example.test"}},
	}})
	c.WaitProxy(t, "web")
	frptest.Eventually(t, frptest.Patience, func() error {
		if code, _ := srv.Get("app.example.test", "/"); code != 200 {
			return fmt.Errorf("GET through the vhost port: %d", code)
		}
		return nil
	})
	// frp's own default interval is 30 s, but with tcpMux there is none: at 1 s, three would
	// have come by now. (Only a Ping can fail this; a slow machine can make it pass wrongly,
	// never fail wrongly.)
	time.Sleep(3 * time.Second)
	if n := len(p.of("Ping")); n != 0 {
		t.Errorf("%d Pings without transport.heartbeatTimeout on frps", n)
	}
	srv.Kill()
	if code, exited := srv.Exited(); !exited || code != -1 {
		t.Errorf("frps after SIGKILL: exited %t, code %d", exited, code)
	}
	if _, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", srv.VhostHTTPPort), time.Second); err == nil {
		t.Error("the vhost port still accepts connections after frps was killed")
	}
	c.WaitLine(t, "connect to server error")
	if _, exited := c.Exited(); exited {
		t.Errorf("frpc exited when frps was killed; it should keep trying:\n%s", c.Log())
	}
}

// The generated files say what the tests and make run rely on.
func TestConfigTOML(t *testing.T) {
	s := frptest.ServerTOML(frptest.ServerConfig{PluginAddr: "http://a.us:x@127.0.0.1:1", PluginPath: "/frp/plugin", SubDomainHost: "t.test", HeartbeatTimeout: 3 * time.Second}, 1000, 1001, "tok")
	for _, want := range []string{"bindPort = 1000\n", "vhostHTTPPort = 1001\n", `auth.token = "tok"`, `subDomainHost = "t.test"`, "transport.heartbeatTimeout = 3\n",
		`addr = "http://a.us:x@127.0.0.1:1"`, `path = "/frp/plugin"`, `ops = ["Login", "NewProxy", "CloseProxy", "Ping"]`} {
		if !strings.Contains(s, want) {
			t.Errorf("frps.toml lacks %q:\n%s", want, s)
		}
	}
	c := frptest.ClientTOML(frptest.ClientConfig{Token: "tok", Authtoken: `a"b`, Proxies: []frptest.Proxy{{Name: "p", Type: "tcp", LocalPort: 2, RemotePort: 3, Metadatas: map[string]string{"k.x": "v"}}}}, 1000)
	for _, want := range []string{"serverPort = 1000\n", "loginFailExit = true\n", "transport.heartbeatInterval = 1\n", `metadatas."authtoken" = "a\"b"`,
		"[[proxies]]\n", `type = "tcp"`, "remotePort = 3\n", `metadatas."k.x" = "v"`} {
		if !strings.Contains(c, want) {
			t.Errorf("frpc.toml lacks %q:\n%s", want, c)
		}
	}
}
