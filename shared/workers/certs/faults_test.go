package certs_test

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/testing/faults"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/certs"
)

// rejectingPebble starts another pebble of the stack's (its binary and test certificates beside
// ACME_CA_FILE) that rejects percent of good nonces as bad (PEBBLE_WFE_NONCEREJECT), resolving
// through the stack's challtestsrv; it returns its directory URL.
func rejectingPebble(t *testing.T, percent int) string {
	t.Helper()
	dir := filepath.Dir(os.Getenv("ACME_CA_FILE"))
	port, mgmt := testkit.FreePort(t), testkit.FreePort(t)
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

// The certificate worker survives an ACME server that rejects 40% of its nonces while every
// fault class of package faults is on, one after another, between it and DynamoDB and SQS (two
// domains' policies are set under each, and the class lasts until their certificates are
// issued or 10 s have passed): once the weather is fine, every domain has its certificate, and
// exactly one.
func TestWorkerSurvivesFaults(t *testing.T) {
	needACME(t)
	dir := rejectingPebble(t, 40)
	c := testkit.Config(t, config.LoadCertWorker)
	var fs *faults.Store
	sqsProxy := faults.NewProxy(t, "sqs-certs", os.Getenv("SQS_ENDPOINT"))
	h := newHarness(t, func(w *certs.Worker) {
		o := c.StoreOptions()
		o.Table = w.DB.Table
		fs = faults.NewStore(t, "dynamodb-certs", c.AWSConfig(), o)
		db := fs.Open(t)
		w.DB, w.Issuer.DB, w.Issuer.Directory = db, db, dir
		w.SQS = queue.NewClient(fs.Config, sqsProxy.URL)
	})
	dyn, ddb := fs.DynamoDB, fs.Proxy
	var domains []string
	for _, fc := range faults.Classes {
		fc = fc.Harsh(0.3)
		batch := make([]string, 2)
		for i := range batch {
			_, batch[i], _ = h.domainWithCNAME(t, "faults")
		}
		fc.Apply(t, dyn, ddb, sqsProxy)
		for _, id := range batch {
			h.a.Do(t, "PATCH", "/reserved_domains/"+id, withPolicy).Expect(t, http.StatusOK)
		}
		// The weather lasts until the jobs are done or a held connection has stalled one a while.
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			if issued(h.a.Do(t, "GET", "/reserved_domains/"+batch[0], nil).Expect(t, http.StatusOK)) &&
				issued(h.a.Do(t, "GET", "/reserved_domains/"+batch[1], nil).Expect(t, http.StatusOK)) {
				break
			}
		}
		faults.Heal(dyn, ddb, sqsProxy)
		domains = append(domains, batch...)
	}
	certsByDomain := map[string]bool{}
	for _, id := range domains {
		d := h.waitFor(t, "/reserved_domains/"+id, 90*time.Second, issued)
		certsByDomain[d["certificate"].(map[string]any)["id"].(string)] = true
	}
	list := h.a.Do(t, "GET", "/tls_certificates", nil).Expect(t, http.StatusOK)
	if n := len(list["tls_certificates"].([]any)); n != len(domains) || len(certsByDomain) != len(domains) {
		t.Fatalf("%d certificates in the account, %d distinct on %d domains: want one each", n, len(certsByDomain), len(domains))
	}
	t.Logf("%d domains under %d fault classes issued once each; toxics %d+%d, DynamoDB failures %v", len(domains), len(faults.Classes), ddb.Added(), sqsProxy.Added(), dyn.Injected())
}
