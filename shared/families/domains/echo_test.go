package domains_test

import (
	"net/http"
	"reflect"
	"testing"

	"tunnelapi/shared/families/domains"
	"tunnelapi/shared/testing/testkit"
)

// certOf is the id of the certificate a read of path shows ("" when none).
func certOf(t *testing.T, a *testkit.Account, path string) string {
	t.Helper()
	ref, _ := a.Do(t, "GET", path, nil).Expect(t, http.StatusOK)["certificate"].(map[string]any)
	id, _ := ref["id"].(string)
	return id
}

// The platform's Terraform provider sends a reserved domain's whole state with every update:
// its certificate_id is the certificate the domain shows ("" when none), beside its policy when
// it has one. That is no change; every other certificate_id keeps its rules.
func TestReservedDomainCertificateEchoed(t *testing.T) {
	s, a := testkit.AppAccount(t)
	policy := map[string]any{"authority": "letsencrypt", "private_key_type": "ecdsa"}
	patch := func(id string, body map[string]any) *testkit.Response {
		return a.Do(t, "PATCH", "/reserved_domains/"+id, body)
	}

	t.Run("none under the base domain", func(t *testing.T) {
		id := a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": testkit.UniqueName("echo", base)}).Expect(t, http.StatusCreated)["id"].(string)
		got := patch(id, map[string]any{"certificate_id": "", "description": "d", "resolves_to": []any{}}).Expect(t, http.StatusOK)
		if got["description"] != "d" || got["certificate"] != nil {
			t.Fatalf("PATCH echoing no certificate: %v", got)
		}
		patch(id, map[string]any{"certificate_id": ""}).Expect(t, http.StatusOK)
		patch(id, map[string]any{"certificate_id": uploadCert(t, a, "x.example.com")}).ExpectError(t, http.StatusBadRequest, domains.CodeCertOnBase, "certificate_id")
	})

	t.Run("none on a custom domain", func(t *testing.T) {
		_, id := a.ReserveDomain(t)
		before := a.Do(t, "GET", "/reserved_domains/"+id, nil).Expect(t, http.StatusOK)
		if got := patch(id, map[string]any{"certificate_id": ""}).Expect(t, http.StatusOK); !reflect.DeepEqual(got, before) {
			t.Fatalf("a PATCH echoing no certificate changed\n%v\nto\n%v", before, got)
		}
		patch(id, map[string]any{"certificate_id": "cert_nope"}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_215", "certificate_id")
	})

	t.Run("uploaded", func(t *testing.T) {
		name, id := a.ReserveDomain(t)
		cert := uploadCert(t, a, name)
		patch(id, map[string]any{"certificate_id": cert}).Expect(t, http.StatusOK)
		got := patch(id, map[string]any{"certificate_id": cert, "certificate_management_policy": nil, "description": "d"}).Expect(t, http.StatusOK)
		if certOf(t, a, "/reserved_domains/"+id) != cert || got["description"] != "d" {
			t.Fatalf("PATCH echoing the uploaded certificate: %v", got)
		}
		patch(id, map[string]any{"certificate_id": ""}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_215", "certificate_id")
		patch(id, map[string]any{"certificate_id": cert, "certificate_management_policy": policy}).ExpectError(t, http.StatusBadRequest, domains.CodeCertAndPolicy, "certificate_id")
		// Referenced once still: the domain's deletion frees it.
		a.Do(t, "DELETE", "/tls_certificates/"+cert, nil).ExpectError(t, http.StatusBadRequest, "", "id")
		a.Do(t, "DELETE", "/reserved_domains/"+id, nil).Expect(t, http.StatusNoContent)
		a.Do(t, "DELETE", "/tls_certificates/"+cert, nil).Expect(t, http.StatusNoContent)
	})

	t.Run("policy, none issued yet", func(t *testing.T) {
		id := a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": testkit.UniqueName("echo", "example.com"),
			"certificate_management_policy": policy}).Expect(t, http.StatusCreated)["id"].(string)
		job := loadCert(t, s, a.AccountID, id).Pending.JobID
		got := patch(id, map[string]any{"certificate_id": "", "certificate_management_policy": policy, "description": "d"}).Expect(t, http.StatusOK)
		if got["description"] != "d" || got["certificate_management_policy"] == nil {
			t.Fatalf("PATCH echoing the policy and no certificate: %v", got)
		}
		if c := loadCert(t, s, a.AccountID, id); c.Pending == nil || c.Pending.JobID != job {
			t.Fatalf("the unchanged policy requested a new job: %+v, want pending %s", c.Pending, job)
		}
		other := uploadCert(t, a, "y.example.com")
		patch(id, map[string]any{"certificate_id": other, "certificate_management_policy": policy}).ExpectError(t, http.StatusBadRequest, domains.CodeCertAndPolicy, "certificate_id")
		patch(id, map[string]any{"certificate_id": other}).ExpectError(t, http.StatusBadRequest, domains.CodeCertAndPolicy, "certificate_id")
	})

	t.Run("policy with its certificate issued", func(t *testing.T) {
		name := testkit.UniqueName("echo", "example.com")
		id := a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": name,
			"certificate_management_policy": policy}).Expect(t, http.StatusCreated)["id"].(string)
		managed := uploadCert(t, a, name)
		issuedJob(t, s, a.AccountID, id, managed)
		before := loadCert(t, s, a.AccountID, id)
		got := patch(id, map[string]any{"certificate_id": managed, "certificate_management_policy": policy, "description": "d"}).Expect(t, http.StatusOK)
		if got["description"] != "d" || certOf(t, a, "/reserved_domains/"+id) != managed {
			t.Fatalf("PATCH echoing the managed certificate beside its policy: %v", got)
		}
		if c := loadCert(t, s, a.AccountID, id); c.Pending != nil || c.ManagedCertificateID != managed || c.RenewsAt != before.RenewsAt {
			t.Fatalf("the unchanged policy requested a certificate again: %+v", c)
		}
		patch(id, map[string]any{"certificate_id": uploadCert(t, a, name), "certificate_management_policy": policy}).ExpectError(t, http.StatusBadRequest, domains.CodeCertAndPolicy, "certificate_id")

		// Detached, the policy leaves its certificate attached: echoed, it stays.
		a.Do(t, "DELETE", "/reserved_domains/"+id+"/certificate_management_policy", nil).Expect(t, http.StatusNoContent)
		patch(id, map[string]any{"certificate_id": managed, "certificate_management_policy": nil, "description": "e"}).Expect(t, http.StatusOK)
		if certOf(t, a, "/reserved_domains/"+id) != managed {
			t.Fatal("echoing the kept certificate detached it")
		}
		a.Do(t, "GET", "/tls_certificates/"+managed, nil).Expect(t, http.StatusOK)
	})

	t.Run("policy after a failed job", func(t *testing.T) {
		id := a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": testkit.UniqueName("echo", "example.com"),
			"certificate_management_policy": policy}).Expect(t, http.StatusCreated)["id"].(string)
		failedJob(t, s, a.AccountID, id, "")
		job := loadCert(t, s, a.AccountID, id).Pending.JobID
		patch(id, map[string]any{"certificate_id": "", "certificate_management_policy": policy}).Expect(t, http.StatusOK)
		if c := loadCert(t, s, a.AccountID, id); c.Pending == nil || c.Pending.JobID == job {
			t.Fatalf("setting the policy again after a failed job did not retry it: %+v", c.Pending)
		}
	})
}

