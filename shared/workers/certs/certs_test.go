package certs_test

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tunnelapi/shared/families/domains"
	"tunnelapi/shared/platform/metrics"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/certs"
	"tunnelapi/shared/workers/scheduler"
)

// regionDomains are the region domains of an agent ingress on domain, as the API renders them.
func regionDomains(body map[string]any) []string {
	var out []string
	for _, d := range body["region_domains"].([]any) {
		out = append(out, d.(string))
	}
	return out
}

// An agent ingress with a policy reaches an issued certificate: provisioning_job null, renews_at
// set, one TLS certificate of the account (issued_at set) whose chain verifies against pebble's
// root for every region domain and whose sealed key is the leaf's (RSA, the ingress default).
func TestAgentIngressIssued(t *testing.T) {
	h := newHarness(t, nil)
	created := h.a.Do(t, "POST", "/agent_ingresses", map[string]any{"domain": testkit.UniqueName("agents", "example.com"),
		"certificate_management_policy": map[string]any{}}).Expect(t, http.StatusCreated)
	id := created["id"].(string)
	body := h.waitFor(t, "/agent_ingresses/"+id, 30*time.Second, issued)
	renews, err := time.Parse(time.RFC3339, status(body)["renews_at"].(string))
	if err != nil || !renews.After(time.Now().Add(30*24*time.Hour)) {
		t.Errorf("renews_at %v (%v): want about 60 days ahead (90-day certificate, renewed 30 days before)", status(body)["renews_at"], err)
	}
	ids := h.certificates(t)
	if len(ids) != 1 {
		t.Fatalf("the account has %d TLS certificates, want 1", len(ids))
	}
	h.checkCertificate(t, ids[0], regionDomains(body))
	cert := h.a.Do(t, "GET", "/tls_certificates/"+ids[0], nil).Expect(t, http.StatusOK)
	if cert["private_key_type"] != "rsa" {
		t.Errorf("private_key_type %v, want rsa", cert["private_key_type"])
	}
	// Not due: the scheduler requests nothing.
	if n, err := (&scheduler.Scheduler{DB: h.s.DB}).Run(context.Background(), time.Now()); err != nil || n != 0 {
		t.Errorf("scheduler requested %d (%v) with nothing due", n, err)
	}
}

// A custom reserved domain whose _acme-challenge CNAME points at its
// acme_challenge_cname_target reaches an issued certificate for it, referenced by the domain.
func TestCustomDomainIssuedThroughCNAME(t *testing.T) {
	h := newHarness(t, nil)
	// The owner creates the record before asking for a certificate.
	name, id, target := h.domainWithCNAME(t, "app")
	patched := h.a.Do(t, "PATCH", "/reserved_domains/"+id, map[string]any{"certificate_management_policy": map[string]any{}}).Expect(t, http.StatusOK)
	if patched["acme_challenge_cname_target"] != target {
		t.Fatalf("acme_challenge_cname_target %v, want %s", patched["acme_challenge_cname_target"], target)
	}
	body := h.waitFor(t, "/reserved_domains/"+id, 30*time.Second, issued)
	ref, _ := body["certificate"].(map[string]any)
	if ref == nil {
		t.Fatalf("the domain references no certificate: %v", body)
	}
	h.checkCertificate(t, ref["id"].(string), []string{name})
}

