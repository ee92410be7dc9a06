package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"tunnelapi/shared/families/tunnels"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/workers/frpplugin"
	"tunnelapi/shared/workers/operator"
)

// tunnelServerUsage is the tunnel-server command's synopsis.
const tunnelServerUsage = `usage: local operator [-url URL] tunnel-server COMMAND
  create NAME REGION   a tunnel-server key; prints the frps.toml lines that use it (its secret once)
  list                 the keys, newest first
  delete ID            revokes the key: the server's next plugin request is refused`

// runTunnelServer is `local operator tunnel-server …`.
func runTunnelServer(ctx context.Context, o *operatorClient, args []string) error {
	switch {
	case len(args) == 3 && args[0] == "create":
		_, out, err := o.send(ctx, http.MethodPost, "/operator/tunnel_servers", map[string]string{"name": args[1], "region": args[2]})
		if err != nil {
			return err
		}
		var k operator.TunnelServer
		if err := json.Unmarshal(out, &k); err != nil {
			return err
		}
		lease, err := time.ParseDuration(config.Default("TUNNEL_LEASE"))
		if err != nil {
			return err
		}
		frag, err := frpsPlugin(o.Base, k, lease)
		if err != nil {
			return err
		}
		fmt.Print(frag)
		return nil
	case len(args) == 1 && args[0] == "list":
		return o.print(ctx, http.MethodGet, "/operator/tunnel_servers", nil)
	case len(args) == 2 && args[0] == "delete":
		if _, _, err := o.send(ctx, http.MethodDelete, "/operator/tunnel_servers/"+url.PathEscape(args[1]), nil); err != nil {
			return err
		}
		fmt.Println("revoked", args[1])
		return nil
	}
	return fmt.Errorf("%s", tunnelServerUsage)
}

// frpsPlugin is the frps.toml lines that make frps ask the API at base (the deployment's base
// URL) about its agents with the key k (its secret included), and drop an agent whose
// heartbeats stop once its session's lease (TUNNEL_LEASE) would lapse.
func frpsPlugin(base string, k operator.TunnelServer, lease time.Duration) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("the base URL %q is not an absolute URL", base)
	}
	addr := &url.URL{Scheme: u.Scheme, Host: u.Host, User: url.UserPassword(tunnels.ServerUser(k.Name, k.Region), k.Secret)}
	path := strings.TrimSuffix(u.Path, "/") + strings.TrimPrefix(frpplugin.Route, "POST ")
	return fmt.Sprintf(`# frps.toml lines for tunnel server %[1]s (region %[2]s, key %[3]s). The key's secret is in
# addr and is shown only now. frpc agents set metadatas.authtoken to a tunnel credential's token
# and transport.heartbeatInterval below the heartbeatTimeout (30 for 90).
[[httpPlugins]]
name = "tunnelapi"
addr = %[4]q
path = %[5]q
ops = ["Login", "NewProxy", "CloseProxy", "Ping"]

[transport]
heartbeatTimeout = %[6]d
`, k.Name, k.Region, k.ID, addr.String(), path, int(lease.Seconds())), nil
}
