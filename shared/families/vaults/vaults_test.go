package vaults_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"tunnelapi/shared/families/vaults"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
)

// suite scans the table and the logs for every secret value the tests send, after all of them.
var suite = testkit.SecretSuite{Sealed: "value"}

func TestMain(m *testing.M) { suite.Main(m, nil) }

var unique atomic.Int64

// name is a name no other test uses.
func name(prefix string) string { return fmt.Sprintf("%s-%d", prefix, unique.Add(1)) }

// value is a fresh secret value, recorded for the suite's final scan.
func value(t testing.TB) string {
	b := make([]byte, 24)
	rand.Read(b)
	v := "sv-" + hex.EncodeToString(b)
	suite.Needles.Add("secret value", []byte(v))
	return v
}

func newVault(t *testing.T, a *testkit.Account) (id, vaultName string) {
	t.Helper()
	vaultName = name("vault")
	return a.Do(t, "POST", "/vaults", map[string]any{"name": vaultName}).Expect(t, http.StatusCreated)["id"].(string), vaultName
}

func newSecret(t *testing.T, a *testkit.Account, vault string) map[string]any {
	t.Helper()
	return a.Do(t, "POST", "/vault_secrets", map[string]any{"name": name("secret"), "value": value(t), "vault_id": vault}).Expect(t, http.StatusCreated)
}

func TestVaultsConformance(t *testing.T) {
	s := suite.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: vaults.VaultsDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			return map[string]any{"name": name(fmt.Sprintf("conformance-%d", n)), "description": "production secrets"}
		},
		Update:      map[string]any{"description": "renamed", "metadata": `{"env":"prod"}`},
		UpdateWants: map[string]any{"description": "renamed", "metadata": `{"env":"prod"}`},
	})
}

func TestSecretsConformance(t *testing.T) {
	s := suite.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: vaults.SecretsDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			vault, _ := newVault(t, a)
			return map[string]any{"name": "api-key", "value": value(t), "vault_id": vault, "description": "key"}
		},
		Update:      map[string]any{"value": value(t), "description": "rotated"},
		UpdateWants: map[string]any{"description": "rotated", "name": "api-key"},
		// Prepare (KMS) runs only for a verified caller: one read of the caller's items before
		// the transaction. A secret's response names its vault, which the create takes from
		// what the process knows of it (asserted by the transaction): the first secret of a
		// vault this process has not seen reads the vault once more, with the caller's items.
		RoundTrips: map[string]map[string]int{"create": {"BatchGetItem": 2, "TransactWriteItems": 1}},
	})
}

// A secret's value is accepted on create and update, sealed at rest (it opens only with its
// own account and id) and returned by no response; the suite's final scan finds it in no item
// and no log line.
func TestSecretValueIsWriteOnly(t *testing.T) {
	s, a := suite.App(t), suite.App(t).NewAccount(t)
	vault, vaultName := newVault(t, a)
	v1 := value(t)
	created := a.Do(t, "POST", "/vault_secrets", map[string]any{"name": "db/password", "value": v1, "vault_id": vault})
	id := created.Expect(t, http.StatusCreated)["id"].(string)
	v2 := value(t)
	updated := a.Do(t, "PATCH", "/vault_secrets/"+id, map[string]any{"value": v2})
	updated.Expect(t, http.StatusOK)
	for _, res := range []*testkit.Response{created, updated, a.Do(t, "GET", "/vault_secrets/"+id, nil),
		a.Do(t, "GET", "/vault_secrets", nil), a.Do(t, "GET", "/vaults/"+vault+"/secrets", nil)} {
		suite.Needles.AssertAbsent(t, res.Body)
		if strings.Contains(string(res.Body), `"value"`) {
			t.Fatalf("a response has a value member: %s", res.Body)
		}
	}
	got := a.Do(t, "GET", "/vault_secrets/"+id, nil).Expect(t, http.StatusOK)
	if got["vault_name"] != vaultName || got["vault"].(map[string]any)["id"] != vault {
		t.Fatalf("secret's vault: %v", got)
	}
	var it vaults.SecretItem
	if err := s.DB.Get(t.Context(), store.ResourceKey(a.AccountID, id), &it); err != nil {
		t.Fatal(err)
	}
	pt, err := s.Deps.Kit.Seal.Open(t.Context(), it.Value, vaults.SealAAD(a.AccountID, id))
	if err != nil || string(pt) != v2 {
		t.Fatalf("sealed value opens to %q (%v), want the updated value", pt, err)
	}
	if _, err := s.Deps.Kit.Seal.Open(t.Context(), it.Value, vaults.SealAAD(a.AccountID, ids.New(ids.Secret))); err == nil {
		t.Fatal("the sealed value opens for another secret's id")
	}
}