// Without the CNAME the job ends in DNS_ERROR naming the record to create, to be retried a day
// later at the latest; once the record exists, a PATCH of the policy leads to issuance.
func TestCustomDomainWithoutCNAME(t *testing.T) {
	var emitted metrics.Buffer
	h := newHarness(t, func(w *certs.Worker) { w.Metrics = &metrics.Emitter{W: &emitted} })
	name := testkit.UniqueName("shop", "example.com")
	created := h.a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": name,
		"certificate_management_policy": map[string]any{}}).Expect(t, http.StatusCreated)
	id := created["id"].(string)
	target := created["acme_challenge_cname_target"].(string)
	body := h.waitFor(t, "/reserved_domains/"+id, 30*time.Second, failedWith(certs.DNSError))
	j := job(body)
	if msg := j["msg"].(string); !strings.Contains(msg, "_acme-challenge."+name) || !strings.Contains(msg, target) {
		t.Errorf("msg %q does not name the record _acme-challenge.%s → %s", msg, name, target)
	}
	retries, err := time.Parse(time.RFC3339, j["retries_at"].(string))
	if err != nil || retries.Before(time.Now().Add(23*time.Hour)) || retries.After(time.Now().Add(25*time.Hour)) {
		t.Errorf("retries_at %v (%v), want a day ahead", j["retries_at"], err)
	}
	if j["started_at"] == nil || j["started_at"] == "" {
		t.Errorf("started_at missing: %v", j)
	}
	if len(h.certificates(t)) != 0 {
		t.Fatal("a certificate was stored for a failed job")
	}
	// A wrong CNAME is named too.
	h.setCNAME(t, name, "elsewhere.example.org")
	h.a.Do(t, "PATCH", "/reserved_domains/"+id, map[string]any{"certificate_management_policy": map[string]any{}}).Expect(t, http.StatusOK)
	h.waitFor(t, "/reserved_domains/"+id, 30*time.Second, func(b map[string]any) bool {
		j := job(b)
		return j != nil && j["error_code"] == certs.DNSError && strings.Contains(j["msg"].(string), "elsewhere.example.org")
	})
	h.setCNAME(t, name, target)
	h.a.Do(t, "PATCH", "/reserved_domains/"+id, map[string]any{"certificate_management_policy": map[string]any{}}).Expect(t, http.StatusOK)
	body = h.waitFor(t, "/reserved_domains/"+id, 30*time.Second, issued)
	h.checkCertificate(t, body["certificate"].(map[string]any)["id"].(string), []string{name})
	// Each run emitted its outcome: the two failed ones, then the issuance (emitted just after
	// its commit, so it may trail the GET by a moment).
	want := map[string]float64{metrics.Failed: 2, metrics.Issued: 1}
	var got map[string]float64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		got = map[string]float64{}
		for _, rec := range metrics.Of(metrics.CertificateJob, emitted.Bytes()) {
			got[rec.Dims[metrics.DimOutcome]] += rec.Values["CertificateJobs"]
		}
		if reflect.DeepEqual(got, want) || time.Now().After(deadline) {
			break
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("certificate job metrics %v, want %v", got, want)
	}
}

// pebble unreachable: INTERNAL_ERROR with a future retries_at; once it is back the job succeeds
// with no user action (the message comes back at retries_at).
func TestACMEServerDownThenBack(t *testing.T) {
	needACME(t)
	u, err := url.Parse(os.Getenv("ACME_DIRECTORY"))
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, u.Host)
	p.down.Store(true)
	h := newHarness(t, func(w *certs.Worker) {
		w.Issuer.Directory = "https://" + p.ln.Addr().String() + u.Path
	})
	created := h.a.Do(t, "POST", "/agent_ingresses", map[string]any{"domain": testkit.UniqueName("down", "example.com"),
		"certificate_management_policy": map[string]any{"private_key_type": "ecdsa"}}).Expect(t, http.StatusCreated)
	id := created["id"].(string)
	body := h.waitFor(t, "/agent_ingresses/"+id, 30*time.Second, failedWith(certs.InternalError))
	seen := time.Now()
	retries, err := time.Parse(time.RFC3339, job(body)["retries_at"].(string))
	if err != nil || !retries.After(seen.Add(-time.Second)) {
		t.Errorf("retries_at %v (%v) is not in the future", job(body)["retries_at"], err)
	}
	p.down.Store(false)
	body = h.waitFor(t, "/agent_ingresses/"+id, 30*time.Second, issued)
	ids := h.certificates(t)
	if len(ids) != 1 {
		t.Fatalf("the account has %d TLS certificates, want 1", len(ids))
	}
	h.checkCertificate(t, ids[0], regionDomains(body))
}

// A worker killed after the authority issued, before the certificate was stored: the job's
// message comes back and the job completes, leaving one certificate.
func TestWorkerKilledMidJob(t *testing.T) {
	var kills atomic.Int32
	h := newHarness(t, func(w *certs.Worker) {
		w.Fault = func(domains.CertJobMessage) bool { return kills.Add(1) == 1 }
	})
	created := h.a.Do(t, "POST", "/agent_ingresses", map[string]any{"domain": testkit.UniqueName("killed", "example.com"),
		"certificate_management_policy": map[string]any{}}).Expect(t, http.StatusCreated)
	id := created["id"].(string)
	body := h.waitFor(t, "/agent_ingresses/"+id, 30*time.Second, issued)
	if kills.Load() < 2 {
		t.Fatalf("the job ran %d times, want the killed run and its redelivery", kills.Load())
	}
	ids := h.certificates(t)
	if len(ids) != 1 {
		t.Fatalf("the account has %d TLS certificates, want 1", len(ids))
	}
	h.checkCertificate(t, ids[0], regionDomains(body))
}

