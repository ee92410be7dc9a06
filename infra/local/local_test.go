package main

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"tunnelapi/infra/samlocal"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/operator"
)

// The local server, built and run as `make run` runs it, prints a curl command that returns the
// key list, `bootstrap` makes a second account with its own admin key, `sam-local` prepares the
// SAM CLI's files for it, and SIGINT stops it.
func TestLocalServerPrintsAWorkingCurl(t *testing.T) {
	testkit.Endpoint(t)
	if os.Getenv("SQS_ENDPOINT") == "" {
		t.Skip("needs the SQS emulator: run `make test`")
	}
	l := testkit.BuildLocalServer(t, "../..", "local-test")
	dir, bin, env := l.Dir, l.Bin, l.Env
	srv := l.Start(t)
	m := srv.Line(t, regexp.MustCompile(`curl -s -H "Authorization: Bearer (\S+)" -H "Ngrok-Version: 2" (\S+)`), 60*time.Second)
	printedKey := srv.Line(t, regexp.MustCompile(`^  access key id (\S+)$`), 60*time.Second)[1]
	token, url := m[1], m[2]
	if saved, _ := os.ReadFile(filepath.Join(dir, "admin.token")); strings.TrimSpace(string(saved)) != token {
		t.Fatalf("admin.token holds %q, the printed token is %q", saved, token)
	}
	req, err := testkit.NewRequest("GET", url, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Keys []struct {
			ID string `json:"id"`
		} `json:"keys"`
	}
	err = json.NewDecoder(res.Body).Decode(&page)
	res.Body.Close()
	if err != nil || res.StatusCode != 200 || len(page.Keys) != 1 {
		t.Fatalf("the printed curl got %d, %d keys, %v", res.StatusCode, len(page.Keys), err)
	}

	boot := exec.Command(bin, "bootstrap")
	boot.Env = env
	out, err := boot.CombinedOutput()
	if err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, out)
	}
	other := regexp.MustCompile(`(?m)^token (\S+)$`).FindStringSubmatch(string(out))
	if other == nil || other[1] == token {
		t.Fatalf("bootstrap printed no new token:\n%s", out)
	}
	req, _ = http.NewRequest("GET", url+"/"+page.Keys[0].ID, nil)
	req.Header.Set("Authorization", "Bearer "+other[1])
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("the second account sees the first account's key: %d", res.StatusCode)
	}

	checkSamLocal(t, bin, env, token)
	checkOperatorCredentials(t, env, printedKey)
	checkOperatorMove(t, bin, env)

	if err := srv.Stop(15 * time.Second); err != nil {
		t.Fatalf("the server did not stop cleanly on SIGINT: %v", err)
	}
}

