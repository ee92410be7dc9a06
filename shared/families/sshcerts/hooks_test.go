package sshcerts

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/resource"
)

// certificateHooks returns the rules of the certificate family of kind kd, without a kit.
func certificateHooks(d *resource.Descriptor, kd kind) Certificates {
	return Certificates{Family: &resource.Family[Certificate, *Certificate]{Descriptor: d}, kind: kd, signers: &signerCache{}}
}

// TestCertificateRender renders one item as each kind without a table: the user form has
// options and extensions ({} when absent), the host form has neither; nil principals are [].
func TestCertificateRender(t *testing.T) {
	r := &api.Request{HTTP: httptest.NewRequest("GET", "https://api.example.com/", nil)}
	it := &Certificate{AuthorityID: "sshca_1", PublicKey: "ssh-ed25519 AAAA", KeyType: "ed25519", ValidUntil: 60, Certificate: "cert"}
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
		got, err := json.Marshal(c.hooks.Render(r, it))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("render\n got %s\nwant %s", got, c.want)
		}
	}
}

// TestSSHHooksRefuse checks hooks that refuse without a table, key or sealer: a certificate
// create is validated before the CA is read, and a CA with certificates is not deleted.
func TestSSHHooksRefuse(t *testing.T) {
	host := certificateHooks(SSHHostCertificatesDescriptor, hostKind)
	user := certificateHooks(SSHUserCertificatesDescriptor, userKind)
	cas := Authorities{&resource.Family[Authority, *Authority]{Descriptor: SSHCertificateAuthoritiesDescriptor}}
	req := func(body string) *api.Request {
		return &api.Request{HTTP: httptest.NewRequest("POST", "https://api.example.com/", nil), Body: []byte(body)}
	}
	for _, c := range []struct {
		name, code, field string
		run               func() error
	}{
		{"certificate without CA", CodeCANotFound, "ssh_certificate_authority_id", func() error {
			return user.Prepare(t.Context(), req(`{"public_key":"x"}`), &Certificate{})
		}},
		{"certificate without key", CodePublicKeyMissing, "public_key", func() error {
			return user.Prepare(t.Context(), req(`{"ssh_certificate_authority_id":"sshca_1"}`), &Certificate{})
		}},
		{"host certificate with user-only member", api.CodeUnknownField, "extensions", func() error {
			return host.Prepare(t.Context(), req(`{"extensions":{}}`), &Certificate{})
		}},
		{"certificate empty update", api.CodeEmptyUpdate, "body", func() error {
			return host.Update(t.Context(), req(`{}`), &Certificate{}, nil)
		}},
		{"authority with a bad key type", CodeInvalidKeyType, "private_key_type", func() error {
			return cas.Prepare(t.Context(), req(`{"private_key_type":"dsa"}`), &Authority{})
		}},
		{"authority with certificates", CodeCAHasCerts, "id", func() error {
			return cas.Delete(t.Context(), req(""), &Authority{Certificates: 2}, nil)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var e *api.Error
			if err := c.run(); !errors.As(err, &e) || e.Code != c.code || e.Field != c.field {
				t.Fatalf("got %v, want %s on %s", err, c.code, c.field)
			}
		})
	}
}
