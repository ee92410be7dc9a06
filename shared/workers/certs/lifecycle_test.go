package certs_test

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"tunnelapi/shared/families/domains"
	"tunnelapi/shared/families/tlscerts"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/certs"
	"tunnelapi/shared/workers/scheduler"
)

// envelope is an audit event as the events queue delivers it.
type envelope struct {
	EventID   string         `json:"event_id"`
	EventType string         `json:"event_type"`
	AccountID string         `json:"account_id"`
	Object    map[string]any `json:"object"`
	Principal struct {
		ID, Subject, Source string
		Credential          struct{ ID, URI string }
	} `json:"principal"`
}

// events receives the next want distinct events the stack's stream reader carries to its
// events queue (the sink), failing after 30 seconds; then it waits a moment for any event
// beyond them, which fails the test too.
func (h *harness) events(t *testing.T, want int) []envelope {
	t.Helper()
	var out []envelope
	seen := map[string]bool{}
	deadline := time.Now().Add(30 * time.Second)
	for len(out) < want || time.Now().Before(deadline) {
		for _, m := range h.s.Queues.Drain(t, h.s.Queues.Events, 300*time.Millisecond) {
			var ev envelope
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &ev); err != nil || ev.EventID == "" {
				t.Fatalf("a message that is not an event: %s", aws.ToString(m.Body))
			}
			if !seen[ev.EventID] {
				seen[ev.EventID] = true
				out = append(out, ev)
			}
		}
		if len(out) >= want && deadline.After(time.Now().Add(time.Second)) {
			deadline = time.Now().Add(time.Second) // linger for extra events
		}
		if len(out) < want && time.Now().After(deadline) {
			t.Fatalf("%d events arrived within 30s, want %d: %s", len(out), want, describe(out))
		}
	}
	if len(out) != want {
		t.Fatalf("%d events arrived, want %d: %s", len(out), want, describe(out))
	}
	return out
}

func describe(evs []envelope) string {
	var s []string
	for _, ev := range evs {
		s = append(s, fmt.Sprintf("%s(%v)", ev.EventType, ev.Object["id"]))
	}
	return strings.Join(s, ", ")
}

