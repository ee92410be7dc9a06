package domains_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/families/domains"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
)

// failedJob writes what the certificate worker leaves on a managed resource whose job failed
// and waits for its retry (a DNS_ERROR with retries_at, the scheduler's due entry) and, when
// certID is set, a certificate it issued before (the uploaded certificate certID made into one:
// issued_at set, referenced once). It returns the due entry's key.
func failedJob(t *testing.T, s *testkit.Stack, account, id, certID string) store.Key {
	t.Helper()
	now := time.Now()
	return workerWrote(t, s, account, id, certID, &domains.CertJob{ErrorCode: "DNS_ERROR", Msg: "create the CNAME", StartedAt: now.Unix(), RetriesAt: now.Add(time.Hour).Unix()})
}

// issuedJob writes what the certificate worker leaves on a managed resource whose job issued
// certID (an uploaded certificate made into the managed one, as failedJob does): no pending
// or running job, the certificate due for renewal. It returns the due entry's key.
func issuedJob(t *testing.T, s *testkit.Stack, account, id, certID string) store.Key {
	t.Helper()
	return workerWrote(t, s, account, id, certID, nil)
}

// workerWrote is failedJob with job, or issuedJob without.
func workerWrote(t *testing.T, s *testkit.Stack, account, id, certID string, job *domains.CertJob) store.Key {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	due := store.CertDueKey(now.Add(time.Hour).Unix(), account, id)
	upd := expression.Set(expression.Name("cert_due"), expression.Value(due.SK)).
		Set(expression.Name("renews_at"), expression.Value(now.Add(60*24*time.Hour).Unix())).Add(expression.Name(store.AttrVersion), expression.Value(1))
	if job != nil {
		upd = upd.Set(expression.Name("provisioning_job"), expression.Value(*job))
	} else {
		upd = upd.Remove(expression.Name("provisioning_job")).Remove(expression.Name("cert_pending"))
	}
	if certID != "" {
		upd = upd.Set(expression.Name("managed_certificate_id"), expression.Value(certID))
	}
	tx := &store.Tx{}
	if certID != "" {
		// The certificate becomes what the worker stores: issued, held by its resource.
		tx.Update("cert", store.ResourceKey(account, certID), expression.Set(expression.Name("issued_at"), expression.Value(now.Unix())).
			Set(expression.Name(store.AttrRefs), expression.Value(1)).Add(expression.Name(store.AttrVersion), expression.Value(1)), store.Exists())
	}
	tx.Update("target", store.ResourceKey(account, id), upd, store.Exists())
	tx.Put("due", domains.CertDueItem{Key: due, AccountID: account, ResourceID: id})
	if err := s.DB.Commit(ctx, tx); err != nil {
		t.Fatal(err)
	}
	return due
}

// loadCert reads the certificate management state of the resource id of account.
func loadCert(t *testing.T, s *testkit.Stack, account, id string) domains.CertManagement {
	t.Helper()
	var it struct{ domains.CertManagement }
	if err := s.DB.Get(context.Background(), store.ResourceKey(account, id), &it); err != nil {
		t.Fatal(err)
	}
	return it.CertManagement
}

// stopped checks that management of id stopped: no policy, job, order, status or due entry;
// the issued certificate, if any, kept.
func stopped(t *testing.T, s *testkit.Stack, account, id string, due store.Key, keptCert string) {
	t.Helper()
	c := loadCert(t, s, account, id)
	if c.Policy != nil || c.Pending != nil || c.Job != nil || c.DueSK != "" || c.RenewsAt != 0 || len(c.Names) != 0 || c.ManagedCertificateID != keptCert {
		t.Fatalf("after stopping management: %+v (managed certificate %q, want %q)", c, c.ManagedCertificateID, keptCert)
	}
	var left map[string]any
	if err := s.DB.Get(context.Background(), due, &left); !store.IsNotFound(err) {
		t.Fatalf("the due entry %v is still there (%v): the scheduler would renew an unmanaged certificate", due, err)
	}
}

// A PATCH of certificate_management_policy to null stops management of an agent ingress (the
// platform has no DELETE route for it): the policy, the job state and the due entry go, in one
// transaction; a certificate already issued stays an account certificate. {} sets the policy
// with its defaults; null again is a no-op.
func TestAgentIngressPolicyCleared(t *testing.T) {
	s, a := testkit.AppAccount(t)
	id := a.Do(t, "POST", "/agent_ingresses", map[string]any{"domain": testkit.UniqueName("clear", "example.com"),
		"certificate_management_policy": map[string]any{"private_key_type": "ecdsa"}}).Expect(t, http.StatusCreated)["id"].(string)
	cert := uploadCert(t, a, "tunnel.us.example.com")
	due := failedJob(t, s, a.AccountID, id, cert)
	if got := a.Do(t, "GET", "/agent_ingresses/"+id, nil).Expect(t, http.StatusOK); fmt.Sprint(got["certificate_management_status"]) == "<nil>" {
		t.Fatalf("status before clearing: %v", got)
	}
	for range 2 {
		got := a.Do(t, "PATCH", "/agent_ingresses/"+id, map[string]any{"certificate_management_policy": nil}).Expect(t, http.StatusOK)
		if got["certificate_management_policy"] != nil || got["certificate_management_status"] != nil {
			t.Fatalf("after PATCH null: %v", got)
		}
		stopped(t, s, a.AccountID, id, due, cert)
	}
	got := a.Do(t, "PATCH", "/agent_ingresses/"+id, map[string]any{"certificate_management_policy": map[string]any{}}).Expect(t, http.StatusOK)
	if fmt.Sprint(got["certificate_management_policy"]) != "map[authority:letsencrypt private_key_type:rsa]" {
		t.Fatalf("after PATCH {}: %v", got)
	}
	if c := loadCert(t, s, a.AccountID, id); c.Pending == nil || c.Pending.PrivateKeyType != "rsa" {
		t.Fatalf("after PATCH {}: no new job: %+v", c)
	}
}

