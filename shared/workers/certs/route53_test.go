package certs_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"

	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/testing/standin"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/certs"
)

// r53Env is the Route 53 stand-in with a reusable delegation set (the deployment's ns_targets)
// and the service's hosted zone, and a real Route 53 client pointed at it.
type r53Env struct {
	st       *standin.Route53
	client   *route53.Client
	setID    string
	nameSrvs []string
	svcZone  string
}

func newR53(t testing.TB, maxAttempts int) *r53Env {
	t.Helper()
	creds := &standin.Credentials{}
	creds.Add("AKIDROUTE53TEST", "route53-test-secret", "", time.Time{})
	st := standin.StartRoute53(creds)
	t.Cleanup(st.Close)
	e := &r53Env{st: st, setID: "N0DELEGATIONSET", nameSrvs: []string{"ns1.dns.tunnels.example.com", "ns2.dns.tunnels.example.com"}}
	st.AddDelegationSet(e.setID, e.nameSrvs)
	e.client = route53.New(route53.Options{Region: "us-east-1", BaseEndpoint: aws.String(st.URL),
		Credentials:      credentials.NewStaticCredentialsProvider("AKIDROUTE53TEST", "route53-test-secret", ""),
		RetryMaxAttempts: maxAttempts})
	out, err := e.client.CreateHostedZone(context.Background(), &route53.CreateHostedZoneInput{Name: aws.String("dns.tunnels.example.com"),
		CallerReference: aws.String("service-zone-" + t.Name())})
	if err != nil {
		t.Fatal(err)
	}
	e.svcZone = strings.TrimPrefix(aws.ToString(out.HostedZone.Id), "/hostedzone/")
	return e
}

// provider is a Route53 DNS provider on the stand-in, as one worker instance holds it (each
// has its own cache of zone ids).
func (e *r53Env) provider() *certs.Route53 {
	return &certs.Route53{Client: e.client, ZoneID: e.svcZone, DelegationSetID: e.setID}
}

// ingressZone returns the records of ingress id's zone through p, which creates the zone
// when there is none, failing t on an error.
func ingressZone(t testing.TB, p *certs.Route53, id, domain string) certs.Records {
	t.Helper()
	zone, err := p.IngressZone(context.Background(), id, domain)
	if err != nil {
		t.Fatal(err)
	}
	return zone
}

// ingressZones are the stand-in's zones created for agent ingresses (the service's aside).
func (e *r53Env) ingressZones() []standin.R53Zone {
	var out []standin.R53Zone
	for _, z := range e.st.Zones() {
		if z.ID != e.svcZone {
			out = append(out, z)
		}
	}
	return out
}

