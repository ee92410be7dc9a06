package httpmodules

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/testing/hooktest"
	"tunnelapi/shared/testing/samltest"
)

func samlBody(t testing.TB, md string, extra string) string {
	b, _ := json.Marshal(md)
	return `{"idp_metadata":` + string(b) + extra + `}`
}

func TestSAMLRealMetadataAndSPMetadataRoundTrip(t *testing.T) {
	md := samltest.IdPMetadata(t)
	s, err := decode[SAMLIn](t, samlBody(t, md, `,"force_authn":true,"allow_idp_initiated":true,"authorized_groups":["eng"],"nameid_format":"urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress","cookie_prefix":"sso.","inactivity_timeout":60,"maximum_duration":3600,"options_passthrough":true`)).Check("")
	if err != nil {
		t.Fatal(err)
	}
	const route = "edghtsrt_2jYw3C0Gj3xQ0x6b2DrB3fS1nKQ"
	if err := s.Provision(nil, route, time.Now()); err != nil {
		t.Fatal(err)
	}
	sealer := seal.NewLocal(make([]byte, 32))
	aad := seal.ResourceContext("ac_1", route)
	if err := s.SealSecrets(context.Background(), sealer, aad); err != nil {
		t.Fatal(err)
	}
	if s.SigningKey.Plain != "" || s.SigningKey.Sealed == nil {
		t.Fatal("the signing key is not sealed")
	}
	pkcs8, err := s.SigningKey.Open(context.Background(), sealer, aad, "saml.signing_key")
	if err != nil {
		t.Fatal(err)
	}
	key, err := x509.ParsePKCS8PrivateKey([]byte(pkcs8))
	if err != nil {
		t.Fatal(err)
	}
	sp := NewSPURLs("app.example.com:443", route)
	if sp.ACS != "https://app.example.com/ngrok/saml/"+route+"/acs" || sp.EntityID != sp.Metadata {
		t.Fatalf("SP URLs %+v", sp)
	}
	j := s.JSON(sp)
	block, _ := pem.Decode([]byte(j.RequestSigningCertificatePEM))
	if block == nil {
		t.Fatal("no certificate PEM")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !cert.PublicKey.(*rsa.PublicKey).Equal(&key.(*rsa.PrivateKey).PublicKey) {
		t.Fatal("the certificate is not of the sealed key")
	}
	if j.IdPMetadata != md || j.EntityID != sp.EntityID || j.SingleLogoutURL != sp.SLO || j.MetadataURL != sp.Metadata ||
		j.AssertionConsumerServiceURL != sp.ACS || !j.ForceAuthn || !j.AllowIdPInitiated || j.AuthorizedGroups[0] != "eng" {
		t.Fatalf("rendered %+v", j)
	}

	// The SP metadata parses back with the library and names the route's ACS URL.
	out, err := spMetadata(s, sp)
	ed := samltest.EntityDescriptor(t, out, err)
	if ed.EntityID != sp.EntityID || len(ed.SPSSODescriptors) != 1 {
		t.Fatalf("SP metadata %s", out)
	}
	d := ed.SPSSODescriptors[0]
	if d.AssertionConsumerServices[0].Location != sp.ACS || d.SingleLogoutServices[0].Location != sp.SLO ||
		string(d.NameIDFormats[0]) != s.NameIDFormat || !*d.AuthnRequestsSigned {
		t.Fatalf("SP metadata %s", out)
	}
	var signing bool
	for _, kd := range d.KeyDescriptors {
		if kd.Use == "signing" && strings.Contains(string(out), kd.KeyInfo.X509Data.X509Certificates[0].Data) {
			signing = true
		}
	}
	if !signing {
		t.Fatalf("no signing certificate in %s", out)
	}

	// Replacing the module keeps the route's key pair.
	s2, _ := decode[SAMLIn](t, samlBody(t, md, "")).Check("")
	if err := s2.Provision(&s, route, time.Now()); err != nil {
		t.Fatal(err)
	}
	if string(s2.SigningCert) != string(s.SigningCert) || s2.SigningKey.Sealed != s.SigningKey.Sealed {
		t.Fatal("a replaced saml module got a new key pair")
	}
	// No hostport, no public URL.
	if NewSPURLs("", route) != (SPURLs{}) {
		t.Fatal("SP URLs without a hostport")
	}
	if got := NewSPURLs("app.example.com:8443", route).ACS; got != "https://app.example.com:8443/ngrok/saml/"+route+"/acs" {
		t.Fatal(got)
	}
}

func TestSAMLMetadataForms(t *testing.T) {
	md := samltest.IdPMetadata(t)
	// An EntitiesDescriptor holding the IdP is accepted.
	wrapped := `<EntitiesDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata">` + strings.TrimPrefix(md, `<?xml version="1.0" encoding="UTF-8"?>`) + `</EntitiesDescriptor>`
	if _, err := decode[SAMLIn](t, samlBody(t, wrapped, "")).Check(""); err != nil {
		t.Fatal(err)
	}
	s, _ := decode[SAMLIn](t, samlBody(t, md, "")).Check("")
	hooktest.WantJSON(t, s.JSON(SPURLs{}).NameIDFormat, `"urn:oasis:names:tc:SAML:2.0:nameid-format:persistent"`)
	spOnly, err := spMetadata(s.provisioned(t), NewSPURLs("a.example:443", "r"))
	if err != nil {
		t.Fatal(err)
	}
	runRefusals(t, SAMLIn.Check, []refusal{
		{"missing", `{}`, CodeNoIdPMetadata, "m.idp_metadata"},
		{"empty", `{"idp_metadata":""}`, CodeNoIdPMetadata, "m.idp_metadata"},
		{"not XML", `{"idp_metadata":"not xml"}`, CodeSAMLMalformed, "m.idp_metadata"},
		{"truncated", samlBody(t, md[:len(md)/2], ""), CodeSAMLMalformed, "m.idp_metadata"},
		{"other root", `{"idp_metadata":"<a/>"}`, CodeSAMLMalformed, "m.idp_metadata"},
		{"an SP, not an IdP", samlBody(t, string(spOnly), ""), CodeSAMLMalformed, "m.idp_metadata"},
		{"oversize", samlBody(t, md+strings.Repeat(" ", MaxIdPMetadataBytes), ""), CodeSAMLTooLarge, "m.idp_metadata"},
		{"nameid format", samlBody(t, md, `,"nameid_format":"urn:x"`), api.CodeBadFieldValue, "m.nameid_format"},
		{"empty group", samlBody(t, md, `,"authorized_groups":[""]`), api.CodeBadFieldValue, "m.authorized_groups[0]"},
		{"inactivity", samlBody(t, md, `,"inactivity_timeout":40000000`), CodeInactivityTooLong, "m.inactivity_timeout"},
		{"cookie prefix", samlBody(t, md, `,"cookie_prefix":"a b"`), CodeCookiePrefix, "m.cookie_prefix"},
	})
}

// spMetadata is the metadata of the service provider s configures at sp (samltest.SPMetadata).
func spMetadata(s SAML, sp SPURLs) ([]byte, error) {
	return samltest.SPMetadata(samltest.SP{Cert: s.SigningCert, EntityID: sp.EntityID, ACS: sp.ACS, SLO: sp.SLO, Metadata: sp.Metadata,
		NameIDFormat: s.NameIDFormat, AllowIdPInitiated: s.AllowIdPInitiated, ForceAuthn: s.ForceAuthn})
}

func (s SAML) provisioned(t *testing.T) SAML {
	t.Helper()
	if err := s.Provision(nil, "r", time.Now()); err != nil {
		t.Fatal(err)
	}
	return s
}
