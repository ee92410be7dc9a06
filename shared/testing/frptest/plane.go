package frptest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/frpplugin"
	"tunnelapi/shared/workers/operator"
)

// PlaneConfig is what a test sets of a Plane; zero fields take the defaults said.
type PlaneConfig struct {
	// Lease is the sessions' lease (the plugin's TUNNEL_LEASE) and frps's heartbeat timeout
	// (default 4 s; agents beat every second).
	Lease time.Duration
	// DB is the table the plugin answers from (default the stack's): a faults.Store's, to cut
	// the plugin off DynamoDB while the tenants' API keeps its own way.
	DB *store.DB
}

// Plane is a data plane in front of a test stack: real frps whose HTTP plugin is the API's
// (package frpplugin, on an httptest server of its own beside the stack's, answering from the
// stack's table) and authenticated by a tunnel-server key minted through the operator's routes.
type Plane struct {
	*Server
	// Plugin is the plugin frps asks; PluginURL where it serves.
	Plugin    *frpplugin.Plugin
	PluginURL string
	// Key is the tunnel-server key frps authenticates with (its secret included).
	Key operator.TunnelServer
	// BaseDomain is the deployment's base domain: frps's subDomainHost.
	BaseDomain string
	// Operator serves the operator's routes on the stack's table, every request admitted.
	Operator *httptest.Server
}

// StartPlane mints a tunnel-server key on s's table through the operator's routes and starts
// frps with its plugin pointed at frpplugin serving s's table (or c.DB).
func StartPlane(t testing.TB, s *testkit.Stack, c PlaneConfig) *Plane {
	t.Helper()
	if c.Lease <= 0 {
		c.Lease = 4 * time.Second
	}
	db := c.DB
	if db == nil {
		db = s.DB
	}
	cfg := testkit.Config(t, config.LoadTunnelPlugin)
	p := &Plane{BaseDomain: cfg.Domains.BaseDomain,
		Plugin: &frpplugin.Plugin{DB: db, Domains: cfg.Domains, Lease: c.Lease, Log: testkit.Logger()}}
	mux := http.NewServeMux()
	p.Plugin.Register(mux)
	plugin := httptest.NewServer(mux)
	t.Cleanup(plugin.Close)
	p.PluginURL = plugin.URL

	p.Operator = OperatorServer(t, s.DB, cfg.Domains.Regions)
	p.Key = p.MintKey(t, "edge-test", cfg.Domains.Regions[0])

	u, _ := url.Parse(plugin.URL)
	u.User = url.UserPassword(p.Key.Name+"."+p.Key.Region, p.Key.Secret)
	p.Server = StartServer(t, ServerConfig{PluginAddr: u.String(), PluginPath: "/frp/plugin", SubDomainHost: p.BaseDomain, HeartbeatTimeout: c.Lease})
	return p
}

// OperatorServer serves the operator's routes on db's table for the test, every request
// admitted (the local server and AWS check signatures; the tests of those do).
func OperatorServer(t testing.TB, db *store.DB, regions []string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	(&operator.Operator{DB: db, Regions: regions, Log: testkit.Logger()}).Register(mux, func(*http.Request, []byte) error { return nil })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// MintKey mints a tunnel-server key through the operator's POST /operator/tunnel_servers at
// the operator server op (OperatorServer).
func MintKey(t testing.TB, op *httptest.Server, name, region string) operator.TunnelServer {
	t.Helper()
	var key operator.TunnelServer
	operatorDo(t, op, http.MethodPost, "/operator/tunnel_servers", map[string]string{"name": name, "region": region}, http.StatusCreated, &key)
	if key.Secret == "" {
		t.Fatalf("frptest: the minted key %+v has no secret", key)
	}
	return key
}

// MintKey mints another tunnel-server key through the plane's operator server.
func (p *Plane) MintKey(t testing.TB, name, region string) operator.TunnelServer {
	t.Helper()
	return MintKey(t, p.Operator, name, region)
}

// RevokeKey deletes a tunnel-server key through the operator's routes.
func (p *Plane) RevokeKey(t testing.TB, id string) {
	t.Helper()
	operatorDo(t, p.Operator, http.MethodDelete, "/operator/tunnel_servers/"+url.PathEscape(id), nil, http.StatusNoContent, nil)
}

func operatorDo(t testing.TB, op *httptest.Server, method, path string, body any, want int, out any) {
	t.Helper()
	c := operator.Client{Base: op.URL, Authorize: func(*http.Request, []byte) error { return nil }}
	status, raw, err := c.Do(t.Context(), method, path, body)
	if err != nil || status != want {
		t.Fatalf("frptest: %s %s: %d %s %v", method, path, status, raw, err)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("frptest: %s %s answered %s: %v", method, path, raw, err)
		}
	}
}

// Agent starts frpc as the agent of the credential whose token is authtoken, beating every
// second, with proxies. It does not wait for the login.
func (p *Plane) Agent(t testing.TB, authtoken string, proxies ...Proxy) *Client {
	t.Helper()
	return p.StartClient(t, ClientConfig{Authtoken: authtoken, HeartbeatInterval: time.Second, Proxies: proxies})
}