// created_by and last_updated_by are the caller's principal: a string on a vault, a reference
// on a secret.
func TestCreatedBy(t *testing.T) {
	a := suite.App(t).NewAccount(t)
	v := a.Do(t, "POST", "/vaults", map[string]any{"name": name("by")}).Expect(t, http.StatusCreated)
	if v["created_by"] != a.UserID || v["last_updated_by"] != a.UserID || v["updated_at"] != v["created_at"] {
		t.Fatalf("vault: %v", v)
	}
	sec := newSecret(t, a, v["id"].(string))
	for _, k := range []string{"created_by", "last_updated_by"} {
		ref, _ := sec[k].(map[string]any)
		if ref["id"] != a.UserID || !strings.HasSuffix(ref["uri"].(string), "/users/"+a.UserID) {
			t.Fatalf("secret %s: %v", k, sec[k])
		}
	}
}

// Vault names are unique in an account and secret names in a vault, whatever the races; the
// same names are free in another account or vault.
func TestNamesAreUnique(t *testing.T) {
	s := suite.App(t)
	a, b := s.NewAccount(t), s.NewAccount(t)
	n := name("shared")
	statuses := a.Race(t, 8, "POST", "/vaults", map[string]any{"name": n})
	if statuses[http.StatusCreated] != 1 || statuses[http.StatusBadRequest] != 7 {
		t.Fatalf("8 racing creates of one vault name: %v", statuses)
	}
	a.Do(t, "POST", "/vaults", map[string]any{"name": n}).ExpectError(t, http.StatusBadRequest, vaults.CodeVaultNameTaken, "name")
	b.Do(t, "POST", "/vaults", map[string]any{"name": n}).Expect(t, http.StatusCreated)

	v1, _ := newVault(t, a)
	v2, _ := newVault(t, a)
	body := map[string]any{"name": "token", "value": value(t), "vault_id": v1}
	statuses = a.Race(t, 8, "POST", "/vault_secrets", body)
	if statuses[http.StatusCreated] != 1 || statuses[http.StatusBadRequest] != 7 {
		t.Fatalf("8 racing creates of one secret name: %v", statuses)
	}
	a.Do(t, "POST", "/vault_secrets", body).ExpectError(t, http.StatusBadRequest, vaults.CodeSecretNameTaken, "name")
	a.Do(t, "POST", "/vault_secrets", map[string]any{"name": "token", "value": value(t), "vault_id": v2}).Expect(t, http.StatusCreated)

	// Renames keep them unique, and free the old name.
	other := a.Do(t, "POST", "/vault_secrets", map[string]any{"name": "other", "value": value(t), "vault_id": v1}).Expect(t, http.StatusCreated)["id"].(string)
	a.Do(t, "PATCH", "/vault_secrets/"+other, map[string]any{"name": "token"}).ExpectError(t, http.StatusBadRequest, vaults.CodeSecretNameTaken, "name")
	a.Do(t, "PATCH", "/vault_secrets/"+other, map[string]any{"name": "renamed"}).Expect(t, http.StatusOK)
	a.Do(t, "POST", "/vault_secrets", map[string]any{"name": "other", "value": value(t), "vault_id": v1}).Expect(t, http.StatusCreated)
	a.Do(t, "PATCH", "/vaults/"+v2, map[string]any{"name": n}).ExpectError(t, http.StatusBadRequest, vaults.CodeVaultNameTaken, "name")
}