// find returns the one event of type typ about the resource id, failing when there is not
// exactly one.
func find(t *testing.T, evs []envelope, typ, id string) envelope {
	t.Helper()
	var got []envelope
	for _, ev := range evs {
		if ev.EventType == typ && ev.Object["id"] == id {
			got = append(got, ev)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d %s events of %s, want 1: %s", len(got), typ, id, describe(evs))
	}
	return got[0]
}

// sameObject requires an event's object to be the resource exactly as GET returned it.
func sameObject(t *testing.T, ev envelope, get map[string]any) {
	t.Helper()
	if !reflect.DeepEqual(ev.Object, get) {
		t.Errorf("%s: the object is\n  %v\nbut GET returned\n  %v", ev.EventType, ev.Object, get)
	}
}

// The certificate worker's changes are recorded as an HTTP mutation's are, and reach the events
// sink through the stream reader: issuing records the certificate's created event and the
// domain's updated event; a renewal also records the replaced certificate's deleted event;
// deleting the domain records its managed certificate's deleted event beside the domain's.
// Each object is the resource exactly as GET returns it, and the principal is the caller who
// set the policy, as on the PATCH's own event.
func TestWorkerRecordsEvents(t *testing.T) {
	h := newHarness(t, func(w *certs.Worker) { w.RenewBefore = 91 * 24 * time.Hour })
	ctx := context.Background()
	_, id, _ := h.domainWithCNAME(t, "events")
	h.a.Do(t, "PATCH", "/reserved_domains/"+id, withPolicy).Expect(t, http.StatusOK)
	domain := h.waitFor(t, "/reserved_domains/"+id, 30*time.Second, issued)
	first := domain["certificate"].(map[string]any)["id"].(string)
	firstCert := h.a.Do(t, "GET", "/tls_certificates/"+first, nil).Expect(t, http.StatusOK)

	evs := h.events(t, 4)
	patch := evs[0]
	for _, ev := range evs {
		if ev.EventType == "domain_updated.v0" && ev.Object["certificate"] == nil {
			patch = ev // the PATCH's own event
		}
	}
	find(t, evs, "domain_created.v0", id)
	sameObject(t, find(t, evs, "tls_certificate_created.v0", first), firstCert)
	var updated []envelope
	for _, ev := range evs {
		if ev.EventType == "domain_updated.v0" && ev.Object["certificate"] != nil {
			updated = append(updated, ev)
		}
	}
	if len(updated) != 1 {
		t.Fatalf("%d updated events of the domain pointing at a certificate, want 1: %s", len(updated), describe(evs))
	}
	sameObject(t, updated[0], domain)
	for _, ev := range evs {
		if ev.Principal != patch.Principal || ev.AccountID != h.a.AccountID {
			t.Errorf("%s: principal %+v in %s, want the PATCH's %+v in %s", ev.EventType, ev.Principal, ev.AccountID, patch.Principal, h.a.AccountID)
		}
	}
	if patch.Principal.ID != h.a.UserID || patch.Principal.Credential.ID != h.a.APIKeyID || patch.Principal.Source != "API" {
		t.Errorf("the PATCH's principal is %+v", patch.Principal)
	}

	// A renewal: the new certificate created, the old one deleted, the domain updated.
	if n, err := (&scheduler.Scheduler{DB: h.s.DB}).Run(ctx, time.Now()); err != nil || n != 1 {
		t.Fatalf("the scheduler requested %d renewals (%v), want 1", n, err)
	}
	domain = h.waitFor(t, "/reserved_domains/"+id, 30*time.Second, func(b map[string]any) bool {
		ref, _ := b["certificate"].(map[string]any)
		return issued(b) && ref != nil && ref["id"] != first
	})
	second := domain["certificate"].(map[string]any)["id"].(string)
	secondCert := h.a.Do(t, "GET", "/tls_certificates/"+second, nil).Expect(t, http.StatusOK)
	evs = h.events(t, 3)
	sameObject(t, find(t, evs, "tls_certificate_created.v0", second), secondCert)
	sameObject(t, find(t, evs, "tls_certificate_deleted.v0", first), firstCert)
	sameObject(t, find(t, evs, "domain_updated.v0", id), domain)
	h.noOrphans(t)

	// Deleting the domain deletes its certificate, with both events.
	h.a.Do(t, "DELETE", "/reserved_domains/"+id, nil).Expect(t, http.StatusNoContent)
	evs = h.events(t, 2)
	sameObject(t, find(t, evs, "domain_deleted.v0", id), domain)
	sameObject(t, find(t, evs, "tls_certificate_deleted.v0", second), secondCert)
	h.a.Do(t, "GET", "/tls_certificates/"+second, nil).Expect(t, http.StatusNotFound)
	h.noOrphans(t)
}

// A managed certificate in use by its domain or ingress cannot be deleted through
// /tls_certificates: the same refusal as an uploaded certificate a domain references (400,
// ERR_NGROK_1966 naming id), and it stays.
func TestManagedCertificateInUse(t *testing.T) {
	h := newHarness(t, nil)
	_, id, _ := h.domainWithCNAME(t, "inuse")
	h.a.Do(t, "PATCH", "/reserved_domains/"+id, withPolicy).Expect(t, http.StatusOK)
	ingress := h.a.Do(t, "POST", "/agent_ingresses", map[string]any{"domain": testkit.UniqueName("inuse", "example.com"),
		"certificate_management_policy": map[string]any{}}).Expect(t, http.StatusCreated)["id"].(string)

	// The uploaded certificate a domain references, for comparison.
	other := testkit.UniqueName("uploaded", "example.com")
	uploaded := upload(t, h.a, other)
	h.a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": other, "certificate_id": uploaded}).Expect(t, http.StatusCreated)
	want := h.a.Do(t, "DELETE", "/tls_certificates/"+uploaded, nil).ExpectError(t, http.StatusBadRequest, tlscerts.CodeInUse, "id")

	domainCert := h.waitFor(t, "/reserved_domains/"+id, 30*time.Second, issued)["certificate"].(map[string]any)["id"].(string)
	h.waitFor(t, "/agent_ingresses/"+ingress, 30*time.Second, issued)
	var ingressCert string
	for _, c := range h.certificates(t) {
		if c != domainCert && c != uploaded {
			ingressCert = c
		}
	}
	for _, c := range []string{domainCert, ingressCert} {
		got := h.a.Do(t, "DELETE", "/tls_certificates/"+c, nil).ExpectError(t, http.StatusBadRequest, tlscerts.CodeInUse, "id")
		if got["error_code"] != want["error_code"] || got["status_code"] != want["status_code"] {
			t.Errorf("deleting managed %s: %v, uploaded: %v", c, got, want)
		}
		h.a.Do(t, "GET", "/tls_certificates/"+c, nil).Expect(t, http.StatusOK)
	}
	h.noOrphans(t)
}

// upload stores a self-signed certificate for names as a TLS certificate of a.
func upload(t *testing.T, a *testkit.Account, names ...string) string {
	t.Helper()
	certPEM, keyPEM, _ := testkit.SelfSigned(t, &x509.Certificate{Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(0, 3, 0), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	return a.Do(t, "POST", "/tls_certificates", map[string]any{"certificate_pem": certPEM, "private_key_pem": keyPEM}).Expect(t, http.StatusCreated)["id"].(string)
}

// noOrphans checks that every managed certificate of the account (issued_at set) is held by
// exactly one reserved domain or agent ingress and counted once as referenced, and that every
// certificate a domain or ingress holds exists.
func (h *harness) noOrphans(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	raw, err := h.s.DB.QueryAll(ctx, store.Collection(h.a.AccountID, ids.TLSCertificate))
	if err != nil {
		t.Fatal(err)
	}
	managed := map[string]tlscerts.TLSCertificateItem{}
	for _, it := range raw {
		var c tlscerts.TLSCertificateItem
		if err := store.Unmarshal(it, &c); err != nil {
			t.Fatal(err)
		}
		if c.IssuedAt != 0 {
			managed[c.ID] = c
		}
	}
	held := map[string][]string{}
	for _, prefix := range []string{ids.ReservedDomain, ids.AgentIngress} {
		items, err := h.s.DB.QueryAll(ctx, store.Collection(h.a.AccountID, prefix))
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			var r struct {
				store.Meta
				domains.CertManagement
			}
			if err := store.Unmarshal(it, &r); err != nil {
				t.Fatal(err)
			}
			if c := r.ManagedCertificateID; c != "" {
				held[c] = append(held[c], r.ID)
				if _, ok := managed[c]; !ok {
					t.Errorf("%s holds the managed certificate %s, which does not exist", r.ID, c)
				}
			}
		}
	}
	for id, c := range managed {
		if len(held[id]) != 1 || c.Refs != 1 {
			t.Errorf("managed certificate %s is held by %v with %d references, want one holder and one reference", id, held[id], c.Refs)
		}
	}
}

// gate stops the worker once a job of an armed resource has its certificate, before storing
// it, until the test releases it; superseded receives the ids of the jobs that then stored
// nothing.
type gate struct {
	mu         sync.Mutex
	armed      map[string]chan struct{}
	reached    chan string
	superseded chan string
}

func newGate() *gate {
	return &gate{armed: map[string]chan struct{}{}, reached: make(chan string, 8), superseded: make(chan string, 64)}
}

// fault is the worker's Fault: it holds the first job of an armed resource that gets this far.
func (g *gate) fault(job domains.CertJobMessage) bool {
	g.mu.Lock()
	release, ok := g.armed[job.ResourceID]
	delete(g.armed, job.ResourceID)
	g.mu.Unlock()
	if ok {
		g.reached <- job.JobID
		<-release
	}
	return false
}

// hold arms the gate for the resource id and returns what releases it.
func (g *gate) hold(id string) (release func()) {
	ch := make(chan struct{})
	g.mu.Lock()
	g.armed[id] = ch
	g.mu.Unlock()
	return func() { close(ch) }
}

// Enabled implements slog.Handler: the worker's log tells when a job stored nothing.
func (g *gate) Enabled(context.Context, slog.Level) bool { return true }

// Handle implements slog.Handler.
func (g *gate) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "superseded") {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "job_id" {
				select {
				case g.superseded <- a.Value.String():
				default: // nobody waits for so many
				}
			}
			return true
		})
	}
	return nil
}

