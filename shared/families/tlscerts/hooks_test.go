package tlscerts

import (
	"strings"
	"testing"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/testing/hooktest"
)

// TestTLSCertificateRender renders an item without a table: absolute URI, empty lists as [],
// members in wire order, and no private key material.
func TestTLSCertificateRender(t *testing.T) {
	f := TLSCertificates{Family: &resource.Family[TLSCertificateItem, *TLSCertificateItem]{Descriptor: TLSCertificatesDescriptor}}
	it := &TLSCertificateItem{CertificatePEM: "PEM", PrivateKeyType: "ecdsa", PrivateKey: seal.Sealed{Ciphertext: []byte("sealed")},
		Details: Details{SubjectCommonName: "a.example.com", NotBefore: 0, NotAfter: 86400, DNSNames: []string{"a.example.com"}}}
	it.ID, it.CreatedAt, it.Description = "cert_1", 60, "d"
	want := `{"id":"cert_1","uri":"https://api.example.com/tls_certificates/cert_1","created_at":"1970-01-01T00:01:00Z",` +
		`"description":"d","certificate_pem":"PEM","subject_common_name":"a.example.com",` +
		`"subject_alternative_names":{"dns_names":["a.example.com"],"ips":[]},"issued_at":null,` +
		`"not_before":"1970-01-01T00:00:00Z","not_after":"1970-01-02T00:00:00Z","key_usages":[],"extended_key_usages":[],` +
		`"private_key_type":"ecdsa","issuer_common_name":"","serial_number":"","subject_organization":"",` +
		`"subject_organizational_unit":"","subject_locality":"","subject_province":"","subject_country":""}`
	hooktest.WantJSON(t, f.Render(hooktest.Request(""), it), want)
}

// TestTLSHooksRefuse checks the validation of Prepare and Update without a table, key or sealer:
// each bad body gets its code and field.
func TestTLSHooksRefuse(t *testing.T) {
	certs := TLSCertificates{Family: &resource.Family[TLSCertificateItem, *TLSCertificateItem]{Descriptor: TLSCertificatesDescriptor}}
	cas := CertificateAuthorities{Family: &resource.Family[CertificateAuthorityItem, *CertificateAuthorityItem]{Descriptor: CertificateAuthoritiesDescriptor}}
	long := `"` + strings.Repeat("x", api.MaxDescriptionBytes+1) + `"`
	hooktest.Refusals(t, []hooktest.Refusal{
		hooktest.Case("certificate without pem", CodeBadCertPEM, fieldCertificatePEM, func() error {
			return certs.Prepare(t.Context(), hooktest.Request(`{"private_key_pem":"k"}`), &TLSCertificateItem{})
		}),
		hooktest.Case("certificate without key", CodeBadKeyPEM, fieldPrivateKeyPEM, func() error {
			return certs.Prepare(t.Context(), hooktest.Request(`{"certificate_pem":"c"}`), &TLSCertificateItem{})
		}),
		hooktest.Case("certificate description too long", "ERR_NGROK_1914", "description", func() error {
			return certs.Prepare(t.Context(), hooktest.Request(`{"description":`+long+`}`), &TLSCertificateItem{})
		}),
		hooktest.Case("certificate empty update", api.CodeEmptyUpdate, "body", func() error {
			return certs.Update(t.Context(), hooktest.Request(`{}`), &TLSCertificateItem{}, nil)
		}),
		hooktest.Case("authority without pem", CodeCANotCert, fieldCAPEM, func() error {
			return cas.Prepare(t.Context(), hooktest.Request(`{"description":"d"}`), &CertificateAuthorityItem{})
		}),
		hooktest.Case("authority not a certificate", CodeCANotCert, fieldCAPEM, func() error {
			return cas.Prepare(t.Context(), hooktest.Request(`{"ca_pem":"not pem"}`), &CertificateAuthorityItem{})
		}),
		hooktest.Case("authority description too long", "ERR_NGROK_1916", "description", func() error {
			return cas.Update(t.Context(), hooktest.Request(`{"description":`+long+`}`), &CertificateAuthorityItem{}, nil)
		}),
	})
}

// TestCertificateAuthorityRender renders a CA without a table: members in wire order, empty
// lists as [].
func TestCertificateAuthorityRender(t *testing.T) {
	f := CertificateAuthorities{Family: &resource.Family[CertificateAuthorityItem, *CertificateAuthorityItem]{Descriptor: CertificateAuthoritiesDescriptor}}
	it := &CertificateAuthorityItem{CAPEM: "PEM", Details: Details{SubjectCommonName: "ca", NotBefore: 0, NotAfter: 86400, KeyUsages: []string{"cert_sign"}}}
	it.ID, it.CreatedAt, it.Metadata = "ca_1", 60, "m"
	hooktest.WantJSON(t, f.Render(hooktest.Request(""), it),
		`{"id":"ca_1","uri":"https://api.example.com/certificate_authorities/ca_1","created_at":"1970-01-01T00:01:00Z",`+
			`"metadata":"m","ca_pem":"PEM","subject_common_name":"ca","not_before":"1970-01-01T00:00:00Z",`+
			`"not_after":"1970-01-02T00:00:00Z","key_usages":["cert_sign"],"extended_key_usages":[]}`)
}
