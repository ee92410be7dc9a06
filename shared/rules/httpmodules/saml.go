package httpmodules

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/seal"
)

// NameIDFormats are the name identifier formats a saml module may ask for; the first is the
// default.
var NameIDFormats = []string{
	"urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
	"urn:oasis:names:tc:SAML:2.0:nameid-format:transient",
	"urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
	"urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified",
}

// SigningKeyBits is the size of a route's request signing RSA key.
const SigningKeyBits = 2048

// SAML is a stored saml module. The request signing key pair belongs to the route: its private
// key (PKCS #8) is sealed and its certificate kept in DER.
type SAML struct {
	Enabled bool `dynamodbav:"enabled"`
	Session
	IdPMetadata       string   `dynamodbav:"idp_metadata"`
	ForceAuthn        bool     `dynamodbav:"force_authn"`
	AllowIdPInitiated bool     `dynamodbav:"allow_idp_initiated"`
	AuthorizedGroups  []string `dynamodbav:"authorized_groups"`
	NameIDFormat      string   `dynamodbav:"nameid_format"`
	SigningKey        Secret   `dynamodbav:"signing_key"`
	SigningCert       []byte   `dynamodbav:"signing_cert"`
	// SP is where the service provider is served: derived from the route and its edge when the
	// module is read, never stored.
	SP SPURLs `dynamodbav:"-"`
}

// SAMLIn is the request form of SAML (EndpointSAMLMutate).
type SAMLIn struct {
	Enabled *bool `json:"enabled"`
	SessionIn
	IdPMetadata       *string  `json:"idp_metadata"`
	ForceAuthn        *bool    `json:"force_authn"`
	AllowIdPInitiated *bool    `json:"allow_idp_initiated"`
	AuthorizedGroups  []string `json:"authorized_groups"`
	NameIDFormat      *string  `json:"nameid_format"`
}

// SAMLJSON is the response form of SAML, with the service provider's derived members.
type SAMLJSON struct {
	Enabled bool `json:"enabled"`
	Session
	IdPMetadata string `json:"idp_metadata"`
	// IdPMetadataURL is where the IdP's metadata was fetched from: always "" here, where the
	// metadata is given inline, as the platform sends it then.
	IdPMetadataURL               string   `json:"idp_metadata_url"`
	ForceAuthn                   bool     `json:"force_authn"`
	AllowIdPInitiated            bool     `json:"allow_idp_initiated"`
	AuthorizedGroups             []string `json:"authorized_groups"`
	EntityID                     string   `json:"entity_id"`
	AssertionConsumerServiceURL  string   `json:"assertion_consumer_service_url"`
	SingleLogoutURL              string   `json:"single_logout_url"`
	RequestSigningCertificatePEM string   `json:"request_signing_certificate_pem"`
	MetadataURL                  string   `json:"metadata_url"`
	NameIDFormat                 string   `json:"nameid_format"`
}

var samlSession = sessionCodes{cookieFormat: CodeCookiePrefix, cookieLong: api.CodeBadFieldValue, maxDuration: api.CodeBadFieldValue}