// An agent ingress's unchanged policy, as the Terraform provider sends it back, requests no new
// certificate; after a failed job it retries at once.
func TestAgentIngressPolicyEchoed(t *testing.T) {
	s, a := testkit.AppAccount(t)
	policy := map[string]any{"authority": "letsencrypt", "private_key_type": "rsa"}
	id := a.Do(t, "POST", "/agent_ingresses", map[string]any{"domain": testkit.UniqueName("echo", "example.net"),
		"certificate_management_policy": policy}).Expect(t, http.StatusCreated)["id"].(string)
	job := loadCert(t, s, a.AccountID, id).Pending.JobID
	a.Do(t, "PATCH", "/agent_ingresses/"+id, map[string]any{"certificate_management_policy": policy, "description": "d"}).Expect(t, http.StatusOK)
	if c := loadCert(t, s, a.AccountID, id); c.Pending == nil || c.Pending.JobID != job {
		t.Fatalf("the unchanged policy requested a new job: %+v, want pending %s", c.Pending, job)
	}
	a.Do(t, "PATCH", "/agent_ingresses/"+id, map[string]any{"certificate_management_policy": map[string]any{"private_key_type": "ecdsa"}}).Expect(t, http.StatusOK)
	if c := loadCert(t, s, a.AccountID, id); c.Pending == nil || c.Pending.JobID == job || c.Policy.PrivateKeyType != "ecdsa" {
		t.Fatalf("a changed policy requested no new job: %+v", c)
	}
	failedJob(t, s, a.AccountID, id, "")
	job = loadCert(t, s, a.AccountID, id).Pending.JobID
	a.Do(t, "PATCH", "/agent_ingresses/"+id, map[string]any{"certificate_management_policy": map[string]any{"private_key_type": "ecdsa"}}).Expect(t, http.StatusOK)
	if c := loadCert(t, s, a.AccountID, id); c.Pending == nil || c.Pending.JobID == job {
		t.Fatalf("setting the policy again after a failed job did not retry it: %+v", c.Pending)
	}
}
