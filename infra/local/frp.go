package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/workers/operator"
)

// frpNode is make run's tunnel server: frps (built by infra/frp/build.sh into .local/bin/, found
// on PATH) with its plugin pointed at the local API through a tunnel-server key minted for it,
// and the frpc configuration an agent of the admin account connects with.
type frpNode struct {
	// ServerFile and ClientFile are the frps and frpc configurations written; LogFile frps's log.
	ServerFile, ClientFile, LogFile string
	cmd                             *exec.Cmd
	done                            chan struct{}
	keyID                           string
	op                              *operatorClient
}

// frpHeartbeat is frpc's heartbeat interval for a lease: three heartbeats per lease, so one lost
// heartbeat never lets a live session lapse.
func frpHeartbeat(lease time.Duration) time.Duration {
	return max(time.Second, (lease / 3).Truncate(time.Second))
}

// startFrp mints a tunnel-server key named "local" in the first region through the operator's
// interface (op, signed with the local server's operator credentials), writes frps.toml and frpc.toml into c.StateDir (frpc's authtoken is a new
// credential of the admin account, made through the tenants' API with adminToken), and starts
// frps from frps.toml, its output in frps.log. The session lease (TUNNEL_LEASE) is frps's
// heartbeat timeout; frpc's interval is a third of it.
func startFrp(ctx context.Context, c config.Local, lease time.Duration, base, adminToken string, op *operatorClient) (*frpNode, error) {
	bin, err := exec.LookPath("frps")
	if err != nil {
		return nil, fmt.Errorf("frps is not on PATH (infra/frp/build.sh builds it into .local/bin/): %w", err)
	}
	region := c.HTTP.FamilySettings.Domains.Regions[0]
	_, out, err := op.send(ctx, http.MethodPost, "/operator/tunnel_servers", map[string]string{"name": "local", "region": region})
	if err != nil {
		return nil, fmt.Errorf("minting the tunnel-server key: %w", err)
	}
	var key operator.TunnelServer
	if err := json.Unmarshal(out, &key); err != nil || key.Secret == "" {
		return nil, fmt.Errorf("the tunnel-server key's answer %s: %v", out, err)
	}
	n := &frpNode{keyID: key.ID, op: op, done: make(chan struct{})}
	ok := false
	defer func() {
		if !ok {
			n.revoke()
		}
	}()
	tenant := &operator.TenantAPI{Base: base, Token: adminToken}
	status, cred, err := tenant.Do(ctx, http.MethodPost, "/credentials", map[string]any{"description": "make run's frpc (.local/frpc.toml)"})
	token, _ := cred["token"].(string)
	if err != nil || status != http.StatusCreated || token == "" {
		return nil, fmt.Errorf("creating frpc's credential: %d %v", status, err)
	}
	fleet := make([]byte, 16)
	rand.Read(fleet)
	plugin, err := frpsPlugin(base, key, lease)
	if err != nil {
		return nil, err
	}
	n.ServerFile, n.ClientFile, n.LogFile = filepath.Join(c.StateDir, "frps.toml"), filepath.Join(c.StateDir, "frpc.toml"), filepath.Join(c.StateDir, "frps.log")
	files := map[string]string{
		n.ServerFile: frpsTOML(plugin, c.FRPBindPort, c.FRPVhostHTTPPort, c.HTTP.FamilySettings.Domains.BaseDomain, hex.EncodeToString(fleet)),
		n.ClientFile: frpcTOML(c.FRPBindPort, c.FRPVhostHTTPPort, c.HTTP.FamilySettings.Domains.BaseDomain, hex.EncodeToString(fleet), token, frpHeartbeat(lease)),
	}
	for file, text := range files {
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			return nil, err
		}
	}
	logFile, err := os.Create(n.LogFile)
	if err != nil {
		return nil, err
	}
	n.cmd = exec.Command(bin, "-c", n.ServerFile)
	n.cmd.Stdout, n.cmd.Stderr = logFile, logFile
	// A process group of its own, so Ctrl-C reaches the server, which stops frps and then revokes
	// its key; killed with the server if the server dies first.
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := n.cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	go func() {
		n.cmd.Wait()
		logFile.Close()
		close(n.done)
	}()
	ok = true
	return n, nil
}

