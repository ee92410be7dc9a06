package httpmodules

import (
	"context"
	"net/mail"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/idna"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/seal"
)

// OAuthProviders are the oauth module's identity providers, in the response's member order.
// Each has a managed app: client_id and client_secret are optional.
var OAuthProviders = []string{"github", "facebook", "microsoft", "google", "linkedin", "gitlab", "twitch", "amazon"}

// OAuth is a stored oauth module.
type OAuth struct {
	Enabled bool `dynamodbav:"enabled"`
	Session
	AuthCheckInterval int64 `dynamodbav:"auth_check_interval"`
	// Provider is the one provider configured, a member of OAuthProviders.
	Provider string   `dynamodbav:"provider"`
	App      OAuthApp `dynamodbav:"app"`
}

// OAuthApp is the configuration of the one provider.
type OAuthApp struct {
	ClientID       string   `dynamodbav:"client_id"`
	ClientSecret   Secret   `dynamodbav:"client_secret"`
	Scopes         []string `dynamodbav:"scopes"`
	EmailAddresses []string `dynamodbav:"email_addresses"`
	EmailDomains   []string `dynamodbav:"email_domains"`
	// Teams and Organizations are GitHub's only.
	Teams         []string `dynamodbav:"teams,omitempty"`
	Organizations []string `dynamodbav:"organizations,omitempty"`
}

// OAuthIn is the request form of OAuth.
type OAuthIn struct {
	Enabled  *bool              `json:"enabled"`
	Provider *OAuthProviderForm `json:"provider"`
	SessionIn
	AuthCheckInterval *int64 `json:"auth_check_interval"`
}

// OAuthProviderForm is the request and the response form of the provider: one member per
// provider, exactly one of them non-null.
type OAuthProviderForm struct {
	GitHub    *OAuthGitHubForm `json:"github"`
	Facebook  *OAuthAppForm    `json:"facebook"`
	Microsoft *OAuthAppForm    `json:"microsoft"`
	Google    *OAuthAppForm    `json:"google"`
	LinkedIn  *OAuthAppForm    `json:"linkedin"`
	GitLab    *OAuthAppForm    `json:"gitlab"`
	Twitch    *OAuthAppForm    `json:"twitch"`
	Amazon    *OAuthAppForm    `json:"amazon"`
}

// others are p's members of the providers after GitHub, in OAuthProviders' order.
func (p *OAuthProviderForm) others() []**OAuthAppForm {
	return []**OAuthAppForm{&p.Facebook, &p.Microsoft, &p.Google, &p.LinkedIn, &p.GitLab, &p.Twitch, &p.Amazon}
}

// OAuthAppForm is the request and the response form of a provider's configuration; the client
// secret is write-only, always null in a response.
type OAuthAppForm struct {
	ClientID       *string  `json:"client_id"`
	ClientSecret   *string  `json:"client_secret"`
	Scopes         []string `json:"scopes"`
	EmailAddresses []string `json:"email_addresses"`
	EmailDomains   []string `json:"email_domains"`
}

// OAuthGitHubForm is GitHub's configuration, which may also name teams and organizations.
type OAuthGitHubForm struct {
	OAuthAppForm
	Teams         []string `json:"teams"`
	Organizations []string `json:"organizations"`
}

// OAuthJSON is the response form of OAuth.
type OAuthJSON struct {
	Enabled  bool               `json:"enabled"`
	Provider *OAuthProviderForm `json:"provider"`
	Session
	AuthCheckInterval int64 `json:"auth_check_interval"`
}

var oauthSession = sessionCodes{cookieFormat: CodeCookiePrefix, cookieLong: CodeOAuthCookieLong, maxDuration: CodeOAuthDurationLong}

