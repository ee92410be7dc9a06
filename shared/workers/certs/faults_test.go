package certs_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/faults"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/certs"
)

// freePort is a local TCP port nothing listens on.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// rejectingPebble starts another pebble of the stack's (its binary and test certificates beside
// ACME_CA_FILE) that rejects percent of good nonces as bad (PEBBLE_WFE_NONCEREJECT), resolving
// through the stack's challtestsrv; it returns its directory URL.
func rejectingPebble(t *testing.T, percent int) string {
	t.Helper()
	dir := filepath.Dir(os.Getenv("ACME_CA_FILE"))
	port, mgmt := freePort(t), freePort(t)
	cfg := fmt.Sprintf(`{"pebble": {"listenAddress": "127.0.0.1:%d", "managementListenAddress": "127.0.0.1:%d",
		"certificate": %q, "privateKey": %q, "httpPort": 5002, "tlsPort": 5001, "ocspResponderURL": "",
		"externalAccountBindingRequired": false, "retryAfter": {"authz": 0, "order": 0},
		"profiles": {"default": {"description": "90 days", "validityPeriod": 7776000}}}}`,
		port, mgmt, filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
	path := filepath.Join(t.TempDir(), "pebble-config.json")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(dir, "bin", "pebble"), "-config", path, "-dnsserver", os.Getenv("DNS_RESOLVER"))
	cmd.Env = append(os.Environ(), "PEBBLE_VA_NOSLEEP=1", "PEBBLE_AUTHZREUSE=0", fmt.Sprintf("PEBBLE_WFE_NONCEREJECT=%d", percent))
	if err := cmd.Start(); err != nil {
		t.Fatalf("start pebble: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url := fmt.Sprintf("https://127.0.0.1:%d/dir", port)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: time.Second}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if res, err := hc.Get(url); err == nil {
			res.Body.Close()
			return url
		}
		if time.Now().After(deadline) {
			t.Fatalf("pebble with rejected nonces did not start at %s", url)
		}
	}
}

// The certificate worker survives an ACME server that rejects 40% of its nonces and a table
// that throttles, fails and conflicts on a quarter of its calls (applying some it then reports as
// failed): every domain gets its certificate, and exactly one.
func TestWorkerSurvivesFaults(t *testing.T) {
	needACME(t)
	dir := rejectingPebble(t, 40)
	dyn := &faults.DynamoDB{}
	h := newHarness(t, func(w *certs.Worker) {
		o := testkit.Config(t, config.LoadCertWorker).StoreOptions()
		o.Table, o.Endpoint, o.APIOptions = w.DB.Table, testkit.Endpoint(t), []func(*dynamodb.Options){dyn.Option}
		db, err := store.Open(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		w.DB, w.Issuer.DB, w.Issuer.Directory = db, db, dir
	})
	var domains []string
	for i := 0; i < 3; i++ {
		_, id, _ := h.domainWithCNAME(t, fmt.Sprintf("faults%d", i))
		domains = append(domains, id)
	}
	dyn.Set(0.25, faults.Throttle, faults.InternalBefore, faults.InternalAfter, faults.TxConflict)
	for _, id := range domains {
		h.a.Do(t, "PATCH", "/reserved_domains/"+id, withPolicy).Expect(t, http.StatusOK)
	}
	certsByDomain := map[string]bool{}
	for _, id := range domains {
		d := h.waitFor(t, "/reserved_domains/"+id, 90*time.Second, issued)
		certsByDomain[d["certificate"].(map[string]any)["id"].(string)] = true
	}
	dyn.Set(0)
	list := h.a.Do(t, "GET", "/tls_certificates", nil).Expect(t, http.StatusOK)
	if n := len(list["tls_certificates"].([]any)); n != len(domains) || len(certsByDomain) != len(domains) {
		t.Fatalf("%d certificates in the account, %d distinct on %d domains: want one each", n, len(certsByDomain), len(domains))
	}
	t.Logf("%d domains issued once each; DynamoDB failures injected %v", len(domains), dyn.Injected())
}