// WithAttrs implements slog.Handler.
func (g *gate) WithAttrs([]slog.Attr) slog.Handler { return g }

// WithGroup implements slog.Handler.
func (g *gate) WithGroup(string) slog.Handler { return g }

// wait receives from ch within 60 seconds, until it receives want when want is set.
func wait(t *testing.T, ch chan string, want, what string) string {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case v := <-ch:
			if want == "" || v == want {
				return v
			}
		case <-timeout:
			t.Fatalf("timed out waiting for %s", what)
			return ""
		}
	}
}

// After every flow that detaches, replaces or deletes a managed certificate, the account holds
// no managed certificate without its holder: DELETE …/certificate (refused while a policy
// manages it, as the platform does; once the policy is detached it detaches and deletes the
// kept certificate), an uploaded certificate attached in place of a kept one, stopping an
// ingress's management then deleting it, deleting a domain, and jobs that finish after their
// resource was deleted or their policy removed, which store nothing.
func TestManagedCertificatesNeverOrphaned(t *testing.T) {
	g := newGate()
	h := newHarness(t, func(w *certs.Worker) {
		w.Fault = g.fault
		w.Log = slog.New(g)
	})
	custom := func(label string) (id, name string) {
		name, id, _ = h.domainWithCNAME(t, label)
		return id, name
	}
	policy := withPolicy
	managedCert := func(path string) string {
		return h.waitFor(t, path, 30*time.Second, issued)["certificate"].(map[string]any)["id"].(string)
	}

	// DELETE …/certificate: 436 while the policy manages it; the policy detached, the
	// certificate stays attached and in use; then DELETE …/certificate deletes it.
	d1, d1Name := custom("detach")
	h.a.Do(t, "PATCH", "/reserved_domains/"+d1, policy).Expect(t, http.StatusOK)
	a := managedCert("/reserved_domains/" + d1)
	h.noOrphans(t)
	h.a.Do(t, "DELETE", "/reserved_domains/"+d1+"/certificate", nil).ExpectError(t, http.StatusBadRequest, domains.CodeDetachPolicy, "id")
	h.a.Do(t, "DELETE", "/reserved_domains/"+d1+"/certificate_management_policy", nil).Expect(t, http.StatusNoContent)
	got := h.a.Do(t, "GET", "/reserved_domains/"+d1, nil).Expect(t, http.StatusOK)
	if ref, _ := got["certificate"].(map[string]any); ref == nil || ref["id"] != a || got["certificate_management_policy"] != nil {
		t.Fatalf("after detaching the policy: %v, want certificate %s kept", got, a)
	}
	h.noOrphans(t)
	h.a.Do(t, "DELETE", "/tls_certificates/"+a, nil).ExpectError(t, http.StatusBadRequest, tlscerts.CodeInUse, "id")
	h.a.Do(t, "DELETE", "/reserved_domains/"+d1+"/certificate", nil).Expect(t, http.StatusNoContent)
	if got := h.a.Do(t, "GET", "/reserved_domains/"+d1, nil).Expect(t, http.StatusOK); got["certificate"] != nil {
		t.Fatalf("after DELETE …/certificate: %v", got)
	}
	h.a.Do(t, "GET", "/tls_certificates/"+a, nil).Expect(t, http.StatusNotFound)
	h.noOrphans(t)

	// A new policy's certificate, kept after the policy is detached, replaced by an uploaded one.
	h.a.Do(t, "PATCH", "/reserved_domains/"+d1, policy).Expect(t, http.StatusOK)
	b := managedCert("/reserved_domains/" + d1)
	h.a.Do(t, "DELETE", "/reserved_domains/"+d1+"/certificate_management_policy", nil).Expect(t, http.StatusNoContent)
	uploaded := upload(t, h.a, d1Name)
	got = h.a.Do(t, "PATCH", "/reserved_domains/"+d1, map[string]any{"certificate_id": uploaded}).Expect(t, http.StatusOK)
	if ref, _ := got["certificate"].(map[string]any); ref == nil || ref["id"] != uploaded {
		t.Fatalf("after attaching an uploaded certificate: %v", got)
	}
	h.a.Do(t, "GET", "/tls_certificates/"+b, nil).Expect(t, http.StatusNotFound)
	h.noOrphans(t)

	// An ingress whose management stops keeps its certificate, in use, until it is deleted.
	ing := h.a.Do(t, "POST", "/agent_ingresses", map[string]any{"domain": testkit.UniqueName("stop", "example.com")}).Expect(t, http.StatusCreated)["id"].(string)
	before := len(h.certificates(t))
	h.a.Do(t, "PATCH", "/agent_ingresses/"+ing, policy).Expect(t, http.StatusOK)
	h.waitFor(t, "/agent_ingresses/"+ing, 30*time.Second, issued)
	h.a.Do(t, "PATCH", "/agent_ingresses/"+ing, map[string]any{"certificate_management_policy": nil}).Expect(t, http.StatusOK)
	if n := len(h.certificates(t)); n != before+1 {
		t.Fatalf("%d certificates after stopping the ingress's management, want %d", n, before+1)
	}
	h.noOrphans(t)
	h.a.Do(t, "DELETE", "/agent_ingresses/"+ing, nil).Expect(t, http.StatusNoContent)
	if n := len(h.certificates(t)); n != before {
		t.Fatalf("%d certificates after deleting the ingress, want %d", n, before)
	}
	h.noOrphans(t)

	// Deleting a managed domain.
	d2, _ := custom("delete")
	h.a.Do(t, "PATCH", "/reserved_domains/"+d2, policy).Expect(t, http.StatusOK)
	c := managedCert("/reserved_domains/" + d2)
	h.a.Do(t, "DELETE", "/reserved_domains/"+d2, nil).Expect(t, http.StatusNoContent)
	h.a.Do(t, "GET", "/tls_certificates/"+c, nil).Expect(t, http.StatusNotFound)
	h.noOrphans(t)

	// Jobs that finish once their resource is deleted or its policy removed store nothing.
	late := []struct {
		name  string
		start func() (path string)
		undo  func(path string)
	}{
		{"domain deleted", func() string { id, _ := custom("late"); return "/reserved_domains/" + id },
			func(path string) { h.a.Do(t, "DELETE", path, nil).Expect(t, http.StatusNoContent) }},
		{"domain policy detached", func() string { id, _ := custom("late"); return "/reserved_domains/" + id },
			func(path string) {
				h.a.Do(t, "DELETE", path+"/certificate_management_policy", nil).Expect(t, http.StatusNoContent)
			}},
		{"ingress deleted", func() string {
			return "/agent_ingresses/" + h.a.Do(t, "POST", "/agent_ingresses", map[string]any{"domain": testkit.UniqueName("late", "example.com")}).Expect(t, http.StatusCreated)["id"].(string)
		}, func(path string) { h.a.Do(t, "DELETE", path, nil).Expect(t, http.StatusNoContent) }},
		{"ingress policy removed", func() string {
			return "/agent_ingresses/" + h.a.Do(t, "POST", "/agent_ingresses", map[string]any{"domain": testkit.UniqueName("late", "example.com")}).Expect(t, http.StatusCreated)["id"].(string)
		}, func(path string) {
			h.a.Do(t, "PATCH", path, map[string]any{"certificate_management_policy": nil}).Expect(t, http.StatusOK)
		}},
	}
	for _, l := range late {
		path := l.start()
		before := h.certificates(t)
		release := g.hold(path[strings.LastIndexByte(path, '/')+1:])
		h.a.Do(t, "PATCH", path, policy).Expect(t, http.StatusOK)
		job := wait(t, g.reached, "", l.name+": the job's certificate")
		l.undo(path)
		release()
		wait(t, g.superseded, job, l.name+": the job storing nothing")
		if after := h.certificates(t); len(after) != len(before) {
			t.Errorf("%s: the late job stored a certificate: %v, was %v", l.name, after, before)
		}
		h.noOrphans(t)
	}
}
