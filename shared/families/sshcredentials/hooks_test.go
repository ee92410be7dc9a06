package sshcredentials

import (
	"testing"

	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/hooktest"
)

func TestSSHCredentialRenderAndRefusals(t *testing.T) {
	f := resource.HooksOf[SSHCredentials](SSHCredentialsDescriptor, nil)
	it := &SSHCredentialItem{Meta: store.Meta{ID: "sshcr_1"}, OwnerID: "service_1", PublicKey: "ssh-ed25519 AAAA k\n",
		BindRules: principals.BindRules{ACL: []string{"bind:1.tcp.example.com:20002"}}}
	hooktest.WantJSON(t, f.Render(hooktest.Request(""), it),
		`{"id":"sshcr_1","uri":"https://api.example.com/ssh_credentials/sshcr_1","created_at":"1970-01-01T00:00:00Z","public_key":"ssh-ed25519 AAAA k\n","acl":["bind:1.tcp.example.com:20002"],"owner_id":"service_1"}`)
	// Refusals come before anything is added to the mutation, so none is needed here.
	for body, code := range map[string]string{
		`{}`:                                     CodeSSHKeyMissing,
		`{"public_key":""}`:                      CodeSSHKeyMissing,
		`{"public_key":"ssh-ed25519 AAAA"}`:      CodeSSHKeyInvalid,
		`{"public_key":"ecdsa-sha2-nistp256 x"}`: CodeSSHKeyInvalid,
	} {
		_, err := f.Create(t.Context(), hooktest.Request(body), &SSHCredentialItem{}, nil)
		hooktest.WantCode(t, err, code, "public_key")
	}
	hooktest.WantCode(t, f.Update(t.Context(), hooktest.Request(`{"acl":["bind:x:0"]}`), it, nil), principals.CodeInvalidACL, "acl")
	hooktest.WantCode(t, f.Update(t.Context(), hooktest.Request(`{}`), it, nil), api.CodeEmptyUpdate, "body")
	if len(it.ACL) != 1 {
		t.Fatalf("refused update changed the acl: %v", it.ACL)
	}
}
