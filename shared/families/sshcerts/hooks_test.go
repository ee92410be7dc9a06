package sshcerts

import (
	"strings"
	"testing"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/testing/hooktest"
)

// certificateHooks returns the rules of the certificate family of kind kd, without a kit.
func certificateHooks(d *resource.Descriptor, kd kind) Certificates {
	return Certificates{Family: &resource.Family[CertificateItem, *CertificateItem]{Descriptor: d}, kind: kd, signers: &signerCache{}}
}

// TestCertificateRender renders one item as each kind without a table: the user form has
// options and extensions ({} when absent), the host form has neither; nil principals are [].
func TestCertificateRender(t *testing.T) {
	it := &CertificateItem{AuthorityID: "sshca_1", PublicKey: "ssh-ed25519 AAAA", KeyType: "ed25519", ValidUntil: 60, Certificate: "cert"}
	it.ID, it.Metadata = "c_1", "m"
	common := `"created_at":"1970-01-01T00:00:00Z","metadata":"m","public_key":"ssh-ed25519 AAAA",` +
		`"key_type":"ed25519","ssh_certificate_authority_id":"sshca_1","principals":[],`
	validity := `"valid_after":"1970-01-01T00:00:00Z","valid_until":"1970-01-01T00:01:00Z","certificate":"cert"}`
	for _, c := range []struct {
		hooks Certificates
		want  string
	}{
		{certificateHooks(SSHUserCertificatesDescriptor, userKind),
			`{"id":"c_1","uri":"https://api.example.com/ssh_user_certificates/c_1",` + common + strings.TrimSuffix(validity, "}") +
				`,"critical_options":{},"extensions":{}}`},
		{certificateHooks(SSHHostCertificatesDescriptor, hostKind),
			`{"id":"c_1","uri":"https://api.example.com/ssh_host_certificates/c_1",` + common + validity},
	} {
		hooktest.WantJSON(t, c.hooks.Render(hooktest.Request(""), it), c.want)
	}
}

// TestSSHHooksRefuse checks hooks that refuse without a table, key or sealer: a certificate
// create is validated before the CA is read, and a CA with certificates is not deleted.
func TestSSHHooksRefuse(t *testing.T) {
	host := certificateHooks(SSHHostCertificatesDescriptor, hostKind)
	user := certificateHooks(SSHUserCertificatesDescriptor, userKind)
	cas := Authorities{Family: &resource.Family[AuthorityItem, *AuthorityItem]{Descriptor: SSHCertificateAuthoritiesDescriptor}}
	hooktest.Refusals(t, []hooktest.Refusal{
		hooktest.Case("certificate without CA", CodeCANotFound, "ssh_certificate_authority_id", func() error {
			return user.Prepare(t.Context(), hooktest.Request(`{"public_key":"x"}`), &CertificateItem{})
		}),
		hooktest.Case("certificate without key", CodePublicKeyMissing, "public_key", func() error {
			return user.Prepare(t.Context(), hooktest.Request(`{"ssh_certificate_authority_id":"sshca_1"}`), &CertificateItem{})
		}),
		hooktest.Case("host certificate with user-only member", api.CodeUnknownField, "extensions", func() error {
			return host.Prepare(t.Context(), hooktest.Request(`{"extensions":{}}`), &CertificateItem{})
		}),
		hooktest.Case("certificate empty update", api.CodeEmptyUpdate, "body", func() error {
			return host.Update(t.Context(), hooktest.Request(`{}`), &CertificateItem{}, nil)
		}),
		hooktest.Case("authority with a bad key type", CodeInvalidKeyType, "private_key_type", func() error {
			return cas.Prepare(t.Context(), hooktest.Request(`{"private_key_type":"dsa"}`), &AuthorityItem{})
		}),
		hooktest.Case("authority with certificates", CodeCAHasCerts, "id", func() error {
			return cas.Delete(t.Context(), hooktest.Request(""), &AuthorityItem{Certificates: 2}, nil)
		}),
	})
}

// TestAuthorityRender renders a CA without a table: members in wire order, no private key.
func TestAuthorityRender(t *testing.T) {
	f := Authorities{Family: &resource.Family[AuthorityItem, *AuthorityItem]{Descriptor: SSHCertificateAuthoritiesDescriptor}}
	it := &AuthorityItem{PublicKey: "ssh-ed25519 AAAA", KeyType: "ed25519", PrivateKey: seal.Sealed{Ciphertext: []byte("sealed")}, Certificates: 3}
	it.ID, it.CreatedAt, it.Description, it.Metadata = "sshca_1", 60, "d", "m"
	hooktest.WantJSON(t, f.Render(hooktest.Request(""), it),
		`{"id":"sshca_1","uri":"https://api.example.com/ssh_certificate_authorities/sshca_1","created_at":"1970-01-01T00:01:00Z",`+
			`"description":"d","metadata":"m","public_key":"ssh-ed25519 AAAA","key_type":"ed25519"}`)
}