// checkOperatorMove runs `local operator create`, `export` and `import` against the running
// server: a tenant with a bot user is exported and imported into another, whose bot user and
// key (re-issued, its token printed) then exist.
func checkOperatorMove(t *testing.T, bin string, env []string) {
	run := func(stdin string, args ...string) string {
		c := exec.Command(bin, append([]string{"operator"}, args...)...)
		c.Env, c.Stdin = env, strings.NewReader(stdin)
		out, err := c.Output()
		if err != nil {
			t.Fatalf("operator %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	create := func() (id, token string) {
		var c struct {
			Tenant struct{ ID string } `json:"tenant"`
			Token  string              `json:"token"`
		}
		if err := json.Unmarshal([]byte(run("", "create")), &c); err != nil || c.Token == "" {
			t.Fatalf("operator create: %v", err)
		}
		return c.Tenant.ID, c.Token
	}
	from, token := create()
	base := "http://127.0.0.1:" + envValue(env, "PORT")
	a := &operator.TenantAPI{Base: base, Token: token}
	if status, _, err := a.Do(t.Context(), "POST", "/bot_users", map[string]any{"name": "moved"}); err != nil || status != http.StatusCreated {
		t.Fatalf("bot user: %d %v", status, err)
	}
	export := run("", "export", from)
	to, token := create()
	imported := run(export, "import", to)
	if strings.Count(imported, "\n") != 2 || !strings.Contains(imported, `"path":"/bot_users"`) || !strings.Contains(imported, `"token":"`) {
		t.Fatalf("import printed:\n%s\nof the export:\n%s", imported, export)
	}
	b := &operator.TenantAPI{Base: base, Token: token}
	if status, list, err := b.Do(t.Context(), "GET", "/bot_users", nil); err != nil || status != http.StatusOK || len(list["bot_users"].([]any)) != 1 {
		t.Fatalf("the imported tenant's bot users: %d %v %v", status, list, err)
	}
}

// checkOperatorCredentials holds the running server's operator routes to the credentials it
// made at start (printedKey is the access key id it printed): they are in STATE_DIR, readable by
// their owner only, and sign a request the routes answer; the same request signed for another
// Host (a page whose name was rebound to 127.0.0.1), or signed with the fixed credentials the
// server once took (local/local), is refused with 403.
func checkOperatorCredentials(t *testing.T, env []string, printedKey string) {
	t.Helper()
	file := operatorCredsFile(envValue(env, "STATE_DIR"))
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v, %v; want a file readable by its owner only", file, fi, err)
	}
	creds, err := readOperatorCreds(file)
	if err != nil || creds.AccessKeyID != printedKey {
		t.Fatalf("the credentials file holds key %q (%v); the server printed %q", creds.AccessKeyID, err, printedKey)
	}
	base := "http://127.0.0.1:" + envValue(env, "PORT")
	list := func(c aws.Credentials, host string) int {
		cl := operator.Client{Base: base, Authorize: func(r *http.Request, body []byte) error {
			if host != "" {
				r.Host = host
			}
			return operator.SignedBy(c, creds.Region)(r, body)
		}}
		status, _, err := cl.Do(t.Context(), "GET", "/operator/tenants?limit=1", nil)
		if err != nil {
			t.Fatal(err)
		}
		return status
	}
	port := envValue(env, "PORT")
	for _, c := range []struct {
		name  string
		creds aws.Credentials
		host  string
		want  int
	}{
		{"the server's credentials", creds.aws(), "", http.StatusOK},
		{"the server's credentials, Host localhost", creds.aws(), "localhost:" + port, http.StatusOK},
		{"the server's credentials, Host attacker.example", creds.aws(), "attacker.example:" + port, http.StatusForbidden},
		{"the server's credentials, Host attacker.example without a port", creds.aws(), "attacker.example", http.StatusForbidden},
		{"the old fixed credentials", aws.Credentials{AccessKeyID: "local", SecretAccessKey: "local"}, "", http.StatusForbidden},
	} {
		if got := list(c.creds, c.host); got != c.want {
			t.Errorf("%s: GET /operator/tenants answered %d, want %d", c.name, got, c.want)
		}
	}
}

// A request signed with the local server's operator credentials is admitted only when its Host
// names the loopback interface, and any other credentials are refused, whatever the Host.
func TestLocalVerifierTakesLoopbackHostsOnly(t *testing.T) {
	creds := newOperatorCreds("us-east-1")
	if other := newOperatorCreds("us-east-1"); other.AccessKeyID == creds.AccessKeyID || other.SecretAccessKey == creds.SecretAccessKey {
		t.Fatalf("two starts made the same credentials: %+v", other)
	}
	verify := localVerifier(creds)
	signed := func(host string, c aws.Credentials) *http.Request {
		r := httptest.NewRequest("GET", "http://127.0.0.1:8080/operator/tenants", nil)
		r.Host = host
		if err := operator.Sign(t.Context(), r, nil, c, "us-east-1", time.Now()); err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, host := range []string{"127.0.0.1:8080", "127.0.0.1", "127.8.9.10:1", "[::1]:8080", "[::1]", "localhost:8080", "LocalHost:8080", "localhost"} {
		if err := verify(signed(host, creds.aws()), nil); err != nil {
			t.Errorf("Host %s: refused (%v)", host, err)
		}
		if verify(signed(host, aws.Credentials{AccessKeyID: "local", SecretAccessKey: "local"}), nil) == nil {
			t.Errorf("Host %s: the old fixed credentials admitted", host)
		}
	}
	for _, host := range []string{"attacker.example", "attacker.example:8080", "localhost.attacker.example:8080",
		"127.0.0.1.nip.io:8080", "0.0.0.0:8080", "10.0.0.1:8080", "[::]:8080", "[fe80::1%25lo]:8080", "127.0.0.1:http", "127.0.0.1:99999", ""} {
		if err := verify(signed(host, creds.aws()), nil); err == nil {
			t.Errorf("Host %q: a correctly signed request admitted", host)
		}
	}
}

// envValue is the value of name in env.
func envValue(env []string, name string) string {
	for _, kv := range slices.Backward(env) {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// checkSamLocal runs `local sam-local` (what `make sam-local` runs) against the running server,
// in a folder that sees the checkout's template and samples: it prints exactly
// samlocal.Commands and writes the env-vars file for the server's table and samples carrying
// the server's admin token.
func checkSamLocal(t *testing.T, bin string, env []string, token string) {
	t.Helper()
	work := t.TempDir()
	for _, name := range []string{"template.yaml", "events"} {
		abs, err := filepath.Abs(filepath.Join("..", "..", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(work, name)); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "sam-local")
	cmd.Env, cmd.Dir = env, work
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sam-local: %v\n%s", err, out)
	}
	if want := strings.Join(samlocal.Commands(), "\n") + "\n"; !strings.HasSuffix(string(out), "\nthen:\n"+want) {
		t.Fatalf("sam-local printed:\n%s\nwant it to end with the commands:\n%s", out, want)
	}
	var file map[string]map[string]string
	raw, err := os.ReadFile(filepath.Join(work, samlocal.Dir, "env.json"))
	if err == nil {
		err = json.Unmarshal(raw, &file)
	}
	if err != nil {
		t.Fatal(err)
	}
	var table string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "TABLE_NAME="); ok {
			table = v
		}
	}
	if got := file["ApiKeysFunction"]["TABLE_NAME"]; got != table {
		t.Errorf("env.json gives ApiKeysFunction table %q, the server serves %q", got, table)
	}
	sample, err := os.ReadFile(filepath.Join(work, samlocal.Dir, "events", "api_keys", "3-get.json"))
	if err != nil || !strings.Contains(string(sample), "Bearer "+token) {
		t.Errorf("the filled get sample does not carry the admin token (%v)", err)
	}
}

// The local server bounds every stage of a connection: headers, the whole request, the
// response, and idle keep-alive time.
func TestLocalServerTimeouts(t *testing.T) {
	lt := localTimeouts
	if lt.ReadHeader <= 0 || lt.Read < lt.ReadHeader || lt.Write < lt.Read || lt.Idle <= 0 {
		t.Fatalf("timeouts %+v: each must be set, headers ≤ request ≤ response", lt)
	}
	srv := newServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}), timeouts{ReadHeader: 200 * time.Millisecond, Read: 300 * time.Millisecond, Write: time.Second, Idle: 300 * time.Millisecond})
	if srv.ReadHeaderTimeout != 200*time.Millisecond || srv.ReadTimeout != 300*time.Millisecond ||
		srv.WriteTimeout != time.Second || srv.IdleTimeout != 300*time.Millisecond {
		t.Fatalf("server timeouts %v %v %v %v", srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	// closedWithin reports whether the server closes conn within d after what was sent.
	closedWithin := func(conn net.Conn, d time.Duration) bool {
		conn.SetReadDeadline(time.Now().Add(d))
		_, err := io.Copy(io.Discard, conn)
		var ne net.Error
		return err == nil || !(errors.As(err, &ne) && ne.Timeout())
	}
	for _, c := range []struct{ name, send string }{
		{"half a header", "GET / HTTP/1.1\r\nHost: x\r\n"},
		{"one byte of body", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"},
		{"idle after a response", "GET / HTTP/1.1\r\nHost: x\r\n\r\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.Write([]byte(c.send)); err != nil {
				t.Fatal(err)
			}
			if !closedWithin(conn, 5*time.Second) {
				t.Fatal("the connection was still open after 5 s")
			}
		})
	}
}