// With a renewal window longer than the certificate's life, a certificate is due as soon as it
// is issued: two scheduler runs at once request one renewal, a run while it is pending requests
// nothing, the domain ends on a new certificate and the old one is gone.
func TestRenewalBySchedule(t *testing.T) {
	h := newHarness(t, func(w *certs.Worker) { w.RenewBefore = 91 * 24 * time.Hour })
	ctx := context.Background()
	name, id, _ := h.domainWithCNAME(t, "renew")
	h.a.Do(t, "PATCH", "/reserved_domains/"+id, map[string]any{"certificate_management_policy": map[string]any{}}).Expect(t, http.StatusOK)
	first := h.waitFor(t, "/reserved_domains/"+id, 30*time.Second, issued)["certificate"].(map[string]any)["id"].(string)

	var wg sync.WaitGroup
	var requested atomic.Int64
	for range 2 {
		wg.Go(func() {
			n, err := (&scheduler.Scheduler{DB: h.s.DB}).Run(ctx, time.Now())
			if err != nil {
				t.Error(err)
			}
			requested.Add(int64(n))
		})
	}
	wg.Wait()
	if requested.Load() != 1 {
		t.Fatalf("two concurrent scheduler runs requested %d renewals, want 1", requested.Load())
	}
	if n, err := (&scheduler.Scheduler{DB: h.s.DB}).Run(ctx, time.Now()); err != nil || n != 0 {
		t.Errorf("a run while the renewal is pending requested %d (%v), want 0", n, err)
	}
	body := h.waitFor(t, "/reserved_domains/"+id, 30*time.Second, func(b map[string]any) bool {
		ref, _ := b["certificate"].(map[string]any)
		return issued(b) && ref != nil && ref["id"] != first
	})
	second := body["certificate"].(map[string]any)["id"].(string)
	h.checkCertificate(t, second, []string{name})
	h.a.Do(t, "GET", "/tls_certificates/"+first, nil).Expect(t, http.StatusNotFound)
	if ids := h.certificates(t); len(ids) != 1 || ids[0] != second {
		t.Errorf("the account's certificates are %v, want only %s", ids, second)
	}
}

// The deployment's ACME account key is created once, however many workers ask at once: every
// worker (its own Issuer, sharing only the table) ends up with the same account, and the table
// holds one sealed key.
func TestAccountKeyCreatedOnce(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	const workers = 8
	locations := make([]string, workers)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			is := &certs.Issuer{Directory: h.w.Issuer.Directory, HTTPClient: h.w.Issuer.HTTPClient, DB: h.s.DB, Seal: h.s.Deps.Kit.Seal}
			acct, err := is.Account(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			locations[i] = acct.Location
		})
	}
	wg.Wait()
	for _, l := range locations {
		if l == "" || l != locations[0] {
			t.Fatalf("workers registered different accounts: %v", locations)
		}
	}
	items, err := h.s.DB.QueryAll(ctx, store.ACMEAccountKey(h.w.Issuer.Directory).PK)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 {
		t.Fatalf("%d account key items, want 1", len(items))
	}
	if _, ok := items[0]["key"]; !ok {
		t.Fatal("the account key item holds no sealed key")
	}
}

