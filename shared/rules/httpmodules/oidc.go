package httpmodules

import (
	"context"
	"net/url"
	"slices"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/seal"
)

// OIDC is a stored oidc module.
type OIDC struct {
	Enabled bool `dynamodbav:"enabled"`
	Session
	Issuer       string   `dynamodbav:"issuer"`
	ClientID     string   `dynamodbav:"client_id"`
	ClientSecret Secret   `dynamodbav:"client_secret"`
	Scopes       []string `dynamodbav:"scopes"`
}

// OIDCIn is the request form of OIDC.
type OIDCIn struct {
	Enabled *bool `json:"enabled"`
	SessionIn
	Issuer       *string  `json:"issuer"`
	ClientID     *string  `json:"client_id"`
	ClientSecret *string  `json:"client_secret"`
	Scopes       []string `json:"scopes"`
}

// OIDCJSON is the response form of OIDC: the client secret is write-only, always null.
type OIDCJSON struct {
	Enabled bool `json:"enabled"`
	Session
	Issuer       string   `json:"issuer"`
	ClientID     string   `json:"client_id"`
	ClientSecret *string  `json:"client_secret"`
	Scopes       []string `json:"scopes"`
}

var oidcSession = sessionCodes{cookieFormat: CodeCookiePrefix, cookieLong: CodeOIDCCookieLong, maxDuration: CodeOIDCDurationLong}

// Check validates an oidc module: issuer required (7088), an absolute http(s) URL (215) of at
// most MaxIssuerBytes (7087); client_id (7089, 7148) and client_secret (7090, 7149) required;
// scopes (7150, 7151); cookie_prefix (7042, 7153); maximum_duration (7162).
func (in OIDCIn) Check(field string) (OIDC, error) {
	o := OIDC{Enabled: enabled(in.Enabled)}
	var err error
	if o.Session, err = in.SessionIn.check(field, oidcSession); err != nil {
		return o, err
	}
	api.Set(&o.Issuer, in.Issuer)
	api.Set(&o.ClientID, in.ClientID)
	api.Set(&o.ClientSecret.Plain, in.ClientSecret)
	f := path(field, "issuer")
	switch {
	case o.Issuer == "":
		return o, api.BadRequest(CodeNoIssuer, f, "%s is required: the OpenID provider's URL", f)
	case len(o.Issuer) > MaxIssuerBytes:
		return o, api.BadRequest(CodeIssuerTooLong, f, "%s is %d bytes long; the limit is %d", f, len(o.Issuer), MaxIssuerBytes)
	case !httpURL(o.Issuer):
		return o, api.Invalid(f, "%s must be an absolute http or https URL", f)
	}
	f = path(field, "client_id")
	switch {
	case o.ClientID == "":
		return o, api.BadRequest(CodeNoOIDCClientID, f, "%s is required", f)
	case len(o.ClientID) > MaxClientIDBytes:
		return o, api.BadRequest(CodeOIDCClientIDLong, f, "%s is %d bytes long; the limit is %d", f, len(o.ClientID), MaxClientIDBytes)
	}
	f = path(field, "client_secret")
	switch {
	case o.ClientSecret.Plain == "":
		return o, api.BadRequest(CodeNoOIDCClientSecret, f, "%s is required", f)
	case len(o.ClientSecret.Plain) > MaxClientSecretBytes:
		return o, api.BadRequest(CodeOIDCSecretLong, f, "%s is %d bytes long; the limit is %d", f, len(o.ClientSecret.Plain), MaxClientSecretBytes)
	}
	f = path(field, "scopes")
	if err := checkList(f, in.Scopes, MaxScopes, MaxScopeBytes, CodeOIDCTooManyScopes, api.CodeBadFieldValue, CodeOIDCScopeLong, api.CodeBadFieldValue, false); err != nil {
		return o, err
	}
	o.Scopes = api.Slice(slices.Clone(in.Scopes))
	return o, nil
}

// httpURL reports whether s is an absolute http or https URL with a host.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.User == nil
}

// SealSecrets seals the client secret.
func (o *OIDC) SealSecrets(ctx context.Context, s seal.Sealer, aad map[string]string) error {
	return o.ClientSecret.seal(ctx, s, aad, "oidc.client_secret")
}

// JSON returns o's response form.
func (o OIDC) JSON() *OIDCJSON {
	return &OIDCJSON{Enabled: o.Enabled, Session: o.Session, Issuer: o.Issuer,
		ClientID: o.ClientID, Scopes: api.Slice(o.Scopes)}
}
