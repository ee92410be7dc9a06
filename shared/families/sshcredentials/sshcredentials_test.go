package sshcredentials_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/families/sshcredentials"
	"tunnelapi/shared/testing/testkit"
)

func TestSSHCredentialsConformance(t *testing.T) {
	s := testkit.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: sshcredentials.SSHCredentialsDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			return map[string]any{"description": "deploy", "public_key": testkit.SSHPublicKey(),
				"acl": []string{"bind:*.example.com", "bind:1.tcp.example.com:20002"}}
		},
		Update:      map[string]any{"acl": []string{"bind:env=prod"}, "metadata": "m"},
		UpdateWants: map[string]any{"acl": []any{"bind:env=prod"}, "metadata": "m", "description": "deploy"},
	})
}

// authorizedKey is pub in authorized-keys form.
func authorizedKey(t *testing.T, pub any) string {
	t.Helper()
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp)))
}

// Keys made by OpenSSH's ssh-keygen and by x/crypto of every accepted type and size are taken
// and returned exactly as sent (the trailing newline of a .pub file included, so a tool that
// compares what it sent sees no change); every other key, and anything that is not one key, is
// 612 naming public_key; none is 611; none of the refusals stores anything.
func TestSSHCredentialKeys(t *testing.T) {
	_, a := testkit.AppAccount(t)
	ecKey, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	smallRSA, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	accepted := map[string]string{
		"ssh-keygen ed25519":   testkit.SSHKeygen(t, "-t", "ed25519"),
		"ssh-keygen rsa 2048":  testkit.SSHKeygen(t, "-t", "rsa", "-b", "2048"),
		"ssh-keygen rsa 3072":  testkit.SSHKeygen(t, "-t", "rsa", "-b", "3072"),
		"ssh-keygen ecdsa 256": testkit.SSHKeygen(t, "-t", "ecdsa", "-b", "256"),
		"ssh-keygen ecdsa 521": testkit.SSHKeygen(t, "-t", "ecdsa", "-b", "521"),
		"x/crypto ecdsa 384":   authorizedKey(t, &ecKey.PublicKey),
		"x/crypto ed25519":     testkit.SSHPublicKey(),
	}
	for name, key := range accepted {
		t.Run(name, func(t *testing.T) {
			got := a.Do(t, "POST", "/ssh_credentials", map[string]any{"public_key": key}).Expect(t, http.StatusCreated)
			if got["public_key"] != key {
				t.Fatalf("public_key %q, sent %q", got["public_key"], key)
			}
			if got["owner_id"] != a.UserID {
				t.Fatalf("owner_id %v, want the caller %s", got["owner_id"], a.UserID)
			}
			if acl, ok := got["acl"].([]any); !ok || len(acl) != 0 {
				t.Fatalf("acl %v, want []", got["acl"])
			}
		})
	}
	before := a.Snapshot(t, "ssh_public_key")
	ed := testkit.SSHPublicKey()
	refused := []struct {
		name string
		key  any
		code string
	}{
		{"rsa 1024", authorizedKey(t, &smallRSA.PublicKey), sshcredentials.CodeSSHKeyInvalid},
		{"ssh-keygen rsa 1024", testkit.SSHKeygen(t, "-t", "rsa", "-b", "1024"), sshcredentials.CodeSSHKeyInvalid},
		{"dsa", "ssh-dss AAAAB3NzaC1kc3MAAACBAP1/U4EddRIpUt9KnC7s5Of2EbdSPO9EAMMeP4C2USZpRV1AIlH7WT2NWPq/xfW6MPbLm1Vs14E7gB00b/JmYLdrmVClpJ+f6AR7ECLCT7up1/63xhv4O1fnxqimFQ8E+4P208UewwI1VBNaFpEy9nXzrith1yrv8iIDGZ3RSAHHAAAAFQCXYFCPFSMLzLKSuYKi64QL8Fgc9QAAAIEA9+GghdabPd7LvKtcNrhXuXmUr7v6OuqC+VdMCz0HgmdRWVeOutRZT+ZxBxCBgLRJFnEj6EwoFhO3zwkyjMim4TwWeotUfI0o4KOuHiuzpnWRbqN/C/ohNWLx+2J6ASQ7zKTxvqhRkImog9/hWuWfBpKLZl6Ae1UlZAFMO/7PSSoAAACBAIIzL2t6v0xHEgQwnmMQGk3E/EXNRqKwnvC9kYN6wGlwURpGaVFY0ifEsfQxGhS3zkt7P5ms3bwvDVUR0lS3g0txKx3Tta/4EpwW+IRtrZg6PEaHb0/Gu5Dv4Zc/0o/dxKI6UJt8J6Ypg4AxYiHKmKsT68C8c4m6xG3eDHm/f3HN", sshcredentials.CodeSSHKeyInvalid},
		{"certificate", "ssh-ed25519-cert-v01@openssh.com AAAAIHNzaC1lZDI1NTE5LWNlcnQtdjAxQG9wZW5zc2guY29t", sshcredentials.CodeSSHKeyInvalid},
		{"two keys", ed + "\n" + testkit.SSHPublicKey(), sshcredentials.CodeSSHKeyInvalid},
		{"not a key", "hello world", sshcredentials.CodeSSHKeyInvalid},
		{"pem", "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----", sshcredentials.CodeSSHKeyInvalid},
		{"too long", strings.Repeat("A", 20000), sshcredentials.CodeSSHKeyInvalid},
		{"empty", "", sshcredentials.CodeSSHKeyMissing},
		{"blank", "  \n", sshcredentials.CodeSSHKeyMissing},
		{"absent", nil, sshcredentials.CodeSSHKeyMissing},
	}
	for _, c := range refused {
		t.Run("refused "+c.name, func(t *testing.T) {
			body := map[string]any{"description": "refused"}
			if c.key != nil {
				body["public_key"] = c.key
			}
			a.Do(t, "POST", "/ssh_credentials", body).ExpectError(t, http.StatusBadRequest, c.code, "public_key")
		})
	}
	a.Do(t, "POST", "/ssh_credentials", map[string]any{"public_key": 7}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_215", "public_key")
	a.Unchanged(t, before, "refused creates")
	// The key of a refused create is still free.
	a.Do(t, "POST", "/ssh_credentials", map[string]any{"public_key": ed}).Expect(t, http.StatusCreated)
}

// A key already on the account is 609 and one on another account 610, decided by the create's
// transaction: of racing creates of one key exactly one commits, whether they come from one
// account or two. Deleting the credential frees its key.
func TestSSHCredentialKeyOnce(t *testing.T) {
	_, a, b := testkit.AppTwoAccounts(t)
	key := testkit.SSHPublicKey()
	first := a.Do(t, "POST", "/ssh_credentials", map[string]any{"public_key": key}).Expect(t, http.StatusCreated)
	// The same key with another comment, options or spacing is the same key.
	same := strings.Fields(key)[0] + "  " + strings.Fields(key)[1] + " other@comment"
	for _, k := range []string{key, same, `no-pty ` + key} {
		e := a.Do(t, "POST", "/ssh_credentials", map[string]any{"public_key": k}).ExpectError(t, http.StatusBadRequest, sshcredentials.CodeSSHKeyOnAccount, "public_key")
		if !strings.Contains(e["msg"].(string), first["id"].(string)) {
			t.Errorf("609 does not name the credential holding the key: %v", e["msg"])
		}
		b.Do(t, "POST", "/ssh_credentials", map[string]any{"public_key": k}).ExpectError(t, http.StatusBadRequest, sshcredentials.CodeSSHKeyOtherAccount, "public_key")
	}
	if items, _ := b.WalkPages(t, "/ssh_credentials", "ssh_credentials"); len(items) != 0 {
		t.Fatalf("account B holds %v after its refusals", items)
	}
	a.Do(t, "DELETE", "/ssh_credentials/"+first["id"].(string), nil).Expect(t, http.StatusNoContent)
	b.Do(t, "POST", "/ssh_credentials", map[string]any{"public_key": key}).Expect(t, http.StatusCreated)

	for round := range 3 {
		race := testkit.SSHPublicKey()
		responses := testkit.AtOnce(8, func(i int) *testkit.Response {
			return []*testkit.Account{a, b}[i%2].Do(t, "POST", "/ssh_credentials", map[string]any{"public_key": race})
		})
		created, refusals := 0, 0
		for _, res := range responses {
			switch res.Status {
			case http.StatusCreated:
				created++
			case http.StatusBadRequest:
				code := res.JSON(t)["error_code"]
				if code != sshcredentials.CodeSSHKeyOnAccount && code != sshcredentials.CodeSSHKeyOtherAccount {
					t.Fatalf("round %d: refused with %s", round, res.Body)
				}
				refusals++
			default:
				t.Fatalf("round %d: %d %s", round, res.Status, res.Body)
			}
		}
		if created != 1 || refusals != 7 {
			t.Fatalf("round %d: %d of 8 racing creates of one key committed, want 1", round, created)
		}
		filter := "/ssh_credentials?filter=" + url.QueryEscape(`obj.public_key == "`+race+`"`)
		n := 0
		for _, acct := range []*testkit.Account{a, b} {
			items, _ := acct.WalkPages(t, filter, "ssh_credentials")
			n += len(items)
		}
		if n != 1 {
			t.Fatalf("round %d: %d credentials hold the raced key", round, n)
		}
	}
}

// owner_id is as for tunnel credentials: the caller by default; a user, bot user or service
// user of the account when an admin names one; 630 for a non-admin naming another; 215 for an
// id of another account or of no principal. ACL rules are those of tunnel credentials
// (host:port addresses included), 600 otherwise; PATCH changes description, metadata and acl
// only, and a refused one changes nothing.
func TestSSHCredentialOwnerACLAndUpdates(t *testing.T) {
	s, a, b := testkit.AppTwoAccounts(t)
	bot := a.Do(t, "POST", "/bot_users", map[string]any{"name": "ci"}).Expect(t, http.StatusCreated)["id"].(string)
	svc := a.Do(t, "POST", "/service_users", map[string]any{"name": "deployer"}).Expect(t, http.StatusCreated)["id"].(string)
	for _, owner := range []string{a.UserID, bot, svc} {
		got := a.Do(t, "POST", "/ssh_credentials", map[string]any{"public_key": testkit.SSHPublicKey(), "owner_id": owner}).Expect(t, http.StatusCreated)
		if got["owner_id"] != owner {
			t.Fatalf("owner_id %v, want %s", got["owner_id"], owner)
		}
	}
	for _, owner := range []string{b.UserID, "cr_x", "sshcr_x", "service_x"} {
		a.Do(t, "POST", "/ssh_credentials", map[string]any{"public_key": testkit.SSHPublicKey(), "owner_id": owner}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_215", "owner_id")
	}
	// The service user's own key (not an admin) may not name another owner; its own default.
	tok := a.Do(t, "POST", "/api_keys", map[string]any{"owner_id": svc}).Expect(t, http.StatusCreated)["token"].(string)
	s.Do(t, "POST", "/ssh_credentials", tok, map[string]any{"public_key": testkit.SSHPublicKey(), "owner_id": a.UserID}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_630", "owner_id")
	if own := s.Do(t, "POST", "/ssh_credentials", tok, map[string]any{"public_key": testkit.SSHPublicKey()}).Expect(t, http.StatusCreated); own["owner_id"] != svc {
		t.Fatalf("a service user's credential is owned by %v", own["owner_id"])
	}

	acl := []string{"*", "bind:example.ngrok.io", "bind:*.example.com", "bind:1.tcp.ngrok.io:20002", "bind:env=prod", "bind:*=x"}
	cred := a.Do(t, "POST", "/ssh_credentials", map[string]any{"public_key": testkit.SSHPublicKey(), "acl": acl,
		"description": "orig", "metadata": "m"}).Expect(t, http.StatusCreated)
	p := "/ssh_credentials/" + cred["id"].(string)
	before := a.Snapshot(t, "ssh_public_key")
	for _, c := range []struct {
		name  string
		body  any
		code  string
		field string
	}{
		{"acl not bind", map[string]any{"acl": []string{"connect:x"}}, principals.CodeInvalidACL, "acl"},
		{"acl port zero", map[string]any{"acl": []string{"bind:1.tcp.ngrok.io:0"}}, principals.CodeInvalidACL, "acl"},
		{"acl space", map[string]any{"acl": []string{"bind:a b"}, "description": "x"}, principals.CodeInvalidACL, "acl"},
		{"description 256 bytes", map[string]any{"description": strings.Repeat("d", 256)}, "ERR_NGROK_604", "description"},
		{"metadata 4097 bytes", map[string]any{"metadata": strings.Repeat("m", 4097)}, "ERR_NGROK_605", "metadata"},
		{"public_key", map[string]any{"public_key": testkit.SSHPublicKey()}, "ERR_NGROK_214", "public_key"},
		{"owner_id", map[string]any{"owner_id": bot}, "ERR_NGROK_214", "owner_id"},
		{"empty", map[string]any{}, "ERR_NGROK_606", "body"},
		{"acl not a list", map[string]any{"acl": "bind:x.example.com"}, "ERR_NGROK_215", "acl"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a.Do(t, "PATCH", p, c.body).ExpectError(t, http.StatusBadRequest, c.code, c.field)
		})
	}
	a.Do(t, "POST", "/ssh_credentials", map[string]any{"public_key": testkit.SSHPublicKey(), "acl": []string{"bind:"}}).ExpectError(t, http.StatusBadRequest, principals.CodeInvalidACL, "acl")
	a.Unchanged(t, before, "refused updates and creates")
	upd := a.Do(t, "PATCH", p, map[string]any{"acl": []string{}, "description": ""}).Expect(t, http.StatusOK)
	if _, has := upd["description"]; has || len(upd["acl"].([]any)) != 0 || upd["metadata"] != "m" || upd["public_key"] != cred["public_key"] {
		t.Fatalf("PATCH acl [] and description \"\": %v", upd)
	}
	// Another account sees nothing of it.
	b.Do(t, "GET", p, nil).ExpectError(t, http.StatusNotFound, "", "")
	if items, _ := b.WalkPages(t, "/ssh_credentials", "ssh_credentials"); len(items) != 0 {
		t.Fatalf("account B lists %v", items)
	}
}
