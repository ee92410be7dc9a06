// Package frptest runs real frp (frps and frpc, built from source by infra/frp/build.sh into the
// checkout's .local/bin/) for tests: a server with its HTTP plugin pointed at a given address,
// on free local ports, and clients with a given configuration. Each process's log is captured
// so a test can wait for a line or assert a refusal reason; every process is killed when the
// test ends, and a server can be killed with SIGKILL mid-test, as a crashed node would be. A
// Plane is such a server in front of a test stack: its plugin is the API's (package frpplugin)
// on the stack's table, authenticated by a tunnel-server key minted through the operator's routes.
//
// Only loopback addresses are used. Waits poll with generous deadlines (Patience) and decide
// by what the processes say, never by how long something took.
package frptest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"tunnelapi/shared/testing/testkit"
)

// Patience is how long a wait polls before it fails the test: long enough for two loaded cores.
const Patience = 60 * time.Second

// PluginOps are the operations a server sends its plugin unless told otherwise.
var PluginOps = []string{"Login", "NewProxy", "CloseProxy", "Ping"}

// Binaries returns the paths of frps and frpc, building them first (infra/frp/build.sh, which
// waits for a build already running) when .local/bin/ lacks them at the pinned version.
func Binaries(t testing.TB) (frps, frpc string) {
	t.Helper()
	dir, err := built()
	if err != nil {
		t.Fatalf("frptest: %v", err)
	}
	return filepath.Join(dir, "frps"), filepath.Join(dir, "frpc")
}

var built = sync.OnceValues(func() (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(filepath.Join(root, "infra", "frp", "build.sh"))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("infra/frp/build.sh: %v\n%s", err, out)
	}
	return filepath.Join(root, ".local", "bin"), nil
})

// Root returns the checkout's root: the nearest folder above the working directory whose
// go.mod declares module tunnelapi.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(b, []byte("module tunnelapi\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of module tunnelapi above the working directory")
		}
		dir = parent
	}
}

// ServerConfig is what a test sets of frps; zero fields take the defaults said.
type ServerConfig struct {
	// PluginAddr is the HTTP plugin's address as frps takes it (scheme, optional user:password
	// for Basic auth, host and port); PluginPath its path. Without PluginAddr, no plugin.
	PluginAddr, PluginPath string
	// PluginOps are the operations sent to the plugin (default PluginOps).
	PluginOps []string
	// Token is the fleet-wide auth.token (default: a fixed test value).
	Token string
	// BindPort is where agents connect, VhostHTTPPort where HTTP virtual hosts are served
	// (default: free ports).
	BindPort, VhostHTTPPort int
	// SubDomainHost is the domain a proxy's subdomain is served under (default: none).
	SubDomainHost string
	// HeartbeatTimeout is how long frps waits for an agent's heartbeat (default 90 s; frps
	// rounds it to whole seconds). Agents send heartbeats only when it is set.
	HeartbeatTimeout time.Duration
	// Extra is more TOML, appended to the generated file as it is.
	Extra string
}

// Server is a running frps.
type Server struct {
	// BindPort and VhostHTTPPort are the ports it serves; Token its auth.token.
	BindPort, VhostHTTPPort int
	Token                   string
	// Config is the TOML it was started from.
	Config string
	*Process
}

// DefaultToken is the auth.token servers and clients use unless a test sets its own.
const DefaultToken = "frptest-fleet-token"

// StartServer starts frps with c and returns once both its ports accept connections.
func StartServer(t testing.TB, c ServerConfig) *Server {
	t.Helper()
	frps, _ := Binaries(t)
	s := &Server{BindPort: c.BindPort, VhostHTTPPort: c.VhostHTTPPort, Token: c.Token}
	if s.BindPort == 0 {
		s.BindPort = testkit.FreePort(t)
	}
	if s.VhostHTTPPort == 0 {
		s.VhostHTTPPort = testkit.FreePort(t)
	}
	if s.Token == "" {
		s.Token = DefaultToken
	}
	s.Config = ServerTOML(c, s.BindPort, s.VhostHTTPPort, s.Token)
	s.Process = start(t, "frps", frps, s.Config)
	s.WaitPorts(t, s.BindPort, s.VhostHTTPPort)
	return s
}

