package certs_test

import (
	"context"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tunnelapi/shared/families/domains"
	"tunnelapi/shared/families/tlscerts"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/certs"
)

// harness is the whole certificate pipeline on the local stack: the API, the stream reader
// feeding a fresh certificate jobs queue (the CertJobsPipe's filter), a worker polling it
// against the stack's pebble and challtestsrv.
type harness struct {
	s     *testkit.Stack
	a     *testkit.Account
	w     *certs.Worker
	q     *testkit.Queues
	chall certs.ChallTestSrv
}

// needACME skips (or, under make test, fails) without the stack's pebble and challtestsrv.
func needACME(t testing.TB) {
	t.Helper()
	testkit.Require(t, "ACME_DIRECTORY", "CHALLTESTSRV_URL")
}

// newHarness starts the pipeline; tune adjusts the worker before it starts polling.
func newHarness(t testing.TB, tune func(w *certs.Worker)) *harness {
	t.Helper()
	needACME(t)
	s := testkit.StartWithEvents(t, domains.ReservedDomainsDescriptor, domains.AgentIngressesDescriptor, tlscerts.TLSCertificatesDescriptor)
	q := testkit.NewQueues(t, nil)
	stopReader := s.RunReader(certs.JobsConsumer.To(q.Events), nil)
	t.Cleanup(stopReader)
	c := testkit.Config(t, config.LoadCertWorker)
	c.QueueURL = q.Events
	w, err := certs.New(s.DB, q.Client, s.Deps.Kit.Seal, c, testkit.Logger())
	if err != nil {
		t.Fatal(err)
	}
	w.Metrics = testkit.Metrics()
	w.Backoff, w.MaxBackoff = time.Second, 2*time.Second
	if tune != nil {
		tune(w)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { queue.Poll(ctx, q.Client, q.Events, 5, testkit.Logger(), w.Handle) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return &harness{s: s, a: s.NewAccount(t), w: w, q: q, chall: certs.ChallTestSrv{URL: os.Getenv("CHALLTESTSRV_URL")}}
}

// setCNAME points name's _acme-challenge record at target in challtestsrv, as the domain's
// owner does.
func (h *harness) setCNAME(t testing.TB, name, target string) {
	t.Helper()
	if err := h.chall.SetCNAME(context.Background(), "_acme-challenge."+name, target); err != nil {
		t.Fatal(err)
	}
}

// domainWithCNAME reserves a fresh domain without a certificate policy and points its
// _acme-challenge record at the acme_challenge_cname_target the domain shows once a policy is
// set: <label>.acme.<zone> for the cname_target <label>.<zone>.
func (h *harness) domainWithCNAME(t testing.TB, label string) (name, id, target string) {
	t.Helper()
	name = testkit.UniqueName(label, "example.com")
	created := h.a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": name}).Expect(t, http.StatusCreated)
	target = strings.Replace(created["cname_target"].(string), ".", ".acme.", 1)
	h.setCNAME(t, name, target)
	return name, created["id"].(string), target
}

// withPolicy is the body that sets a certificate management policy with its defaults.
var withPolicy = map[string]any{"certificate_management_policy": map[string]any{}}

// waitFor polls GET path until done says so, failing after timeout with the last body.
func (h *harness) waitFor(t testing.TB, path string, timeout time.Duration, done func(body map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		body := h.a.Do(t, "GET", path, nil).Expect(t, http.StatusOK)
		if done(body) {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not reach the expected state within %v: %v", path, timeout, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// status is certificate_management_status of a reserved domain or agent ingress.
func status(body map[string]any) map[string]any {
	st, _ := body["certificate_management_status"].(map[string]any)
	return st
}

// job is its provisioning_job, nil when there is none.
func job(body map[string]any) map[string]any {
	j, _ := status(body)["provisioning_job"].(map[string]any)
	return j
}

// issued reports a certificate issued and no job left.
func issued(body map[string]any) bool {
	st := status(body)
	return st != nil && st["provisioning_job"] == nil && st["renews_at"] != nil
}

// failedWith reports a job retrying after a failure with code.
func failedWith(code string) func(map[string]any) bool {
	return func(body map[string]any) bool {
		j := job(body)
		return j != nil && j["error_code"] == code
	}
}

// pebbleRoot is the root the stack's pebble issues under (it makes a new one at every start).
func pebbleRoot(t testing.TB) *x509.Certificate {
	t.Helper()
	ca, err := os.ReadFile(os.Getenv("ACME_CA_FILE"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	res, err := hc.Get(os.Getenv("PEBBLE_MANAGEMENT") + "/roots/0")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	b, _ := pem.Decode(raw)
	if b == nil {
		t.Fatalf("pebble's root: %s", raw)
	}
	root, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// checkCertificate verifies the account's TLS certificate id: its chain verifies against
// pebble's root for every name, issued_at is set, and the key sealed with it is the leaf's.
func (h *harness) checkCertificate(t testing.TB, id string, names []string) {
	t.Helper()
	body := h.a.Do(t, "GET", "/tls_certificates/"+id, nil).Expect(t, http.StatusOK)
	if body["issued_at"] == nil {
		t.Errorf("%s: issued_at is null", id)
	}
	chain, err := tlscerts.ParseChain(body["certificate_pem"].(string))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(pebbleRoot(t))
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	for _, n := range names {
		if _, err := chain[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, DNSName: n}); err != nil {
			t.Errorf("%s does not verify for %s against pebble's root: %v", id, n, err)
		}
	}
	var it tlscerts.TLSCertificateItem
	if err := h.s.DB.Get(context.Background(), store.ResourceKey(h.a.AccountID, id), &it); err != nil {
		t.Fatal(err)
	}
	key, err := seal.OpenPrivateKey(context.Background(), h.s.Deps.Kit.Seal, it.PrivateKey, h.a.AccountID, id)
	if err != nil {
		t.Fatal(err)
	}
	if pub, ok := key.(crypto.Signer); !ok || !tlscerts.Matches(chain[0], pub) {
		t.Errorf("%s: the sealed key is not the leaf's", id)
	}
}

// certificates lists the account's TLS certificate ids.
func (h *harness) certificates(t testing.TB) []string {
	t.Helper()
	body := h.a.Do(t, "GET", "/tls_certificates", nil).Expect(t, http.StatusOK)
	var out []string
	for _, c := range body["tls_certificates"].([]any) {
		out = append(out, c.(map[string]any)["id"].(string))
	}
	return out
}

// proxy is a TCP forwarder to target that can refuse every connection (down), standing in for
// an ACME server that is unreachable.
type proxy struct {
	ln     net.Listener
	target string
	down   atomic.Bool
}

func newProxy(t testing.TB, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if p.down.Load() {
				c.Close()
				continue
			}
			go p.forward(c)
		}
	}()
	return p
}

func (p *proxy) forward(c net.Conn) {
	defer c.Close()
	u, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer u.Close()
	go io.Copy(u, c)
	io.Copy(c, u)
}