// Concurrent jobs of one agent ingress, on separate worker instances, create its hosted zone
// once: named after the domain, CallerReference the ingress id, on the reusable delegation set
// (GetHostedZone reports the configured name servers); every job gets that zone.
func TestRoute53IngressZoneCreatedOnce(t *testing.T) {
	e := newR53(t, 0)
	ctx := context.Background()
	const id, domain = "agin_2abcdefghijklmnopqrstuvwxy", "agents.customer.example"
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Go(func() { _, errs[i] = e.provider().IngressZone(ctx, id, domain) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("job %d: %v", i, err)
		}
	}
	zones := e.ingressZones()
	if len(zones) != 1 {
		t.Fatalf("%d ingress zones, want 1: %+v", len(zones), zones)
	}
	z := zones[0]
	if z.Name != domain+"." || z.CallerReference != id || z.DelegationSetID != e.setID {
		t.Errorf("zone %+v: want %s. with caller reference %s on %s", z, domain, id, e.setID)
	}
	got, err := e.client.GetHostedZone(ctx, &route53.GetHostedZoneInput{Id: aws.String(z.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.DelegationSet.NameServers, e.nameSrvs) {
		t.Errorf("the zone is served by %v, want the ns_targets %v", got.DelegationSet.NameServers, e.nameSrvs)
	}
	if n := e.st.OpCalls("CreateHostedZone"); n < 1 {
		t.Errorf("CreateHostedZone called %d times", n)
	}
	// A worker that already knows the zone asks nothing; one that does not finds it.
	p := e.provider()
	ingressZone(t, p, id, domain)
	before := e.st.OpCalls("CreateHostedZone")
	ingressZone(t, p, id, domain)
	if n := e.st.OpCalls("CreateHostedZone"); n != before || len(e.ingressZones()) != 1 {
		t.Errorf("a zone already there was created again (%d calls, %d zones)", n-before, len(e.ingressZones()))
	}
}

// A challenge record of an agent ingress goes in the ingress's zone at
// _acme-challenge.tunnel.<region>.<domain>, its value quoted, TTL 60, and is deleted after;
// a custom domain's goes in the service's zone at its acme_challenge_cname_target.
func TestRoute53ChallengeRecords(t *testing.T) {
	e := newR53(t, 0)
	ctx := context.Background()
	p := e.provider()
	const id, domain = "agin_2bcdefghijklmnopqrstuvwxyz", "tunnels.customer.example"
	zone := ingressZone(t, p, id, domain)
	name := "_acme-challenge.tunnel.us." + domain
	const value = "Xy-z_0123456789abcdefghijklmnopqrstuvwxyzAB"
	if err := zone.SetTXT(ctx, name, value); err != nil {
		t.Fatal(err)
	}
	if err := zone.(certs.Syncer).WaitTXT(ctx, name, value); err != nil {
		t.Fatal(err)
	}
	if e.st.OpCalls("GetChange") < 1 {
		t.Error("WaitTXT did not ask whether the change is served")
	}
	z := e.ingressZones()[0]
	rec, ok := z.Records[name+". TXT"]
	if !ok || !slices.Equal(rec.Values, []string{`"` + value + `"`}) || rec.TTL != 60 {
		t.Fatalf("the ingress zone holds %+v (%v), want TXT %s. \"%s\" TTL 60", rec, ok, name, value)
	}
	// Writing it again replaces it (a redelivered job); clearing removes it, and clearing
	// again is nothing.
	if err := zone.SetTXT(ctx, name, "second"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := zone.ClearTXT(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := e.ingressZones()[0].Records[name+". TXT"]; ok {
		t.Error("the TXT record is still there after ClearTXT")
	}
	// A custom domain's record: in the service's zone.
	target := "abc123.acme.dns.tunnels.example.com"
	if err := p.ServiceZone().SetTXT(ctx, target, value); err != nil {
		t.Fatal(err)
	}
	var inService bool
	for _, c := range e.st.Changes() {
		if c.ZoneID == e.svcZone && c.Record.Name == target+"." && c.Action == "UPSERT" {
			inService = true
		}
		if c.ZoneID == e.svcZone && strings.HasSuffix(c.Record.Name, domain+".") {
			t.Errorf("an ingress record was written in the service's zone: %+v", c)
		}
	}
	if !inService {
		t.Errorf("no UPSERT of %s in the service's zone: %+v", target, e.st.Changes())
	}
}

// Deleting an ingress's zone deletes its records first (Route 53 refuses to delete a zone that
// has any besides its SOA and NS), then the zone; a second deletion, or one of a zone never
// created, is success. Another ingress's zone is untouched.
func TestRoute53DeleteIngressZone(t *testing.T) {
	e := newR53(t, 0)
	ctx := context.Background()
	p := e.provider()
	const id, domain = "agin_2cdefghijklmnopqrstuvwxyza", "del.customer.example"
	zone := ingressZone(t, p, id, domain)
	ingressZone(t, p, "agin_2keepmeabcdefghijklmnopqrs", "keep.customer.example")
	for _, region := range []string{"us", "eu", "ap"} {
		if err := zone.SetTXT(ctx, "_acme-challenge.tunnel."+region+"."+domain, "v-"+region); err != nil {
			t.Fatal(err)
		}
	}
	zoneID := ""
	for _, z := range e.ingressZones() {
		if z.CallerReference == id {
			zoneID = z.ID
		}
	}
	// More records than one page of ListResourceRecordSets (300).
	var many []r53types.Change
	for i := range 320 {
		many = append(many, r53types.Change{Action: r53types.ChangeActionCreate, ResourceRecordSet: &r53types.ResourceRecordSet{
			Name: aws.String(fmt.Sprintf("host-%03d.%s", i, domain)), Type: r53types.RRTypeA, TTL: aws.Int64(300),
			ResourceRecords: []r53types.ResourceRecord{{Value: aws.String("192.0.2.1")}}}})
	}
	if _, err := e.client.ChangeResourceRecordSets(ctx, &route53.ChangeResourceRecordSetsInput{HostedZoneId: aws.String(zoneID),
		ChangeBatch: &r53types.ChangeBatch{Changes: many}}); err != nil {
		t.Fatal(err)
	}
	// What Route 53 says to a deletion of a zone with records.
	if _, err := e.client.DeleteHostedZone(ctx, &route53.DeleteHostedZoneInput{Id: aws.String(zoneID)}); err == nil || !strings.Contains(err.Error(), "HostedZoneNotEmpty") {
		t.Fatalf("deleting a zone with records: %v, want HostedZoneNotEmpty", err)
	}
	if err := e.provider().DeleteIngressZone(ctx, id, domain); err != nil {
		t.Fatal(err)
	}
	for _, z := range e.ingressZones() {
		if z.CallerReference == id {
			t.Fatalf("the zone is still there: %+v", z)
		}
	}
	deleted := 0
	for _, c := range e.st.Changes() {
		if c.ZoneID == zoneID && c.Action == "DELETE" {
			deleted++
		}
	}
	if deleted != 3+320 {
		t.Errorf("%d record sets deleted before the zone, want %d", deleted, 3+320)
	}
	if len(e.ingressZones()) != 1 {
		t.Errorf("the other ingress's zone went too: %+v", e.ingressZones())
	}
	if err := p.DeleteIngressZone(ctx, id, domain); err != nil {
		t.Errorf("deleting it again: %v", err)
	}
	if err := p.DeleteIngressZone(ctx, "agin_2neverabcdefghijklmnopqrst", "never.customer.example"); err != nil {
		t.Errorf("deleting a zone never created: %v", err)
	}
}

// Throttling is retried by the SDK; when it lasts, the call fails (the worker then records
// INTERNAL_ERROR and retries the job: TestRoute53ThrottledJobRetried).
func TestRoute53ThrottlingRetried(t *testing.T) {
	e := newR53(t, 3)
	ctx := context.Background()
	e.st.Throttle(1)
	if _, err := e.provider().IngressZone(ctx, "agin_2throttledabcdefghijklmno", "throttled.customer.example"); err != nil {
		t.Fatalf("one Throttling answer was not retried: %v", err)
	}
	if n := e.st.OpCalls("ListHostedZonesByName"); n != 2 {
		t.Errorf("ListHostedZonesByName called %d times, want 2 (throttled, retried)", n)
	}
	e.st.Throttle(-1)
	defer e.st.Throttle(0)
	_, err := e.provider().IngressZone(ctx, "agin_2throttledbbcdefghijklmno", "throttled2.customer.example")
	if err == nil || !strings.Contains(err.Error(), "Throttling") {
		t.Fatalf("lasting throttling: %v, want a Throttling error", err)
	}
}

// Without a delegation set an ingress has no zone to get: the deployment is misconfigured.
func TestRoute53NeedsDelegationSet(t *testing.T) {
	e := newR53(t, 0)
	p := e.provider()
	p.DelegationSetID = ""
	if _, err := p.IngressZone(context.Background(), "agin_2nosetabcdefghijklmnopqrs", "noset.customer.example"); err == nil || !strings.Contains(err.Error(), "DELEGATION_SET_ID") {
		t.Fatalf("IngressZone without a delegation set: %v", err)
	}
	if len(e.ingressZones()) != 0 {
		t.Error("a zone was created off the delegation set")
	}
}

// newR53Harness is the certificate pipeline on the local stack with the Route 53 provider on
// the stand-in. The stand-in mirrors every TXT change to challtestsrv, through which pebble
// resolves: pebble validates exactly the records the worker wrote in Route 53's zones.
func newR53Harness(t *testing.T, maxAttempts int) (*harness, *r53Env) {
	t.Helper()
	needACME(t)
	e := newR53(t, maxAttempts)
	chall := certs.ChallTestSrv{URL: os.Getenv("CHALLTESTSRV_URL")}
	e.st.Mirror = func(name string, values []string) {
		ctx := context.Background()
		if err := chall.ClearTXT(ctx, name); err != nil {
			t.Errorf("mirroring to challtestsrv: %v", err)
		}
		for _, v := range values {
			if err := chall.SetTXT(ctx, name, v); err != nil {
				t.Errorf("mirroring to challtestsrv: %v", err)
			}
		}
	}
	h := newHarness(t, func(w *certs.Worker) { w.DNS = e.provider() })
	return h, e
}

// An agent ingress's certificate is issued through Route 53: the worker creates the ingress's
// zone on the delegation set, writes each region domain's challenge there (pebble validates
// them through challtestsrv), clears them after; the ingress's deletion deletes the zone
// through a zone cleanup job. A custom domain's challenge goes in the service's zone.
func TestAgentIngressIssuedThroughRoute53(t *testing.T) {
	h, e := newR53Harness(t, 0)
	domain := testkit.UniqueName("r53", "example.com")
	created := h.a.Do(t, "POST", "/agent_ingresses", map[string]any{"domain": domain,
		"certificate_management_policy": map[string]any{"private_key_type": "ecdsa"}}).Expect(t, http.StatusCreated)
	id := created["id"].(string)
	body := h.waitFor(t, "/agent_ingresses/"+id, 60*time.Second, issued)
	ids := h.certificates(t)
	if len(ids) != 1 {
		t.Fatalf("%d certificates, want 1", len(ids))
	}
	regions := regionDomains(body)
	h.checkCertificate(t, ids[0], regions)

	zones := e.ingressZones()
	if len(zones) != 1 || zones[0].Name != domain+"." || zones[0].CallerReference != id || zones[0].DelegationSetID != e.setID {
		t.Fatalf("ingress zones %+v: want one for %s (caller reference %s) on the delegation set", zones, domain, id)
	}
	zoneID := zones[0].ID
	written := map[string]bool{}
	for _, c := range e.st.Changes() {
		if c.Action == "UPSERT" && c.Record.Type == "TXT" {
			if c.ZoneID != zoneID {
				t.Errorf("challenge %s written in zone %s, not the ingress's", c.Record.Name, c.ZoneID)
			}
			if len(c.Record.Values) != 1 || !strings.HasPrefix(c.Record.Values[0], `"`) || c.Record.TTL != 60 {
				t.Errorf("challenge %+v: want one quoted value, TTL 60", c.Record)
			}
			written[c.Record.Name] = true
		}
	}
	for _, rd := range regions {
		if !written["_acme-challenge."+rd+"."] {
			t.Errorf("no challenge written at _acme-challenge.%s.", rd)
		}
	}
	if n := e.st.OpCalls("GetChange"); n < len(regions) {
		t.Errorf("GetChange called %d times: the worker did not wait for its %d records to be served", n, len(regions))
	}
	for key := range zones[0].Records {
		if strings.HasSuffix(key, " TXT") {
			t.Errorf("challenge record %s left in the zone", key)
		}
	}

	// The deletion's job deletes the zone, a record besides the challenges included.
	if _, err := e.client.ChangeResourceRecordSets(context.Background(), &route53.ChangeResourceRecordSetsInput{HostedZoneId: aws.String(zoneID),
		ChangeBatch: &r53types.ChangeBatch{Changes: []r53types.Change{{Action: r53types.ChangeActionCreate, ResourceRecordSet: &r53types.ResourceRecordSet{
			Name: aws.String(regions[0]), Type: r53types.RRTypeA, TTL: aws.Int64(300),
			ResourceRecords: []r53types.ResourceRecord{{Value: aws.String("192.0.2.10")}}}}}}}); err != nil {
		t.Fatal(err)
	}
	h.a.Do(t, "DELETE", "/agent_ingresses/"+id, nil).Expect(t, http.StatusNoContent)
	deadline := time.Now().Add(30 * time.Second)
	for len(e.ingressZones()) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the deleted ingress's zone is still there: %+v", e.ingressZones())
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A custom domain: the challenge goes in the service's zone at its acme target, which
	// the owner's _acme-challenge CNAME (in challtestsrv) points to.
	_, id, target := h.domainWithCNAME(t, "r53app")
	h.a.Do(t, "PATCH", "/reserved_domains/"+id, map[string]any{"certificate_management_policy": map[string]any{}}).Expect(t, http.StatusOK)
	h.waitFor(t, "/reserved_domains/"+id, 60*time.Second, issued)
	var inService bool
	for _, c := range e.st.Changes() {
		inService = inService || c.ZoneID == e.svcZone && c.Action == "UPSERT" && c.Record.Name == target+"."
	}
	if !inService {
		t.Errorf("the custom domain's challenge was not written at %s. in the service's zone", target)
	}
}

// Route 53 throttling that outlasts the SDK's retries fails the job with INTERNAL_ERROR and a
// future retries_at; the job is retried without any user action and succeeds once Route 53
// answers again.
func TestRoute53ThrottledJobRetried(t *testing.T) {
	h, e := newR53Harness(t, 1)
	e.st.Throttle(-1)
	created := h.a.Do(t, "POST", "/agent_ingresses", map[string]any{"domain": testkit.UniqueName("r53slow", "example.com"),
		"certificate_management_policy": map[string]any{}}).Expect(t, http.StatusCreated)
	id := created["id"].(string)
	body := h.waitFor(t, "/agent_ingresses/"+id, 30*time.Second, failedWith(certs.InternalError))
	retries, err := time.Parse(time.RFC3339, job(body)["retries_at"].(string))
	if err != nil || !retries.After(time.Now().Add(-time.Second)) {
		t.Errorf("retries_at %v (%v): want a time to come", job(body)["retries_at"], err)
	}
	e.st.Throttle(0)
	h.waitFor(t, "/agent_ingresses/"+id, 60*time.Second, issued)
	if len(e.ingressZones()) != 1 {
		t.Errorf("%d ingress zones, want 1", len(e.ingressZones()))
	}
}

// An ingress deleted while its first job runs, after the deletion's cleanup job found no zone
// but before the job created it: the job's last write finds the ingress gone and deletes the
// zone itself, so no zone outlives its ingress.
func TestRoute53ZoneOfIngressDeletedMidJob(t *testing.T) {
	h, e := newR53Harness(t, 0)
	// A second worker instance on the queue, as Lambda runs one beside a busy one: it takes the
	// cleanup job while the first holds the certificate job.
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { queue.Poll(ctx, h.q.Client, h.q.Events, 5, testkit.Logger(), h.w.Handle) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	var once sync.Once
	idCh := make(chan string, 1)
	cleanupLooked := make(chan struct{})
	e.st.Before = func(op string) {
		if op != "CreateHostedZone" {
			return
		}
		once.Do(func() {
			before := e.st.OpCalls("ListHostedZonesByName")
			h.a.Do(t, "DELETE", "/agent_ingresses/"+<-idCh, nil).Expect(t, http.StatusNoContent)
			// The cleanup job lists the zones of that name (none yet) and is done.
			deadline := time.Now().Add(20 * time.Second)
			for e.st.OpCalls("ListHostedZonesByName") == before {
				if time.Now().After(deadline) {
					t.Error("the deletion's cleanup job never looked for the zone")
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond) // and finished
			close(cleanupLooked)
		})
	}
	created := h.a.Do(t, "POST", "/agent_ingresses", map[string]any{"domain": testkit.UniqueName("r53gone", "example.com"),
		"certificate_management_policy": map[string]any{}}).Expect(t, http.StatusCreated)
	idCh <- created["id"].(string)
	select {
	case <-cleanupLooked:
	case <-time.After(60 * time.Second):
		t.Fatal("the job never created the zone")
	}
	deadline := time.Now().Add(60 * time.Second)
	for len(e.ingressZones()) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the zone of the deleted ingress is still there: %+v", e.ingressZones())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The service's zone and the ingress's were created; the ingress's deleted once.
	if e.st.OpCalls("CreateHostedZone") != 2 || e.st.OpCalls("DeleteHostedZone") != 1 {
		t.Errorf("CreateHostedZone %d, DeleteHostedZone %d: want the ingress's zone created and deleted once",
			e.st.OpCalls("CreateHostedZone"), e.st.OpCalls("DeleteHostedZone"))
	}
}