// Check validates an oauth module: exactly one provider (none 7037, several 7036); client_id and
// client_secret both or neither (7033); scopes only with the account's own app (7034); every
// provider has a managed app. Lists: empty entries (7051–7054), duplicates (7046–7049), too many
// (7056–7058, 7060, 7061), too long (7139–7141, 7144, 7145); email addresses and domains valid
// (7043, 7039), lowercase (7067, 7068), with valid punycode (7045, 7044); GitHub teams are a
// numeric id or org/team (7040), and with the account's own app and its own scopes, teams or
// organizations need read:org and email rules need user:email (7038). cookie_prefix
// alphanumeric with periods (7042) of at most MaxCookiePrefixBytes (7136); auth_check_interval
// 0 (the default) or MinAuthCheckInterval–MaxSessionSeconds (7035, 7158); maximum_duration at
// most MaxSessionSeconds (7161).
func (in OAuthIn) Check(field string) (OAuth, error) {
	o := OAuth{Enabled: enabled(in.Enabled)}
	var err error
	if o.Session, err = in.SessionIn.check(field, oauthSession); err != nil {
		return o, err
	}
	f := path(field, "auth_check_interval")
	if o.AuthCheckInterval, err = nonNegative(f, in.AuthCheckInterval); err != nil {
		return o, err
	}
	if o.AuthCheckInterval != 0 && o.AuthCheckInterval < MinAuthCheckInterval {
		return o, api.BadRequest(CodeAuthCheckShort, f, "%s must be 0 (the default) or at least %d seconds", f, MinAuthCheckInterval)
	}
	if o.AuthCheckInterval > MaxSessionSeconds {
		return o, api.BadRequest(CodeAuthCheckLong, f, "%s must be at most one year (%d seconds)", f, MaxSessionSeconds)
	}
	pf := path(field, "provider")
	var app *OAuthAppForm
	var gh *OAuthGitHubForm
	if p := in.Provider; p != nil {
		apps := []*OAuthAppForm{nil}
		for _, a := range p.others() {
			apps = append(apps, *a)
		}
		if p.GitHub != nil {
			apps[0], gh = &p.GitHub.OAuthAppForm, p.GitHub
		}
		for i, a := range apps {
			if a == nil {
				continue
			}
			if app != nil {
				return o, api.BadRequest(CodeOAuthManyProviders, pf, "%s must configure exactly one provider; it has %s and %s", pf, o.Provider, OAuthProviders[i])
			}
			app, o.Provider = a, OAuthProviders[i]
		}
	}
	if app == nil {
		return o, api.BadRequest(CodeOAuthNoProvider, pf, "%s must configure one provider: one of %s", pf, strings.Join(OAuthProviders, ", "))
	}
	af := path(pf, o.Provider)
	if o.App, err = app.check(af); err != nil {
		return o, err
	}
	if gh != nil {
		if err := o.App.checkGitHub(af, gh); err != nil {
			return o, err
		}
	}
	return o, nil
}

func (in *OAuthAppForm) check(field string) (OAuthApp, error) {
	var a OAuthApp
	id, secret := "", ""
	api.Set(&id, in.ClientID)
	api.Set(&secret, in.ClientSecret)
	idf, sf := path(field, "client_id"), path(field, "client_secret")
	switch {
	case (id == "") != (secret == ""):
		return a, api.BadRequest(CodeOAuthClient, idf, "%s and %s are given together (the account's own app) or not at all (the managed app)", idf, sf)
	case len(id) > MaxClientIDBytes:
		return a, api.BadRequest(CodeOAuthClientIDLong, idf, "%s is %d bytes long; the limit is %d", idf, len(id), MaxClientIDBytes)
	case len(secret) > MaxClientSecretBytes:
		return a, api.BadRequest(CodeOAuthSecretLong, sf, "%s is %d bytes long; the limit is %d", sf, len(secret), MaxClientSecretBytes)
	case id == "" && len(in.Scopes) > 0:
		f := path(field, "scopes")
		return a, api.BadRequest(CodeManagedScopes, f, "%s may be set only with the account's own app (client_id and client_secret)", f)
	}
	a.ClientID, a.ClientSecret.Plain = id, secret
	f := path(field, "scopes")
	if err := checkList(f, in.Scopes, MaxScopes, MaxScopeBytes, CodeTooManyScopes, api.CodeBadFieldValue, CodeScopeLong, api.CodeBadFieldValue, false); err != nil {
		return a, err
	}
	f = path(field, "email_addresses")
	if err := checkList(f, in.EmailAddresses, MaxOAuthEmails, MaxEmailBytes, CodeTooManyEmails, CodeEmptyEmail, CodeEmailLong, CodeDupEmail, true); err != nil {
		return a, err
	}
	for i, e := range in.EmailAddresses {
		if err := checkEmail(index(f, i), e); err != nil {
			return a, err
		}
	}
	f = path(field, "email_domains")
	if err := checkList(f, in.EmailDomains, MaxOAuthDomains, MaxDomainBytes, CodeTooManyDomains, CodeEmptyDomain, CodeDomainLong, CodeDupDomain, true); err != nil {
		return a, err
	}
	for i, d := range in.EmailDomains {
		if err := checkDomain(index(f, i), d, CodeOAuthDomain, CodeDomainCase, CodeDomainPunycode); err != nil {
			return a, err
		}
	}
	a.Scopes, a.EmailAddresses, a.EmailDomains = api.Slice(slices.Clone(in.Scopes)), api.Slice(slices.Clone(in.EmailAddresses)), api.Slice(slices.Clone(in.EmailDomains))
	return a, nil
}