// A vault is deleted only empty (23003), decided in the delete's transaction: racing secret
// creates either land in the vault (and the delete is refused) or find it gone (24006), never a
// secret in a deleted vault.
func TestDeleteNeedsEmptyVault(t *testing.T) {
	a := suite.App(t).NewAccount(t)
	vault, _ := newVault(t, a)
	sec := newSecret(t, a, vault)["id"].(string)
	a.Do(t, "DELETE", "/vaults/"+vault, nil).ExpectError(t, http.StatusBadRequest, vaults.CodeVaultNotEmpty, "id")
	a.Do(t, "DELETE", "/vault_secrets/"+sec, nil).Expect(t, http.StatusNoContent)
	a.Do(t, "DELETE", "/vaults/"+vault, nil).Expect(t, http.StatusNoContent)

	for round := range 3 {
		vault, _ := newVault(t, a)
		responses := testkit.AtOnce(9, func(i int) *testkit.Response {
			if i == 4 {
				return a.Do(t, "DELETE", "/vaults/"+vault, nil)
			}
			return a.Do(t, "POST", "/vault_secrets", map[string]any{"name": fmt.Sprintf("s%d", i), "value": value(t), "vault_id": vault})
		})
		created := 0
		for i, res := range responses {
			switch {
			case i == 4:
			case res.Status == http.StatusCreated:
				created++
			case res.Status != http.StatusBadRequest:
				t.Fatalf("round %d: create %d: %d %s", round, i, res.Status, res.Body)
			}
		}
		deleted := responses[4].Status == http.StatusNoContent
		if deleted != (created == 0) {
			t.Fatalf("round %d: vault delete %d %s with %d secrets created", round, responses[4].Status, responses[4].Body, created)
		}
		listed, _ := a.WalkPages(t, "/vault_secrets", "secrets")
		in := 0
		for _, id := range listed {
			if got := a.Do(t, "GET", "/vault_secrets/"+id, nil).Expect(t, http.StatusOK); got["vault"].(map[string]any)["id"] == vault {
				in++
			}
		}
		if in != created {
			t.Fatalf("round %d: %d secrets created, %d in the vault", round, created, in)
		}
	}
}

