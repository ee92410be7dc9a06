package httpmodules

import (
	"context"
	"fmt"
	"strings"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/seal"
)

// Limits of this service where the platform publishes none.
const (
	MaxHeaders             = 100
	MaxHeaderNameBytes     = 256
	MaxHeaderValueBytes    = 4096
	MaxWebhookSecretBytes  = 4096
	MaxCookiePrefixBytes   = 64
	MaxClientIDBytes       = 512
	MaxClientSecretBytes   = 1024
	MaxScopes              = 100
	MaxScopeBytes          = 256
	MaxOAuthEmails         = 1000
	MaxOAuthDomains        = 1000
	MaxEmailBytes          = 254
	MaxDomainBytes         = 253
	MaxGitHubTeams         = 100
	MaxGitHubOrgs          = 100
	MaxGitHubNameBytes     = 256
	MaxIssuerBytes         = 2048
	MaxIdPMetadataBytes    = 128 << 10
	MaxAuthorizedGroups    = 100
	MaxGroupBytes          = 256
	MaxUserAgentRegexes    = 100
	MaxUserAgentRegexBytes = 1024
	MaxMatchBytes          = 1024
	// MaxSessionSeconds bounds every session duration: one year.
	MaxSessionSeconds = 365 * 24 * 3600
	// MinAuthCheckInterval is the shortest OAuth auth_check_interval other than 0 (the default).
	MinAuthCheckInterval = 60
)

// path joins a module's field path and a member name.
func path(prefix, member string) string {
	if prefix == "" {
		return member
	}
	return prefix + "." + member
}

// index names entry i of the list at field.
func index(field string, i int) string { return fmt.Sprintf("%s[%d]", field, i) }

// enabled is the value of a module's enabled member: true unless supplied false.
func enabled(in *bool) bool { return in == nil || *in }

// nonNegative returns *v (0 when absent), refusing a negative value.
func nonNegative(field string, v *int64) (int64, error) {
	if v == nil {
		return 0, nil
	}
	if *v < 0 {
		return 0, api.Invalid(field, "%s must not be negative", field)
	}
	return *v, nil
}

// Secret is a write-only value: webhook, OAuth and OIDC client secrets and the SAML request
// signing key. Plain exists only in memory, between the request and SealSecrets: it has no
// attribute, so an unsealed secret is never stored. SealSecrets seals it with the account's
// sealer, bound to the account, the route and the member; responses render every secret as
// null.
type Secret struct {
	Plain  string       `dynamodbav:"-" json:"-"`
	Sealed *seal.Sealed `dynamodbav:"sealed,omitempty" json:"-"`
}

// seal seals the plaintext (if any) bound to aad and member, and forgets it.
func (s *Secret) seal(ctx context.Context, sealer seal.Sealer, aad map[string]string, member string) (err error) {
	defer derrors.Wrap(&err, "httpmodules.seal(%s)", member)
	if s.Plain == "" {
		return nil
	}
	ctxt := map[string]string{"member": member}
	for k, v := range aad {
		ctxt[k] = v
	}
	sealed, err := sealer.Seal(ctx, []byte(s.Plain), ctxt)
	if err != nil {
		return err
	}
	s.Sealed, s.Plain = &sealed, ""
	return nil
}

// Open returns the plaintext of a sealed secret stored for member with aad (as SealSecrets
// bound it).
func (s *Secret) Open(ctx context.Context, sealer seal.Sealer, aad map[string]string, member string) (_ string, err error) {
	defer derrors.Wrap(&err, "httpmodules.Open(%s)", member)
	if s.Sealed == nil {
		return "", nil
	}
	ctxt := map[string]string{"member": member}
	for k, v := range aad {
		ctxt[k] = v
	}
	b, err := sealer.Open(ctx, *s.Sealed, ctxt)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// Sealable is a module holding secrets: SealSecrets seals each of them bound to aad (the
// account and the route, seal.ResourceContext) before the module is stored.
type Sealable interface {
	SealSecrets(ctx context.Context, s seal.Sealer, aad map[string]string) error
}

// sessionCodes are the codes of one authentication module's session members.
type sessionCodes struct {
	cookieFormat, cookieLong, maxDuration string
}

// Session is the session configuration common to oauth, oidc and saml, in its stored and its
// response form: inactivity_timeout at most one year (7092); integers are not negative (215).
type Session struct {
	OptionsPassthrough bool   `dynamodbav:"options_passthrough" json:"options_passthrough"`
	CookiePrefix       string `dynamodbav:"cookie_prefix" json:"cookie_prefix"`
	InactivityTimeout  int64  `dynamodbav:"inactivity_timeout" json:"inactivity_timeout"`
	MaximumDuration    int64  `dynamodbav:"maximum_duration" json:"maximum_duration"`
}

// SessionIn is the request form of Session.
type SessionIn struct {
	OptionsPassthrough *bool   `json:"options_passthrough"`
	CookiePrefix       *string `json:"cookie_prefix"`
	InactivityTimeout  *int64  `json:"inactivity_timeout"`
	MaximumDuration    *int64  `json:"maximum_duration"`
}

func (in SessionIn) check(field string, codes sessionCodes) (Session, error) {
	var s Session
	var err error
	s.OptionsPassthrough = in.OptionsPassthrough != nil && *in.OptionsPassthrough
	if in.CookiePrefix != nil {
		p, f := *in.CookiePrefix, path(field, "cookie_prefix")
		if len(p) > MaxCookiePrefixBytes {
			return s, api.BadRequest(codes.cookieLong, f, "%s is %d bytes long; the limit is %d", f, len(p), MaxCookiePrefixBytes)
		}
		if !cookiePrefixOK(p) {
			return s, api.BadRequest(codes.cookieFormat, f, "%s must be letters, digits and periods", f)
		}
		s.CookiePrefix = p
	}
	f := path(field, "inactivity_timeout")
	if s.InactivityTimeout, err = nonNegative(f, in.InactivityTimeout); err != nil {
		return s, err
	}
	if s.InactivityTimeout > MaxSessionSeconds {
		return s, api.BadRequest(CodeInactivityTooLong, f, "%s must be at most one year (%d seconds)", f, MaxSessionSeconds)
	}
	f = path(field, "maximum_duration")
	if s.MaximumDuration, err = nonNegative(f, in.MaximumDuration); err != nil {
		return s, err
	}
	if s.MaximumDuration > MaxSessionSeconds {
		return s, api.BadRequest(codes.maxDuration, f, "%s must be at most one year (%d seconds)", f, MaxSessionSeconds)
	}
	return s, nil
}

func cookiePrefixOK(p string) bool {
	for _, c := range p {
		if !(c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// checkList checks a list of names: none empty (empty), none longer than maxBytes (long), no
// duplicates (dup, compared case-insensitively when fold), at most max entries (many).
func checkList(field string, list []string, max, maxBytes int, many, empty, long, dup string, fold bool) error {
	if len(list) > max {
		return api.BadRequest(many, field, "%s has %d entries; the limit is %d", field, len(list), max)
	}
	seen := make(map[string]bool, len(list))
	for i, v := range list {
		f := index(field, i)
		if v == "" {
			return api.BadRequest(empty, f, "%s must not be empty", f)
		}
		if len(v) > maxBytes {
			return api.BadRequest(long, f, "%s is %d bytes long; the limit is %d", f, len(v), maxBytes)
		}
		k := v
		if fold {
			k = strings.ToLower(v)
		}
		if seen[k] {
			return api.BadRequest(dup, f, "%s repeats %s", f, api.Describe(v))
		}
		seen[k] = true
	}
	return nil
}