// The same for a reserved domain: PATCH null is DELETE …/certificate_management_policy; the
// issued certificate stays attached (detached by DELETE …/certificate); one PATCH may stop the
// policy and attach an uploaded certificate at once.
func TestReservedDomainPolicyCleared(t *testing.T) {
	s, a := testkit.AppAccount(t)
	name := testkit.UniqueName("clear", "example.org")
	id := a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": name,
		"certificate_management_policy": map[string]any{}}).Expect(t, http.StatusCreated)["id"].(string)
	issued := uploadCert(t, a, name)
	due := failedJob(t, s, a.AccountID, id, issued)
	got := a.Do(t, "PATCH", "/reserved_domains/"+id, map[string]any{"certificate_management_policy": nil}).Expect(t, http.StatusOK)
	if got["certificate_management_policy"] != nil || got["certificate_management_status"] != nil || got["acme_challenge_cname_target"] != nil {
		t.Fatalf("after PATCH null: %v", got)
	}
	if ref, _ := got["certificate"].(map[string]any); ref["id"] != issued {
		t.Fatalf("the issued certificate is no longer attached: %v", got["certificate"])
	}
	stopped(t, s, a.AccountID, id, due, issued)
	// The DELETE route does the same.
	a.Do(t, "PATCH", "/reserved_domains/"+id, map[string]any{"certificate_management_policy": map[string]any{"private_key_type": "rsa"}}).Expect(t, http.StatusOK)
	due = failedJob(t, s, a.AccountID, id, issued)
	a.Do(t, "DELETE", "/reserved_domains/"+id+"/certificate_management_policy", nil).Expect(t, http.StatusNoContent)
	stopped(t, s, a.AccountID, id, due, issued)
	// Null and an uploaded certificate in one PATCH.
	a.Do(t, "PATCH", "/reserved_domains/"+id, map[string]any{"certificate_management_policy": map[string]any{}}).Expect(t, http.StatusOK)
	uploaded := uploadCert(t, a, name)
	got = a.Do(t, "PATCH", "/reserved_domains/"+id, map[string]any{"certificate_management_policy": nil, "certificate_id": uploaded}).Expect(t, http.StatusOK)
	if ref, _ := got["certificate"].(map[string]any); ref["id"] != uploaded || got["certificate_management_policy"] != nil {
		t.Fatalf("after replacing the policy with a certificate: %v", got)
	}
	a.Do(t, "DELETE", "/tls_certificates/"+uploaded, nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_1966", "id")
}

// Bad policy members on PATCH get their code and leave the policy and its job as they were.
func TestPolicyPatchBadInput(t *testing.T) {
	s, a := testkit.AppAccount(t)
	policy := map[string]any{"private_key_type": "ecdsa"}
	paths := map[string]string{
		"/agent_ingresses":  a.Do(t, "POST", "/agent_ingresses", map[string]any{"domain": testkit.UniqueName("bad", "example.com"), "certificate_management_policy": policy}).Expect(t, http.StatusCreated)["id"].(string),
		"/reserved_domains": a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": testkit.UniqueName("bad", "example.org"), "certificate_management_policy": policy}).Expect(t, http.StatusCreated)["id"].(string),
	}
	cases := []struct {
		name        string
		value       any
		code, field string
	}{
		{"a number", 5, "ERR_NGROK_215", "certificate_management_policy"},
		{"a string", "letsencrypt", "ERR_NGROK_215", "certificate_management_policy"},
		{"an array", []any{}, "ERR_NGROK_215", "certificate_management_policy"},
		{"an unknown member", map[string]any{"renew": true}, "ERR_NGROK_214", "certificate_management_policy.renew"},
		{"a member of the wrong type", map[string]any{"authority": 1}, "ERR_NGROK_215", "certificate_management_policy.authority"},
		{"authority", map[string]any{"authority": "zerossl"}, "ERR_NGROK_435", "certificate_management_policy.authority"},
		{"private key type", map[string]any{"private_key_type": "dsa"}, "ERR_NGROK_215", "certificate_management_policy.private_key_type"},
	}
	for path, id := range paths {
		before := loadCert(t, s, a.AccountID, id)
		for _, c := range cases {
			t.Run(path+"/"+c.name, func(t *testing.T) {
				a.Do(t, "PATCH", path+"/"+id, map[string]any{"certificate_management_policy": c.value}).ExpectError(t, http.StatusBadRequest, c.code, c.field)
			})
		}
		after := loadCert(t, s, a.AccountID, id)
		if after.Policy == nil || *after.Policy != *before.Policy || after.Pending == nil || after.Pending.JobID != before.Pending.JobID {
			t.Fatalf("%s: refused PATCHes changed the policy or its job: %+v, was %+v", path, after, before)
		}
	}
}