// A secret names its vault by id or by name; a vault rename shows in its secrets.
func TestVaultByNameAndRename(t *testing.T) {
	a := suite.App(t).NewAccount(t)
	vault, vaultName := newVault(t, a)
	sec := a.Do(t, "POST", "/vault_secrets", map[string]any{"name": "k", "value": value(t), "vault_name": vaultName}).Expect(t, http.StatusCreated)
	if sec["vault"].(map[string]any)["id"] != vault || sec["vault_name"] != vaultName {
		t.Fatalf("secret made by vault name: %v", sec)
	}
	a.Do(t, "POST", "/vault_secrets", map[string]any{"name": "k2", "value": value(t), "vault_name": "no-such-vault"}).ExpectError(t, http.StatusBadRequest, vaults.CodeVaultNameNotFound, "vault_name")
	other, _ := newVault(t, a)
	a.Do(t, "POST", "/vault_secrets", map[string]any{"name": "k2", "value": value(t), "vault_name": vaultName, "vault_id": other}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_215", "vault_name")
	renamed := name("renamed")
	got := a.Do(t, "PATCH", "/vaults/"+vault, map[string]any{"name": renamed}).Expect(t, http.StatusOK)
	if got["name"] != renamed {
		t.Fatalf("rename: %v", got)
	}
	if got := a.Do(t, "GET", "/vault_secrets/"+sec["id"].(string), nil).Expect(t, http.StatusOK); got["vault_name"] != renamed {
		t.Fatalf("secret's vault_name after the rename: %v", got["vault_name"])
	}
	// The old name is free, the new one is the vault's, and secrets made by name find it.
	a.Do(t, "POST", "/vault_secrets", map[string]any{"name": "k3", "value": value(t), "vault_name": vaultName}).ExpectError(t, http.StatusBadRequest, vaults.CodeVaultNameNotFound, "vault_name")
	a.Do(t, "POST", "/vault_secrets", map[string]any{"name": "k3", "value": value(t), "vault_name": renamed}).Expect(t, http.StatusCreated)
	a.Do(t, "POST", "/vaults", map[string]any{"name": vaultName}).Expect(t, http.StatusCreated)
}

// /vaults/{id}/secrets lists one vault's secrets, newest first, in pages; other vaults' and
// other accounts' secrets never show.
func TestListSecretsOfVault(t *testing.T) {
	s := suite.App(t)
	a, b := s.NewAccount(t), s.NewAccount(t)
	vault, _ := newVault(t, a)
	other, _ := newVault(t, a)
	var want []string
	for range 5 {
		want = append(want, newSecret(t, a, vault)["id"].(string))
	}
	slices.Sort(want)
	slices.Reverse(want) // lists are in descending id order
	newSecret(t, a, other)
	got, pages := a.WalkPages(t, "/vaults/"+vault+"/secrets?limit=2", "secrets")
	if strings.Join(got, ",") != strings.Join(want, ",") || pages != 3 {
		t.Fatalf("listed %v in %d pages, want %v in 3", got, pages, want)
	}
	page := a.Do(t, "GET", "/vaults/"+vault+"/secrets", nil).Expect(t, http.StatusOK)
	if page["uri"] != s.Server.URL+"/vaults/"+vault+"/secrets" || page["next_page_uri"] != nil {
		t.Fatalf("page envelope: %v", page)
	}
	b.Do(t, "GET", "/vaults/"+vault+"/secrets", nil).ExpectError(t, http.StatusNotFound, "", "")
	a.Do(t, "GET", "/vaults/"+ids.New(ids.Vault)+"/secrets", nil).ExpectError(t, http.StatusNotFound, "", "")
	a.Do(t, "GET", "/vaults/"+vault+"/secrets?before_id="+vault, nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_223", "before_id")
	a.Do(t, "GET", "/vaults/"+vault+"/secrets?limit=0", nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_233", "limit")
	b.Do(t, "POST", "/vault_secrets", map[string]any{"name": "x", "value": value(t), "vault_id": vault}).ExpectError(t, http.StatusBadRequest, vaults.CodeVaultNotFound, "vault_id")
}

// Bad input is refused naming the field, and stores nothing.
func TestBadInputChangesNothing(t *testing.T) {
	a := suite.App(t).NewAccount(t)
	vault, vaultName := newVault(t, a)
	sec := newSecret(t, a, vault)["id"].(string)
	before := a.Snapshot(t, "vault_name")
	long := strings.Repeat("n", vaults.MaxNameBytes+1)
	for _, c := range []struct {
		method, path string
		body         map[string]any
		code, field  string
	}{
		{"POST", "/vaults", map[string]any{}, vaults.CodeVaultNameEmpty, "name"},
		{"POST", "/vaults", map[string]any{"name": ""}, vaults.CodeVaultNameEmpty, "name"},
		{"POST", "/vaults", map[string]any{"name": "has space"}, vaults.CodeVaultNameInvalid, "name"},
		{"POST", "/vaults", map[string]any{"name": long}, vaults.CodeVaultNameTooLong, "name"},
		{"POST", "/vaults", map[string]any{"name": vaultName}, vaults.CodeVaultNameTaken, "name"},
		{"POST", "/vaults", map[string]any{"name": "ok", "description": strings.Repeat("d", 256)}, "ERR_NGROK_215", "description"},
		{"POST", "/vaults", map[string]any{"name": "ok", "value": "x"}, "ERR_NGROK_214", "value"},
		{"PATCH", "/vaults/" + vault, map[string]any{"name": "bad*name"}, vaults.CodeVaultNameInvalid, "name"},
		{"PATCH", "/vaults/" + vault, map[string]any{}, "ERR_NGROK_606", ""},
		{"POST", "/vault_secrets", map[string]any{"value": "v", "vault_id": vault}, vaults.CodeSecretNameEmpty, "name"},
		{"POST", "/vault_secrets", map[string]any{"name": "a b", "value": "v", "vault_id": vault}, vaults.CodeSecretNameInvalid, "name"},
		{"POST", "/vault_secrets", map[string]any{"name": long, "value": "v", "vault_id": vault}, vaults.CodeSecretNameTooLong, "name"},
		{"POST", "/vault_secrets", map[string]any{"name": "n", "vault_id": vault}, vaults.CodeSecretValueEmpty, "value"},
		{"POST", "/vault_secrets", map[string]any{"name": "n", "value": "", "vault_id": vault}, vaults.CodeSecretValueEmpty, "value"},
		{"POST", "/vault_secrets", map[string]any{"name": "n", "value": strings.Repeat("v", vaults.MaxValueBytes+1), "vault_id": vault}, vaults.CodeSecretValueLong, "value"},
		{"POST", "/vault_secrets", map[string]any{"name": "n", "value": "v"}, vaults.CodeVaultRequired, "vault_id"},
		{"POST", "/vault_secrets", map[string]any{"name": "n", "value": "v", "vault_id": "ipp_x"}, vaults.CodeVaultNotFound, "vault_id"},
		{"POST", "/vault_secrets", map[string]any{"name": "n", "value": "v", "vault_id": ids.New(ids.Vault)}, vaults.CodeVaultNotFound, "vault_id"},
		{"POST", "/vault_secrets", map[string]any{"name": "n", "value": 7, "vault_id": vault}, "ERR_NGROK_215", "value"},
		{"PATCH", "/vault_secrets/" + sec, map[string]any{"value": ""}, vaults.CodeSecretValueEmpty, "value"},
		{"PATCH", "/vault_secrets/" + sec, map[string]any{"vault_id": vault}, "ERR_NGROK_214", "vault_id"},
		{"PATCH", "/vault_secrets/" + sec, map[string]any{"name": "x!"}, vaults.CodeSecretNameInvalid, "name"},
	} {
		a.Do(t, c.method, c.path, c.body).ExpectError(t, http.StatusBadRequest, c.code, c.field)
	}
	a.Unchanged(t, before, "a refused request")
}
