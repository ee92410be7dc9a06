package tlscerts

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/seal"
)

// hookRequest is a request carrying body, on a host that is not a loopback address.
func hookRequest(body string) *api.Request {
	return &api.Request{HTTP: httptest.NewRequest("POST", "https://api.example.com/", nil), Body: []byte(body)}
}

// TestTLSCertificateRender renders an item without a table: absolute URI, empty lists as [],
// members in wire order, and no private key material.
func TestTLSCertificateRender(t *testing.T) {
	f := TLSCertificates{&resource.Family[TLSCertificate, *TLSCertificate]{Descriptor: TLSCertificatesDescriptor}}
	it := &TLSCertificate{CertificatePEM: "PEM", PrivateKeyType: "ecdsa", PrivateKey: seal.Sealed{Ciphertext: []byte("sealed")},
		Details: Details{SubjectCommonName: "a.example.com", NotBefore: 0, NotAfter: 86400, DNSNames: []string{"a.example.com"}}}
	it.ID, it.CreatedAt, it.Description = "cert_1", 60, "d"
	got, err := json.Marshal(f.Render(hookRequest(""), it))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"cert_1","uri":"https://api.example.com/tls_certificates/cert_1","created_at":"1970-01-01T00:01:00Z",` +
		`"description":"d","certificate_pem":"PEM","subject_common_name":"a.example.com",` +
		`"subject_alternative_names":{"dns_names":["a.example.com"],"ips":[]},"issued_at":null,` +
		`"not_before":"1970-01-01T00:00:00Z","not_after":"1970-01-02T00:00:00Z","key_usages":[],"extended_key_usages":[],` +
		`"private_key_type":"ecdsa","issuer_common_name":"","serial_number":"","subject_organization":"",` +
		`"subject_organizational_unit":"","subject_locality":"","subject_province":"","subject_country":""}`
	if string(got) != want {
		t.Fatalf("render\n got %s\nwant %s", got, want)
	}
}

// TestTLSHooksRefuse checks the validation of Prepare and Update without a table, key or sealer:
// each bad body gets its code and field.
func TestTLSHooksRefuse(t *testing.T) {
	certs := TLSCertificates{&resource.Family[TLSCertificate, *TLSCertificate]{Descriptor: TLSCertificatesDescriptor}}
	cas := CertificateAuthorities{&resource.Family[CertificateAuthority, *CertificateAuthority]{Descriptor: CertificateAuthoritiesDescriptor}}
	long := `"` + strings.Repeat("x", api.MaxDescriptionBytes+1) + `"`
	for _, c := range []struct {
		name, code, field string
		run               func() error
	}{
		{"certificate without pem", CodeBadCertPEM, fieldCertificatePEM, func() error {
			return certs.Prepare(t.Context(), hookRequest(`{"private_key_pem":"k"}`), &TLSCertificate{})
		}},
		{"certificate without key", CodeBadKeyPEM, fieldPrivateKeyPEM, func() error {
			return certs.Prepare(t.Context(), hookRequest(`{"certificate_pem":"c"}`), &TLSCertificate{})
		}},
		{"certificate description too long", "ERR_NGROK_1914", "description", func() error {
			return certs.Prepare(t.Context(), hookRequest(`{"description":`+long+`}`), &TLSCertificate{})
		}},
		{"certificate empty update", api.CodeEmptyUpdate, "body", func() error {
			return certs.Update(t.Context(), hookRequest(`{}`), &TLSCertificate{}, nil)
		}},
		{"authority without pem", CodeCANotCert, fieldCAPEM, func() error {
			return cas.Prepare(t.Context(), hookRequest(`{"description":"d"}`), &CertificateAuthority{})
		}},
		{"authority not a certificate", CodeCANotCert, fieldCAPEM, func() error {
			return cas.Prepare(t.Context(), hookRequest(`{"ca_pem":"not pem"}`), &CertificateAuthority{})
		}},
		{"authority description too long", "ERR_NGROK_1916", "description", func() error {
			return cas.Update(t.Context(), hookRequest(`{"description":`+long+`}`), &CertificateAuthority{}, nil)
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