// ServerTOML is frps's configuration for c on the given ports and token.
func ServerTOML(c ServerConfig, bindPort, vhostPort int, token string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "bindAddr = \"127.0.0.1\"\nbindPort = %d\nproxyBindAddr = \"127.0.0.1\"\nvhostHTTPPort = %d\n", bindPort, vhostPort)
	fmt.Fprintf(&b, "auth.method = \"token\"\nauth.token = %s\n", quote(token))
	if c.SubDomainHost != "" {
		fmt.Fprintf(&b, "subDomainHost = %s\n", quote(c.SubDomainHost))
	}
	if c.HeartbeatTimeout > 0 {
		fmt.Fprintf(&b, "transport.heartbeatTimeout = %d\n", max(1, int(c.HeartbeatTimeout.Round(time.Second)/time.Second)))
	}
	b.WriteString("log.to = \"console\"\nlog.level = \"info\"\nlog.disablePrintColor = true\n")
	if c.Extra != "" {
		b.WriteString(c.Extra + "\n")
	}
	if c.PluginAddr != "" {
		ops := c.PluginOps
		if ops == nil {
			ops = PluginOps
		}
		fmt.Fprintf(&b, "\n[[httpPlugins]]\nname = \"tunnelapi\"\naddr = %s\npath = %s\nops = %s\n", quote(c.PluginAddr), quote(c.PluginPath), list(ops))
	}
	return b.String()
}

// Proxy is one [[proxies]] entry of frpc.
type Proxy struct {
	// Name and Type ("http", "tcp", …) are required.
	Name, Type string
	// LocalPort is the upstream on 127.0.0.1.
	LocalPort int
	// CustomDomains and Subdomain name an HTTP proxy's hosts; RemotePort a TCP proxy's port.
	CustomDomains []string
	Subdomain     string
	RemotePort    int
	// Metadatas are the proxy's metadatas (a tunnel's labels).
	Metadatas map[string]string
}

// ClientConfig is what a test sets of frpc.
type ClientConfig struct {
	// Authtoken goes in metadatas.authtoken, where the plugin finds the agent's credential.
	Authtoken string
	// Metadatas are more client metadatas.
	Metadatas map[string]string
	// Token overrides the server's auth.token.
	Token string
	// HeartbeatInterval is transport.heartbeatInterval (default 1 s; whole seconds); negative
	// leaves it out, and frpc (with its default tcpMux) then sends no heartbeat at all.
	HeartbeatInterval time.Duration
	// KeepRetrying sets loginFailExit = false: frpc retries a refused first login instead of
	// exiting non-zero.
	KeepRetrying bool
	Proxies      []Proxy
	// Extra is more TOML, appended before the proxies as it is.
	Extra string
}

// Client is a running frpc.
type Client struct {
	// Config is the TOML it was started from.
	Config string
	*Process
}

// StartClient starts frpc against s with c. It does not wait for the login: see WaitLogin,
// WaitProxy and Process.Wait.
func (s *Server) StartClient(t testing.TB, c ClientConfig) *Client {
	t.Helper()
	if c.Token == "" {
		c.Token = s.Token
	}
	return RunClient(t, ClientTOML(c, s.BindPort))
}

// RunClient starts frpc from the configuration config (a file a test did not generate, such
// as the one make run writes, with proxies added). It does not wait for the login.
func RunClient(t testing.TB, config string) *Client {
	t.Helper()
	_, frpc := Binaries(t)
	return &Client{Config: config, Process: start(t, "frpc", frpc, config)}
}