// A DNS_ERROR is retried at most daily without a PATCH: the scheduler requests nothing before
// its retries_at and the retry after it, which issues once the record exists.
func TestDNSErrorRetriedDailyByScheduler(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	name := testkit.UniqueName("daily", "example.com")
	created := h.a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": name,
		"certificate_management_policy": map[string]any{}}).Expect(t, http.StatusCreated)
	id := created["id"].(string)
	body := h.waitFor(t, "/reserved_domains/"+id, 30*time.Second, failedWith(certs.DNSError))
	retries, err := time.Parse(time.RFC3339, job(body)["retries_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	sched := &scheduler.Scheduler{DB: h.s.DB}
	if n, err := sched.Run(ctx, retries.Add(-time.Minute)); err != nil || n != 0 {
		t.Fatalf("before retries_at the scheduler requested %d (%v), want 0", n, err)
	}
	h.setCNAME(t, name, created["acme_challenge_cname_target"].(string))
	if n, err := sched.Run(ctx, retries.Add(time.Second)); err != nil || n != 1 {
		t.Fatalf("after retries_at the scheduler requested %d (%v), want 1", n, err)
	}
	body = h.waitFor(t, "/reserved_domains/"+id, 30*time.Second, issued)
	h.checkCertificate(t, body["certificate"].(map[string]any)["id"].(string), []string{name})
}

// Deleting a managed domain or ingress deletes its managed certificate and its due entry: the
// scheduler finds nothing to renew.
func TestDeleteRemovesManagedCertificate(t *testing.T) {
	h := newHarness(t, func(w *certs.Worker) { w.RenewBefore = 91 * 24 * time.Hour })
	created := h.a.Do(t, "POST", "/agent_ingresses", map[string]any{"domain": testkit.UniqueName("gone", "example.com"),
		"certificate_management_policy": map[string]any{}}).Expect(t, http.StatusCreated)
	id := created["id"].(string)
	h.waitFor(t, "/agent_ingresses/"+id, 30*time.Second, issued)
	if len(h.certificates(t)) != 1 {
		t.Fatal("no managed certificate")
	}
	h.a.Do(t, "DELETE", "/agent_ingresses/"+id, nil).Expect(t, http.StatusNoContent)
	if ids := h.certificates(t); len(ids) != 0 {
		t.Errorf("certificates left after the delete: %v", ids)
	}
	due, err := h.s.DB.QueryAll(context.Background(), store.CertDuePartition)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 0 {
		t.Errorf("%d due entries left after the delete", len(due))
	}
}

// A requested job has a due entry JobGrace ahead, the net for a message lost on its way: the
// scheduler requests the job again then, superseding the first (which stores nothing even if it
// runs), and the resource ends with one certificate.
func TestLostJobRequestedAgain(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	created := h.a.Do(t, "POST", "/agent_ingresses", map[string]any{"domain": testkit.UniqueName("lost", "example.com"),
		"certificate_management_policy": map[string]any{}}).Expect(t, http.StatusCreated)
	id := created["id"].(string)
	sched := &scheduler.Scheduler{DB: h.s.DB}
	if n, err := sched.Run(ctx, time.Now()); err != nil || n != 0 {
		t.Fatalf("the scheduler requested %d (%v) for a job just requested, want 0", n, err)
	}
	if n, err := sched.Run(ctx, time.Now().Add(domains.JobGrace+time.Second)); err != nil || n != 1 {
		t.Fatalf("the scheduler requested %d (%v) after JobGrace, want 1", n, err)
	}
	body := h.waitFor(t, "/agent_ingresses/"+id, 30*time.Second, issued)
	time.Sleep(500 * time.Millisecond) // the superseded job, if it was running, has finished
	ids := h.certificates(t)
	if len(ids) != 1 {
		t.Fatalf("the account has %d TLS certificates, want 1", len(ids))
	}
	h.checkCertificate(t, ids[0], regionDomains(body))
}

// A domain created with an uploaded certificate that does not cover it (accepted, as on the
// platform) keeps its DNS (cname_target, the _acme-challenge CNAME) and its renewals working:
// a policy set later takes the certificate's place (it is released and can be deleted), the
// worker issues a certificate for the domain through the CNAME, and the scheduler renews it.
func TestUncoveringCertificateThenPolicyIssuedAndRenewed(t *testing.T) {
	h := newHarness(t, func(w *certs.Worker) { w.RenewBefore = 91 * 24 * time.Hour })
	other := uploadCN(t, h.a, "example.com")
	name := testkit.UniqueName("myapp", "example.com")
	created := h.a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": name, "certificate_id": other}).Expect(t, http.StatusCreated)
	id, cname := created["id"].(string), created["cname_target"].(string)
	if ref, _ := created["certificate"].(map[string]any); ref == nil || ref["id"] != other {
		t.Fatalf("certificate %v, want a ref to %s", created["certificate"], other)
	}
	h.setCNAME(t, name, strings.Replace(cname, ".", ".acme.", 1))
	patched := h.a.Do(t, "PATCH", "/reserved_domains/"+id, withPolicy).Expect(t, http.StatusOK)
	if patched["certificate"] != nil || patched["cname_target"] != cname {
		t.Fatalf("after setting the policy: certificate %v, cname_target %v (was %s)", patched["certificate"], patched["cname_target"], cname)
	}
	h.a.Do(t, "DELETE", "/tls_certificates/"+other, nil).Expect(t, http.StatusNoContent)
	first := h.waitFor(t, "/reserved_domains/"+id, 30*time.Second, issued)["certificate"].(map[string]any)["id"].(string)
	h.checkCertificate(t, first, []string{name})
	if n, err := (&scheduler.Scheduler{DB: h.s.DB}).Run(context.Background(), time.Now()); err != nil || n != 1 {
		t.Fatalf("the scheduler requested %d renewals (%v), want 1", n, err)
	}
	body := h.waitFor(t, "/reserved_domains/"+id, 30*time.Second, func(b map[string]any) bool {
		ref, _ := b["certificate"].(map[string]any)
		return issued(b) && ref != nil && ref["id"] != first
	})
	h.checkCertificate(t, body["certificate"].(map[string]any)["id"].(string), []string{name})
	h.noOrphans(t)
}

// uploadCN stores a self-signed certificate whose only name is its subject's common name (no
// SANs), as the platform's recorded examples upload.
func uploadCN(t *testing.T, a *testkit.Account, cn string) string {
	t.Helper()
	certPEM, keyPEM, _ := testkit.SelfSigned(t, &x509.Certificate{Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(0, 3, 0), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	return a.Do(t, "POST", "/tls_certificates", map[string]any{"certificate_pem": certPEM, "private_key_pem": keyPEM}).Expect(t, http.StatusCreated)["id"].(string)
}
