// Package samltest makes SAML metadata for tests with crewjam/saml: the EntityDescriptor a real
// IdP publishes, with a fresh signing key, and the one a route's service provider would publish.
// The library is the tests' alone: the functions validate metadata without it
// (httpmodules.CheckIdPMetadata).
package samltest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/xml"
	"math/big"
	"net/url"
	"testing"
	"time"

	"github.com/crewjam/saml"
	dsig "github.com/russellhaering/goxmldsig"
)

// IdPMetadata returns the metadata of an identity provider at idp.example.com.
func IdPMetadata(t testing.TB) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "idp.example.com"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	md, _ := url.Parse("https://idp.example.com/saml/metadata")
	sso, _ := url.Parse("https://idp.example.com/saml/sso")
	b, err := xml.Marshal((&saml.IdentityProvider{Key: key, Certificate: cert, MetadataURL: *md, SSOURL: *sso}).Metadata())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// EntityDescriptor parses the metadata doc a call returned with err, failing t when the call
// failed or doc does not parse with the library.
func EntityDescriptor(t testing.TB, doc []byte, err error) *saml.EntityDescriptor {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var ed saml.EntityDescriptor
	if err := xml.Unmarshal(doc, &ed); err != nil {
		t.Fatalf("%v: %s", err, doc)
	}
	return &ed
}

// SP is what a route's service provider metadata is made of (httpmodules.SAML and SPURLs).
type SP struct {
	// Cert is the route's request signing certificate (DER).
	Cert                          []byte
	EntityID, ACS, SLO, Metadata  string
	NameIDFormat                  string
	AllowIdPInitiated, ForceAuthn bool
}

// SPMetadata is the service provider's metadata (an EntityDescriptor) for sp, built with the
// library: the entity id, the assertion consumer and single logout services, the request
// signing certificate and the name id format.
func SPMetadata(sp SP) ([]byte, error) {
	cert, err := x509.ParseCertificate(sp.Cert)
	if err != nil {
		return nil, err
	}
	var acs, slo, md *url.URL
	for _, u := range []struct {
		raw string
		dst **url.URL
	}{{sp.ACS, &acs}, {sp.SLO, &slo}, {sp.Metadata, &md}} {
		if *u.dst, err = url.Parse(u.raw); err != nil {
			return nil, err
		}
	}
	provider := saml.ServiceProvider{
		EntityID: sp.EntityID, Certificate: cert, MetadataURL: *md, AcsURL: *acs, SloURL: *slo,
		AuthnNameIDFormat: saml.NameIDFormat(sp.NameIDFormat), SignatureMethod: dsig.RSASHA256SignatureMethod,
		LogoutBindings:    []string{saml.HTTPPostBinding, saml.HTTPRedirectBinding},
		AllowIDPInitiated: sp.AllowIdPInitiated, ForceAuthn: &sp.ForceAuthn,
	}
	return xml.MarshalIndent(provider.Metadata(), "", "  ")
}