// Stop ends frps and revokes its key.
func (n *frpNode) Stop() {
	n.cmd.Process.Signal(os.Interrupt)
	select {
	case <-n.done:
	case <-time.After(5 * time.Second):
		n.cmd.Process.Kill()
		<-n.done
	}
	n.revoke()
}

// Exited is closed when frps has ended.
func (n *frpNode) Exited() <-chan struct{} { return n.done }

// revoke deletes the node's tunnel-server key: the next make run mints its own.
func (n *frpNode) revoke() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n.op.send(ctx, http.MethodDelete, "/operator/tunnel_servers/"+url.PathEscape(n.keyID), nil)
}

// frpsTOML is frps's configuration: agents on 127.0.0.1:bindPort, HTTP virtual hosts on
// vhostPort under baseDomain, and plugin, the lines that point it at the API (frpsPlugin, as
// `operator tunnel-server create` prints them).
func frpsTOML(plugin string, bindPort, vhostPort int, baseDomain, fleetToken string) string {
	return fmt.Sprintf(`# frps of make run, written at each start: its plugin is the local API, authenticated by a
# tunnel-server key minted for this run (revoked when make run stops).
bindAddr = "127.0.0.1"
bindPort = %d
proxyBindAddr = "127.0.0.1"
vhostHTTPPort = %d
subDomainHost = %s
auth.method = "token"
auth.token = %s

%s`, bindPort, vhostPort, tomlString(baseDomain), tomlString(fleetToken), plugin)
}

// frpcTOML is a working frpc configuration for make run's frps: the agent is the admin
// account's credential (its authtoken in metadatas), and a user adds [[proxies]].
func frpcTOML(bindPort, vhostPort int, baseDomain, fleetToken, authtoken string, heartbeat time.Duration) string {
	return fmt.Sprintf(`# frpc for make run's frps, as the local admin account (a credential made for it).
# Add proxies and run: .local/bin/frpc -c .local/frpc.toml
serverAddr = "127.0.0.1"
serverPort = %d
loginFailExit = true
auth.method = "token"
auth.token = %s
metadatas.authtoken = %s
transport.heartbeatInterval = %d

# For example, a local web server on port 3000 served as http://web.%s:%d/
# (curl -H "Host: web.%[5]s" http://127.0.0.1:%[6]d/):
#
# [[proxies]]
# name = "web"
# type = "http"
# localPort = 3000
# subdomain = "web"
`, bindPort, tomlString(fleetToken), tomlString(authtoken), int(heartbeat/time.Second), baseDomain, vhostPort)
}

// tomlString is s as a TOML basic string: JSON's escapes are a subset of TOML's.
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// frpBanner is what make run prints about its frps.
func frpBanner(c config.Local, n *frpNode) string {
	return strings.TrimLeft(fmt.Sprintf(`
frps serves agents on 127.0.0.1:%d and HTTP tunnels on http://127.0.0.1:%d (log %s).
frpc's configuration for the admin account: %s; add [[proxies]] and run
  .local/bin/frpc -c %[4]s
`, c.FRPBindPort, c.FRPVhostHTTPPort, n.LogFile, n.ClientFile), "\n")
}

// goFrp starts make run's frps beside the server, once the server answers (startFrp's requests
// wait in the listener's backlog until it serves); the returned stop ends it and revokes its key,
// and must be called while the server still serves. Without frps the API still serves, and log
// says why.
func goFrp(ctx context.Context, c config.Local, lease time.Duration, base, adminToken string, op *operatorClient, log *slog.Logger) (stop func()) {
	started := make(chan *frpNode, 1)
	go func() {
		n, err := startFrp(ctx, c, lease, base, adminToken, op)
		if err != nil {
			log.Warn("no tunnel server: frps not started", "err", err.Error())
			started <- nil
			return
		}
		fmt.Print(frpBanner(c, n))
		started <- n
		select {
		case <-n.Exited():
			log.Warn("frps exited", "log", n.LogFile)
		case <-ctx.Done():
		}
	}()
	return func() {
		if n := <-started; n != nil {
			n.Stop()
		}
	}
}