// ClientTOML is frpc's configuration for c against a server on 127.0.0.1:serverPort.
func ClientTOML(c ClientConfig, serverPort int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "serverAddr = \"127.0.0.1\"\nserverPort = %d\nloginFailExit = %t\n", serverPort, !c.KeepRetrying)
	fmt.Fprintf(&b, "auth.method = \"token\"\nauth.token = %s\n", quote(c.Token))
	if hb := c.HeartbeatInterval; hb >= 0 {
		if hb == 0 {
			hb = time.Second
		}
		fmt.Fprintf(&b, "transport.heartbeatInterval = %d\n", max(1, int(hb.Round(time.Second)/time.Second)))
	}
	b.WriteString("log.to = \"console\"\nlog.level = \"info\"\nlog.disablePrintColor = true\n")
	metas := map[string]string{}
	for k, v := range c.Metadatas {
		metas[k] = v
	}
	if c.Authtoken != "" {
		metas["authtoken"] = c.Authtoken
	}
	writeMetas(&b, metas)
	if c.Extra != "" {
		b.WriteString(c.Extra + "\n")
	}
	for _, p := range c.Proxies {
		b.WriteString(p.TOML())
	}
	return b.String()
}

// TOML is the proxy as a [[proxies]] entry, to append to a client's configuration.
func (p Proxy) TOML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n[[proxies]]\nname = %s\ntype = %s\nlocalIP = \"127.0.0.1\"\nlocalPort = %d\n", quote(p.Name), quote(p.Type), p.LocalPort)
	if len(p.CustomDomains) > 0 {
		fmt.Fprintf(&b, "customDomains = %s\n", list(p.CustomDomains))
	}
	if p.Subdomain != "" {
		fmt.Fprintf(&b, "subdomain = %s\n", quote(p.Subdomain))
	}
	if p.RemotePort != 0 {
		fmt.Fprintf(&b, "remotePort = %d\n", p.RemotePort)
	}
	writeMetas(&b, p.Metadatas)
	return b.String()
}

// writeMetas writes metadatas as dotted keys, sorted so a file reads the same every time.
func writeMetas(b *strings.Builder, m map[string]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "metadatas.%s = %s\n", quote(k), quote(m[k]))
	}
}

// quote is s as a TOML basic string: JSON's escapes are a subset of TOML's.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// list is ss as a TOML array of strings.
func list(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// WaitLogin waits until the client logs its login and returns the run id the server gave it.
// It fails the test if frpc exits first.
func (c *Client) WaitLogin(t testing.TB) string {
	t.Helper()
	const marker = "login to server success, get run id ["
	line := c.WaitLine(t, marker)
	id, _, _ := strings.Cut(line[strings.Index(line, marker)+len(marker):], "]")
	return id
}

// WaitProxy waits until frpc reports proxy name started, or fails the test with the refusal
// frpc logged for it.
func (c *Client) WaitProxy(t testing.TB, name string) {
	t.Helper()
	ok, refused := "["+name+"] start proxy success", "["+name+"] start error: "
	c.wait(t, ok+" (or a refusal)", func(log string) bool {
		if i := strings.Index(log, refused); i >= 0 {
			line, _, _ := strings.Cut(log[i:], "\n")
			t.Fatalf("frptest: frpc refused proxy %s: %s", name, line)
		}
		return strings.Contains(log, ok)
	})
}

// ProxyRefusal waits until frpc reports proxy name refused and returns the reason it logged;
// it fails the test if the proxy starts instead.
func (c *Client) ProxyRefusal(t testing.TB, name string) string {
	t.Helper()
	ok, refused := "["+name+"] start proxy success", "["+name+"] start error: "
	var reason string
	c.wait(t, refused, func(log string) bool {
		if strings.Contains(log, ok) {
			t.Fatalf("frptest: proxy %s started; it should have been refused", name)
		}
		i := strings.Index(log, refused)
		if i < 0 {
			return false
		}
		reason, _, _ = strings.Cut(log[i+len(refused):], "\n")
		return true
	})
	return reason
}

// Process is a running frps or frpc, its output captured.
type Process struct {
	name string
	cmd  *exec.Cmd
	log  *testkit.SyncBuffer
	done chan struct{}
	err  error // set before done closes
}

// start runs bin -c <config written to a temporary file>, killed when the test ends.
func start(t testing.TB, name, bin, config string) *Process {
	t.Helper()
	file := filepath.Join(t.TempDir(), name+".toml")
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &Process{name: name, log: &testkit.SyncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, "-c", file)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("frptest: start %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("%s's log:\n%s", name, p.Log())
		}
	})
	return p
}