func (a *OAuthApp) checkGitHub(field string, in *OAuthGitHubForm) error {
	f := path(field, "teams")
	if err := checkList(f, in.Teams, MaxGitHubTeams, MaxGitHubNameBytes, CodeTooManyTeams, CodeEmptyTeam, CodeTeamLong, CodeDupTeam, true); err != nil {
		return err
	}
	for i, t := range in.Teams {
		if !githubTeam(t) {
			return api.BadRequest(CodeGitHubTeam, index(f, i), "%s must be a numeric team id or 'org_slug/team_slug'", index(f, i))
		}
	}
	f = path(field, "organizations")
	if err := checkList(f, in.Organizations, MaxGitHubOrgs, MaxGitHubNameBytes, CodeTooManyOrgs, CodeEmptyOrg, CodeOrgLong, CodeDupOrg, true); err != nil {
		return err
	}
	a.Teams, a.Organizations = api.Slice(slices.Clone(in.Teams)), api.Slice(slices.Clone(in.Organizations))
	// The account's own app asks only for the scopes it lists: each rule must be answerable.
	if len(a.Scopes) > 0 {
		sf := path(field, "scopes")
		if (len(a.Teams) > 0 || len(a.Organizations) > 0) && !slices.Contains(a.Scopes, "read:org") {
			return api.BadRequest(CodeOAuthMissingScope, sf, "%s must include read:org to check teams and organizations", sf)
		}
		if (len(a.EmailAddresses) > 0 || len(a.EmailDomains) > 0) && !slices.Contains(a.Scopes, "user:email") {
			return api.BadRequest(CodeOAuthMissingScope, sf, "%s must include user:email to check email addresses and domains", sf)
		}
	}
	return nil
}

// githubTeam reports whether t is a numeric team id or org_slug/team_slug.
func githubTeam(t string) bool {
	if _, err := strconv.ParseUint(t, 10, 64); err == nil {
		return true
	}
	org, team, ok := strings.Cut(t, "/")
	return ok && githubSlug(org) && githubSlug(team)
}

func githubSlug(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// checkEmail accepts a bare lowercase address whose domain is a valid (punycode-checked) name.
func checkEmail(field, e string) error {
	addr, err := mail.ParseAddress(e)
	if err != nil || addr.Address != e || addr.Name != "" {
		return api.BadRequest(CodeOAuthEmail, field, "%s %s is not an email address", field, api.Describe(e))
	}
	if strings.ToLower(e) != e {
		return api.BadRequest(CodeEmailCase, field, "%s must be lowercase", field)
	}
	_, domain, _ := strings.Cut(e, "@")
	if err := checkDomain(field, domain, CodeOAuthEmail, CodeEmailCase, CodeEmailPunycode); err != nil {
		return err
	}
	return nil
}

// checkDomain accepts a lowercase DNS name of at least two labels; labels in punycode (xn--)
// must decode.
func checkDomain(field, d, invalid, lower, puny string) error {
	if strings.ToLower(d) != d {
		return api.BadRequest(lower, field, "%s must be lowercase", field)
	}
	labels := strings.Split(d, ".")
	if len(labels) < 2 {
		return api.BadRequest(invalid, field, "%s %s is not a domain name", field, api.Describe(d))
	}
	for _, l := range labels {
		if strings.HasPrefix(l, "xn--") {
			if _, err := idna.Registration.ToUnicode(l); err != nil {
				return api.BadRequest(puny, field, "%s has invalid punycode label %s", field, api.Describe(l))
			}
		}
		if !dnsLabel(l) {
			return api.BadRequest(invalid, field, "%s %s is not a domain name", field, api.Describe(d))
		}
	}
	return nil
}

func dnsLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for _, c := range l {
		if !(c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

// SealSecrets seals the client secret.
func (o *OAuth) SealSecrets(ctx context.Context, s seal.Sealer, aad map[string]string) error {
	return o.App.ClientSecret.seal(ctx, s, aad, "oauth.client_secret")
}

// JSON returns o's response form.
func (o OAuth) JSON() *OAuthJSON {
	app := OAuthAppForm{Scopes: api.Slice(o.App.Scopes), EmailAddresses: api.Slice(o.App.EmailAddresses), EmailDomains: api.Slice(o.App.EmailDomains)}
	if o.App.ClientID != "" {
		id := o.App.ClientID
		app.ClientID = &id
	}
	p := &OAuthProviderForm{}
	if i := slices.Index(OAuthProviders, o.Provider); i == 0 {
		p.GitHub = &OAuthGitHubForm{OAuthAppForm: app, Teams: api.Slice(o.App.Teams), Organizations: api.Slice(o.App.Organizations)}
	} else if i > 0 {
		*p.others()[i-1] = &app
	}
	return &OAuthJSON{Enabled: o.Enabled, Provider: p, Session: o.Session, AuthCheckInterval: o.AuthCheckInterval}
}
