package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"tunnelapi/shared/testing/frptest"
	"tunnelapi/shared/testing/testkit"
)

// make run's tunnel server works as the README says: the server, run as make run runs it (frps
// on PATH), starts frps from frps.toml with its plugin pointed at itself through a key it minted,
// and writes frpc.toml; that file, with a [[proxies]] entry added, connects as the admin account
// and serves a local web server under BASE_DOMAIN on the virtual-host port, listed as the
// account's session and tunnel. Ctrl-C stops frps with the server.
func TestMakeRunServesATunnel(t *testing.T) {
	testkit.Endpoint(t)
	if os.Getenv("SQS_ENDPOINT") == "" {
		t.Skip("needs the SQS emulator: run `make test`")
	}
	frps, _ := frptest.Binaries(t)
	l := testkit.BuildLocalServer(t, "../..", "local-frp-test")
	l.Env = append(l.Env, "BASE_DOMAIN=tunnels.example.com", "PATH="+filepath.Dir(frps)+string(os.PathListSeparator)+os.Getenv("PATH"))
	dir, port, bindPort, vhostPort := l.Dir, l.Port, l.FRPBindPort, l.FRPVhostPort
	srv := l.Start(t)
	line := srv.Line(t, regexp.MustCompile(`^frps serves agents on .*`), frptest.Patience)[0]
	if want := fmt.Sprintf("frps serves agents on 127.0.0.1:%d and HTTP tunnels on http://127.0.0.1:%d", bindPort, vhostPort); !strings.HasPrefix(line, want) {
		t.Errorf("the banner says %q, want it to start with %q", line, want)
	}
	frptest.Eventually(t, frptest.Patience, func() error {
		c, err := net.Dial("tcp", fmt.Sprint("127.0.0.1:", bindPort))
		if err == nil {
			c.Close()
		}
		return err
	})
	server, err := os.ReadFile(filepath.Join(dir, "frps.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{fmt.Sprint("bindPort = ", bindPort), fmt.Sprint("vhostHTTPPort = ", vhostPort), `subDomainHost = "tunnels.example.com"`,
		"heartbeatTimeout = 90", fmt.Sprintf(`@127.0.0.1:%d"`, port), `addr = "http://local.us:`, `path = "/frp/plugin"`} {
		if !strings.Contains(string(server), want) {
			t.Errorf("frps.toml lacks %q:\n%s", want, server)
		}
	}
	client, err := os.ReadFile(filepath.Join(dir, "frpc.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{fmt.Sprint("serverPort = ", bindPort), "loginFailExit = true", "metadatas.authtoken = ", "transport.heartbeatInterval = 30", "auth.token = "} {
		if !strings.Contains(string(client), want) {
			t.Errorf("frpc.toml lacks %q:\n%s", want, client)
		}
	}

	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello from ", r.Host) }))
	defer web.Close()
	frpc := frptest.RunClient(t, string(client)+frptest.Proxy{Name: "web", Type: "http", LocalPort: web.Listener.Addr().(*net.TCPAddr).Port, Subdomain: "web"}.TOML())
	session := frpc.WaitLogin(t)
	frpc.WaitProxy(t, "web")
	frptest.Eventually(t, frptest.Patience, func() error {
		if code, body := frptest.Get(vhostPort, "web.tunnels.example.com", "/"); code != 200 || body != "hello from web.tunnels.example.com" {
			return fmt.Errorf("GET web.tunnels.example.com through frps: %d %q", code, body)
		}
		return nil
	})
	token, err := os.ReadFile(filepath.Join(dir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprint("http://127.0.0.1:", port)
	for path, want := range map[string]string{"/tunnel_sessions": session, "/tunnels": "http://web.tunnels.example.com"} {
		req, err := testkit.NewRequest("GET", base+path, strings.TrimSpace(string(token)), nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body strings.Builder
		bufio.NewReader(res.Body).WriteTo(&body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(body.String(), `"`+want+`"`) {
			t.Errorf("GET %s as the admin: %d %s, want it to list %s", path, res.StatusCode, body.String(), want)
		}
	}

	if err := srv.Stop(frptest.Patience); err != nil {
		t.Fatalf("the server did not stop cleanly on SIGINT: %v", err)
	}
	frptest.Eventually(t, frptest.Patience, func() error {
		if c, err := net.Dial("tcp", fmt.Sprint("127.0.0.1:", bindPort)); err == nil {
			c.Close()
			return fmt.Errorf("frps still accepts agents on %d after the server stopped", bindPort)
		}
		return nil
	})
}