// Log is everything the process wrote so far.
func (p *Process) Log() string { return p.log.String() }

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended, and its exit code then (-1 when a signal
// ended it).
func (p *Process) Exited() (code int, exited bool) {
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode(), true
	default:
		return 0, false
	}
}

// Wait waits until the process ends and returns its exit code (-1 when a signal ended it); it
// fails the test if the process is still running after Patience.
func (p *Process) Wait(t testing.TB) int {
	t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(Patience):
		t.Fatalf("frptest: %s still runs after %s; its log:\n%s", p.name, Patience, p.Log())
		return 0
	}
}

// Kill ends the process with SIGKILL, as a crash would, and waits until it is gone; a process
// already ended is left as it is.
func (p *Process) Kill() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Stop ends the process with SIGTERM (a graceful exit) and waits until it is gone; after
// Patience it is killed.
func (p *Process) Stop() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(Patience):
		p.Kill()
	}
}

// WaitLine waits until the log holds substr and returns the first line holding it; it fails
// the test if the process exits first or after Patience.
func (p *Process) WaitLine(t testing.TB, substr string) string {
	t.Helper()
	var line string
	p.wait(t, substr, func(log string) bool {
		i := strings.Index(log, substr)
		if i < 0 {
			return false
		}
		start := strings.LastIndexByte(log[:i], '\n') + 1
		line, _, _ = strings.Cut(log[start:], "\n")
		return true
	})
	return line
}

// wait polls the log with done until it returns true; it fails the test when the process has
// exited and done still says no, or after Patience.
func (p *Process) wait(t testing.TB, what string, done func(log string) bool) {
	t.Helper()
	deadline := time.Now().Add(Patience)
	for {
		_, exited := p.Exited()
		if done(p.Log()) {
			return
		}
		if exited {
			t.Fatalf("frptest: %s exited before logging %q; its log:\n%s", p.name, what, p.Log())
		}
		if time.Now().After(deadline) {
			t.Fatalf("frptest: %s did not log %q within %s; its log:\n%s", p.name, what, Patience, p.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitPorts waits until every port on 127.0.0.1 accepts a connection; it fails the test if the
// process exits first or after Patience.
func (p *Process) WaitPorts(t testing.TB, ports ...int) {
	t.Helper()
	for _, port := range ports {
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		p.wait(t, "a listener on "+addr, func(string) bool {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				return false
			}
			c.Close()
			return true
		})
	}
}

// Get requests path from the server's HTTP virtual-host port with Host host, as a visitor of
// a tunnel would, and returns the status and body (a transport error as status 0 and its text).
func (s *Server) Get(host, path string) (int, string) { return Get(s.VhostHTTPPort, host, path) }

// Get requests path from an frps's HTTP virtual-host port vhostPort on 127.0.0.1 with Host
// host; see Server.Get.
func Get(vhostPort int, host, path string) (int, string) {
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d%s", vhostPort, path), nil)
	if err != nil {
		return 0, err.Error()
	}
	req.Host = host
	client := &http.Client{Timeout: 10 * time.Second}
	res, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	var body bytes.Buffer
	body.ReadFrom(res.Body)
	return res.StatusCode, body.String()
}

// Eventually polls cond until it returns nil, failing the test with its last error after
// within.
func Eventually(t testing.TB, within time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %v", within, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