// Check validates a saml module: idp_metadata required (7091), at most MaxIdPMetadataBytes
// (7080), IdP metadata as CheckIdPMetadata reads it (7083); nameid_format one of
// NameIDFormats; authorized_groups non-empty names. The service provider's entity_id and
// metadata_url, assertion_consumer_service_url and single_logout_url are on the route's edge's
// first hostport (SPURLs); request_signing_certificate_pem is the certificate of an RSA key pair
// generated for the route (NewSigningKey), whose private key is sealed.
func (in SAMLIn) Check(field string) (SAML, error) {
	s := SAML{Enabled: enabled(in.Enabled), NameIDFormat: NameIDFormats[0]}
	var err error
	if s.Session, err = in.SessionIn.check(field, samlSession); err != nil {
		return s, err
	}
	api.Set(&s.IdPMetadata, in.IdPMetadata)
	api.Set(&s.ForceAuthn, in.ForceAuthn)
	api.Set(&s.AllowIdPInitiated, in.AllowIdPInitiated)
	f := path(field, "idp_metadata")
	switch {
	case s.IdPMetadata == "":
		return s, api.BadRequest(CodeNoIdPMetadata, f, "%s is required: the IdP's EntityDescriptor XML", f)
	case len(s.IdPMetadata) > MaxIdPMetadataBytes:
		return s, api.BadRequest(CodeSAMLTooLarge, f, "%s is %d bytes long; the limit is %d", f, len(s.IdPMetadata), MaxIdPMetadataBytes)
	}
	if err := CheckIdPMetadata(s.IdPMetadata); err != nil {
		return s, api.BadRequest(CodeSAMLMalformed, f, "%s is not IdP metadata: %s", f, err.Error())
	}
	if in.NameIDFormat != nil && *in.NameIDFormat != "" {
		if !slices.Contains(NameIDFormats, *in.NameIDFormat) {
			f := path(field, "nameid_format")
			return s, api.Invalid(f, "%s must be one of %s", f, strings.Join(NameIDFormats, ", "))
		}
		s.NameIDFormat = *in.NameIDFormat
	}
	f = path(field, "authorized_groups")
	if err := checkList(f, in.AuthorizedGroups, MaxAuthorizedGroups, MaxGroupBytes, api.CodeBadFieldValue, api.CodeBadFieldValue, api.CodeBadFieldValue, api.CodeBadFieldValue, false); err != nil {
		return s, err
	}
	s.AuthorizedGroups = api.Slice(slices.Clone(in.AuthorizedGroups))
	return s, nil
}

// Provision gives s its route's request signing key pair: prev's (the route's saml module being
// replaced) when it has one, else a new one. Sealing the private key is SealSecrets's.
func (s *SAML) Provision(prev *SAML, routeID string, now time.Time) (err error) {
	defer derrors.Wrap(&err, "httpmodules.Provision(%s)", routeID)
	if prev != nil && prev.SigningKey.Sealed != nil && len(prev.SigningCert) > 0 {
		s.SigningKey, s.SigningCert = prev.SigningKey, prev.SigningCert
		return nil
	}
	key, err := rsa.GenerateKey(rand.Reader, SigningKeyBits)
	if err != nil {
		return fmt.Errorf("generate the signing key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return fmt.Errorf("draw the certificate's serial: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: routeID, Organization: []string{"SAML request signing"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return fmt.Errorf("create the certificate: %w", err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("marshal the key: %w", err)
	}
	s.SigningKey, s.SigningCert = Secret{Plain: string(pkcs8)}, der
	return nil
}

// SealSecrets seals the request signing private key.
func (s *SAML) SealSecrets(ctx context.Context, sealer seal.Sealer, aad map[string]string) error {
	return s.SigningKey.seal(ctx, sealer, aad, "saml.signing_key")
}

// SPURLs are a route's SAML service provider URLs, on its edge's hostport.
type SPURLs struct {
	EntityID, ACS, SLO, Metadata string
}

// NewSPURLs returns the SP URLs of route routeID served at hostport (host:port; the port is
// left out when it is 443). An edge without a hostport has no public URL: all are empty.
func NewSPURLs(hostport, routeID string) SPURLs {
	if hostport == "" {
		return SPURLs{}
	}
	host, port, err := net.SplitHostPort(hostport)
	if err == nil && port == "443" {
		hostport = host
	}
	base := (&url.URL{Scheme: "https", Host: hostport, Path: "/ngrok/saml/" + routeID}).String()
	return SPURLs{EntityID: base + "/metadata", ACS: base + "/acs", SLO: base + "/slo", Metadata: base + "/metadata"}
}

// CertificatePEM is the request signing certificate in PEM.
func (s SAML) CertificatePEM() string {
	if len(s.SigningCert) == 0 {
		return ""
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.SigningCert}))
}

// JSON returns s's response form for sp.
func (s SAML) JSON(sp SPURLs) *SAMLJSON {
	return &SAMLJSON{Enabled: s.Enabled, Session: s.Session, IdPMetadata: s.IdPMetadata,
		ForceAuthn: s.ForceAuthn, AllowIdPInitiated: s.AllowIdPInitiated, AuthorizedGroups: api.Slice(s.AuthorizedGroups),
		EntityID: sp.EntityID, AssertionConsumerServiceURL: sp.ACS, SingleLogoutURL: sp.SLO,
		RequestSigningCertificatePEM: s.CertificatePEM(), MetadataURL: sp.Metadata, NameIDFormat: s.NameIDFormat}
}
