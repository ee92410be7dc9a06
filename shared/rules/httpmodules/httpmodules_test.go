package httpmodules

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/testing/hooktest"
)

// decode reads body strictly, as the API does.
func decode[T any](t *testing.T, body string) T {
	t.Helper()
	var in T
	if err := api.DecodeBytes([]byte(body), &in); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return in
}

// refusal is one module body and the code and field it must be refused with.
type refusal struct {
	name, body, code, field string
}

func runRefusals[T any, S any](t *testing.T, check func(T, string) (S, error), cases []refusal) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := check(decode[T](t, c.body), "m")
			hooktest.WantCode(t, err, c.code, c.field)
		})
	}
}

func rep(s string, n int) string { return strings.Repeat(s, n) }

func TestHeaders(t *testing.T) {
	in := decode[HeadersIn](t, `{"add":{"X-Env":"prod","host":"a.example"},"remove":["X-Debug","Host"]}`)
	h, err := in.Check("", true)
	if err != nil {
		t.Fatal(err)
	}
	hooktest.WantJSON(t, h.JSON(), `{"enabled":true,"add":{"X-Env":"prod","host":"a.example"},"remove":["X-Debug","Host"]}`)
	h, err = decode[HeadersIn](t, `{"enabled":false}`).Check("", false)
	if err != nil {
		t.Fatal(err)
	}
	hooktest.WantJSON(t, h.JSON(), `{"enabled":false,"add":{},"remove":[]}`)
	many := map[string]string{}
	for i := 0; i <= MaxHeaders; i++ {
		many["X-H"+strings.Repeat("a", i)] = "v"
	}
	manyBody, _ := json.Marshal(map[string]any{"add": many})
	check := func(in HeadersIn, f string) (Headers, error) { return in.Check(f, true) }
	runRefusals(t, check, []refusal{
		{"bad name", `{"add":{"X Env":"v"}}`, CodeHeaderName, "m.add.X Env"},
		{"empty name", `{"remove":[""]}`, CodeHeaderName, "m.remove[0]"},
		{"colon in removed name", `{"remove":["a:b"]}`, CodeHeaderName, "m.remove[0]"},
		{"bad value", `{"add":{"X-A":"a\r\nb"}}`, CodeHeaderValue, "m.add.X-A"},
		{"long name", `{"add":{"` + rep("a", MaxHeaderNameBytes+1) + `":"v"}}`, CodeHeaderNameLong, "m.add." + rep("a", MaxHeaderNameBytes+1)},
		{"long value", `{"add":{"X-A":"` + rep("v", MaxHeaderValueBytes+1) + `"}}`, CodeHeaderValueLong, "m.add.X-A"},
		{"twice with casing", `{"add":{"X-A":"1","x-a":"2"}}`, CodeHeaderTwice, "m.add.x-a"},
		{"too many", string(manyBody), CodeTooManyHeaders, "m.add"},
		{"host removed without replacement", `{"remove":["HOST"]}`, CodeHostNeedsReplacement, "m.remove[0]"},
	})
	// A response may drop Host: the rule is the request's.
	if _, err := decode[HeadersIn](t, `{"remove":["Host"]}`).Check("", false); err != nil {
		t.Fatal(err)
	}
}

func TestToggle(t *testing.T) {
	for body, want := range map[string]string{`{}`: `{"enabled":true}`, `{"enabled":false}`: `{"enabled":false}`} {
		m, _ := decode[ToggleIn](t, body).Check("")
		hooktest.WantJSON(t, m.JSON(), want)
	}
}

func TestCircuitBreaker(t *testing.T) {
	c, err := decode[CircuitBreakerIn](t, `{}`).Check("")
	if err != nil {
		t.Fatal(err)
	}
	hooktest.WantJSON(t, c.JSON(), `{"enabled":true,"tripped_duration":10,"rolling_window":10,"num_buckets":10,"volume_threshold":20,"error_threshold_percentage":0.5}`)
	c, err = decode[CircuitBreakerIn](t, `{"enabled":false,"tripped_duration":5,"rolling_window":60,"num_buckets":128,"volume_threshold":0,"error_threshold_percentage":1}`).Check("")
	if err != nil {
		t.Fatal(err)
	}
	hooktest.WantJSON(t, c.JSON(), `{"enabled":false,"tripped_duration":5,"rolling_window":60,"num_buckets":128,"volume_threshold":0,"error_threshold_percentage":1}`)
	runRefusals(t, CircuitBreakerIn.Check, []refusal{
		{"threshold above 1", `{"error_threshold_percentage":50}`, CodeBreakerThreshold, "m.error_threshold_percentage"},
		{"threshold negative", `{"error_threshold_percentage":-0.1}`, CodeBreakerThreshold, "m.error_threshold_percentage"},
		{"tripped zero", `{"tripped_duration":0}`, CodeBreakerTripped, "m.tripped_duration"},
		{"window negative", `{"rolling_window":-1}`, CodeBreakerWindow, "m.rolling_window"},
		{"buckets zero", `{"num_buckets":0}`, CodeBreakerBuckets, "m.num_buckets"},
		{"buckets 129", `{"num_buckets":129}`, CodeBreakerBuckets, "m.num_buckets"},
		{"volume negative", `{"volume_threshold":-1}`, api.CodeBadFieldValue, "m.volume_threshold"},
	})
}

func sendgridKey(t *testing.T) string {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(der)
}

func TestWebhookVerification(t *testing.T) {
	for _, p := range Providers {
		body := `{"provider":"` + strings.ToUpper(p) + `","secret":"s3cr3t"}`
		switch p {
		case "sns":
			body = `{"provider":"SNS"}`
		case "sendgrid":
			body = `{"provider":"SendGrid","secret":"` + sendgridKey(t) + `"}`
		}
		w, err := decode[WebhookVerificationIn](t, body).Check("")
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		// Stored as given; the secret is write-only.
		if !strings.EqualFold(w.Provider, p) || w.Provider == p && p != "sendgrid" {
			t.Fatalf("provider stored as %q", w.Provider)
		}
		if b, _ := json.Marshal(w.JSON()); !strings.HasSuffix(string(b), `"secret":null}`) {
			t.Fatalf("rendered %s", b)
		}
	}
	runRefusals(t, WebhookVerificationIn.Check, []refusal{
		{"no provider", `{"secret":"x"}`, CodeNoProvider, "m.provider"},
		{"unknown provider", `{"provider":"myspace","secret":"x"}`, CodeUnknownProvider, "m.provider"},
		{"sns with secret", `{"provider":"sns","secret":"x"}`, CodeSNSSecret, "m.secret"},
		{"github without secret", `{"provider":"github"}`, CodeWebhookSecret, "m.secret"},
		{"github empty secret", `{"provider":"github","secret":""}`, CodeWebhookSecret, "m.secret"},
		{"secret too long", `{"provider":"github","secret":"` + rep("s", MaxWebhookSecretBytes+1) + `"}`, CodeWebhookSecretLong, "m.secret"},
		{"sendgrid not a key", `{"provider":"sendgrid","secret":"c2VjcmV0"}`, CodeSendGridKey, "m.secret"},
	})
}

func TestOAuth(t *testing.T) {
	accepted := map[string]string{
		"managed google": `{"provider":{"google":{"email_domains":["example.com"]}}}`,
		"own github app": `{"enabled":false,"options_passthrough":true,"cookie_prefix":"my.app","inactivity_timeout":3600,"maximum_duration":86400,"auth_check_interval":600,` +
			`"provider":{"github":{"client_id":"id","client_secret":"sec","scopes":["read:org","user:email"],"email_addresses":["a@example.com"],"email_domains":["xn--bcher-kva.example"],"teams":["acme/devs","1234"],"organizations":["acme"]}}}`,
	}
	for _, p := range OAuthProviders {
		accepted["managed "+p+" "] = `{"provider":{"` + p + `":{}}}`
	}
	for name, body := range accepted {
		o, err := decode[OAuthIn](t, body).Check("")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b, _ := json.Marshal(o.JSON()); bytes.Contains(b, []byte(`"sec"`)) {
			t.Fatalf("%s: the secret is rendered: %s", name, b)
		}
	}
	o, _ := decode[OAuthIn](t, accepted["own github app"]).Check("")
	hooktest.WantJSON(t, o.JSON(), `{"enabled":false,"provider":{"github":{"client_id":"id","client_secret":null,"scopes":["read:org","user:email"],"email_addresses":["a@example.com"],"email_domains":["xn--bcher-kva.example"],"teams":["acme/devs","1234"],"organizations":["acme"]},"facebook":null,"microsoft":null,"google":null,"linkedin":null,"gitlab":null,"twitch":null,"amazon":null},"options_passthrough":true,"cookie_prefix":"my.app","inactivity_timeout":3600,"maximum_duration":86400,"auth_check_interval":600}`)
	gh := func(extra string) string { return `{"provider":{"github":{` + extra + `}}}` }
	own := `"client_id":"id","client_secret":"s",`
	runRefusals(t, OAuthIn.Check, []refusal{
		{"no provider", `{}`, CodeOAuthNoProvider, "m.provider"},
		{"empty provider", `{"provider":{}}`, CodeOAuthNoProvider, "m.provider"},
		{"two providers", `{"provider":{"github":{},"google":{}}}`, CodeOAuthManyProviders, "m.provider"},
		{"id without secret", gh(`"client_id":"x"`), CodeOAuthClient, "m.provider.github.client_id"},
		{"secret without id", gh(`"client_secret":"x"`), CodeOAuthClient, "m.provider.github.client_id"},
		{"managed scopes", gh(`"scopes":["user"]`), CodeManagedScopes, "m.provider.github.scopes"},
		{"check interval short", `{"auth_check_interval":10,"provider":{"google":{}}}`, CodeAuthCheckShort, "m.auth_check_interval"},
		{"check interval long", `{"auth_check_interval":40000000,"provider":{"google":{}}}`, CodeAuthCheckLong, "m.auth_check_interval"},
		{"max duration long", `{"maximum_duration":40000000,"provider":{"google":{}}}`, CodeOAuthDurationLong, "m.maximum_duration"},
		{"inactivity long", `{"inactivity_timeout":40000000,"provider":{"google":{}}}`, CodeInactivityTooLong, "m.inactivity_timeout"},
		{"inactivity negative", `{"inactivity_timeout":-1,"provider":{"google":{}}}`, api.CodeBadFieldValue, "m.inactivity_timeout"},
		{"cookie prefix", `{"cookie_prefix":"a_b","provider":{"google":{}}}`, CodeCookiePrefix, "m.cookie_prefix"},
		{"cookie prefix long", `{"cookie_prefix":"` + rep("a", MaxCookiePrefixBytes+1) + `","provider":{"google":{}}}`, CodeOAuthCookieLong, "m.cookie_prefix"},
		{"client id long", gh(`"client_id":"` + rep("i", MaxClientIDBytes+1) + `","client_secret":"s"`), CodeOAuthClientIDLong, "m.provider.github.client_id"},
		{"client secret long", gh(`"client_id":"i","client_secret":"` + rep("s", MaxClientSecretBytes+1) + `"`), CodeOAuthSecretLong, "m.provider.github.client_secret"},
		{"bad email", gh(`"email_addresses":["not-an-email"]`), CodeOAuthEmail, "m.provider.github.email_addresses[0]"},
		{"named email", gh(`"email_addresses":["A <a@example.com>"]`), CodeOAuthEmail, "m.provider.github.email_addresses[0]"},
		{"uppercase email", gh(`"email_addresses":["A@example.com"]`), CodeEmailCase, "m.provider.github.email_addresses[0]"},
		{"email punycode", gh(`"email_addresses":["a@xn--a.example"]`), CodeEmailPunycode, "m.provider.github.email_addresses[0]"},
		{"duplicate email", gh(`"email_addresses":["a@example.com","a@example.com"]`), CodeDupEmail, "m.provider.github.email_addresses[1]"},
		{"empty email", gh(`"email_addresses":[""]`), CodeEmptyEmail, "m.provider.github.email_addresses[0]"},
		{"long email", gh(`"email_addresses":["` + rep("a", MaxEmailBytes) + `@x.com"]`), CodeEmailLong, "m.provider.github.email_addresses[0]"},
		{"bad domain", gh(`"email_domains":["localhost"]`), CodeOAuthDomain, "m.provider.github.email_domains[0]"},
		{"uppercase domain", gh(`"email_domains":["Example.com"]`), CodeDomainCase, "m.provider.github.email_domains[0]"},
		{"domain punycode", gh(`"email_domains":["xn--a.example"]`), CodeDomainPunycode, "m.provider.github.email_domains[0]"},
		{"duplicate domain", gh(`"email_domains":["a.com","a.com"]`), CodeDupDomain, "m.provider.github.email_domains[1]"},
		{"empty domain", gh(`"email_domains":[""]`), CodeEmptyDomain, "m.provider.github.email_domains[0]"},
		{"long domain", gh(`"email_domains":["` + rep("a", MaxDomainBytes) + `.com"]`), CodeDomainLong, "m.provider.github.email_domains[0]"},
		{"bad team", gh(`"teams":["acme"]`), CodeGitHubTeam, "m.provider.github.teams[0]"},
		{"duplicate team", gh(`"teams":["a/b","A/B"]`), CodeDupTeam, "m.provider.github.teams[1]"},
		{"empty team", gh(`"teams":[""]`), CodeEmptyTeam, "m.provider.github.teams[0]"},
		{"long team", gh(`"teams":["a/` + rep("b", MaxGitHubNameBytes) + `"]`), CodeTeamLong, "m.provider.github.teams[0]"},
		{"duplicate org", gh(`"organizations":["a","a"]`), CodeDupOrg, "m.provider.github.organizations[1]"},
		{"empty org", gh(`"organizations":[""]`), CodeEmptyOrg, "m.provider.github.organizations[0]"},
		{"long org", gh(`"organizations":["` + rep("o", MaxGitHubNameBytes+1) + `"]`), CodeOrgLong, "m.provider.github.organizations[0]"},
		{"too many scopes", gh(own + `"scopes":[` + strings.TrimSuffix(rep(`"s",`, MaxScopes+1), ",") + `]`), CodeTooManyScopes, "m.provider.github.scopes"},
		{"long scope", gh(own + `"scopes":["` + rep("s", MaxScopeBytes+1) + `"]`), CodeScopeLong, "m.provider.github.scopes[0]"},
		{"teams need read:org", gh(own + `"scopes":["user:email"],"teams":["1"]`), CodeOAuthMissingScope, "m.provider.github.scopes"},
		{"emails need user:email", gh(own + `"scopes":["read:org"],"email_domains":["a.com"]`), CodeOAuthMissingScope, "m.provider.github.scopes"},
		{"too many teams", gh(`"teams":[` + strings.TrimSuffix(rep(`"1",`, MaxGitHubTeams+1), ",") + `]`), CodeTooManyTeams, "m.provider.github.teams"},
		{"too many orgs", gh(`"organizations":[` + strings.TrimSuffix(rep(`"o",`, MaxGitHubOrgs+1), ",") + `]`), CodeTooManyOrgs, "m.provider.github.organizations"},
		{"too many emails", gh(`"email_addresses":[` + strings.TrimSuffix(rep(`"a@b.co",`, MaxOAuthEmails+1), ",") + `]`), CodeTooManyEmails, "m.provider.github.email_addresses"},
		{"too many domains", gh(`"email_domains":[` + strings.TrimSuffix(rep(`"b.co",`, MaxOAuthDomains+1), ",") + `]`), CodeTooManyDomains, "m.provider.github.email_domains"},
	})
	// Teams belong to GitHub only: strict decoding refuses them elsewhere.
	var in OAuthIn
	if err := api.DecodeBytes([]byte(`{"provider":{"google":{"teams":["a/b"]}}}`), &in); err == nil {
		t.Fatal("teams accepted on google")
	}
}

func TestOIDC(t *testing.T) {
	o, err := decode[OIDCIn](t, `{"options_passthrough":true,"cookie_prefix":"x.","inactivity_timeout":5,"maximum_duration":6,"issuer":"https://accounts.example.com","client_id":"cid","client_secret":"csec","scopes":["openid","email"]}`).Check("")
	if err != nil {
		t.Fatal(err)
	}
	hooktest.WantJSON(t, o.JSON(), `{"enabled":true,"options_passthrough":true,"cookie_prefix":"x.","inactivity_timeout":5,"maximum_duration":6,"issuer":"https://accounts.example.com","client_id":"cid","client_secret":null,"scopes":["openid","email"]}`)
	ok := `"issuer":"https://i.example","client_id":"c","client_secret":"s"`
	runRefusals(t, OIDCIn.Check, []refusal{
		{"no issuer", `{"client_id":"c","client_secret":"s"}`, CodeNoIssuer, "m.issuer"},
		{"issuer long", `{"issuer":"https://` + rep("a", MaxIssuerBytes) + `","client_id":"c","client_secret":"s"}`, CodeIssuerTooLong, "m.issuer"},
		{"issuer not a URL", `{"issuer":"accounts.example.com","client_id":"c","client_secret":"s"}`, api.CodeBadFieldValue, "m.issuer"},
		{"no client id", `{"issuer":"https://i.example","client_secret":"s"}`, CodeNoOIDCClientID, "m.client_id"},
		{"no client secret", `{"issuer":"https://i.example","client_id":"c"}`, CodeNoOIDCClientSecret, "m.client_secret"},
		{"client id long", `{"issuer":"https://i.example","client_id":"` + rep("c", MaxClientIDBytes+1) + `","client_secret":"s"}`, CodeOIDCClientIDLong, "m.client_id"},
		{"client secret long", `{"issuer":"https://i.example","client_id":"c","client_secret":"` + rep("s", MaxClientSecretBytes+1) + `"}`, CodeOIDCSecretLong, "m.client_secret"},
		{"too many scopes", `{` + ok + `,"scopes":[` + strings.TrimSuffix(rep(`"s",`, MaxScopes+1), ",") + `]}`, CodeOIDCTooManyScopes, "m.scopes"},
		{"scope long", `{` + ok + `,"scopes":["` + rep("s", MaxScopeBytes+1) + `"]}`, CodeOIDCScopeLong, "m.scopes[0]"},
		{"cookie long", `{` + ok + `,"cookie_prefix":"` + rep("c", MaxCookiePrefixBytes+1) + `"}`, CodeOIDCCookieLong, "m.cookie_prefix"},
		{"duration long", `{` + ok + `,"maximum_duration":40000000}`, CodeOIDCDurationLong, "m.maximum_duration"},
		{"inactivity long", `{` + ok + `,"inactivity_timeout":40000000}`, CodeInactivityTooLong, "m.inactivity_timeout"},
	})
}

func TestUserAgentFilter(t *testing.T) {
	u, err := decode[UserAgentFilterIn](t, `{"allow":["(?i)curl/.*"],"deny":["bot"]}`).Check("")
	if err != nil {
		t.Fatal(err)
	}
	hooktest.WantJSON(t, u.JSON(), `{"enabled":true,"allow":["(?i)curl/.*"],"deny":["bot"]}`)
	u, _ = decode[UserAgentFilterIn](t, `{}`).Check("")
	hooktest.WantJSON(t, u.JSON(), `{"enabled":true,"allow":[],"deny":[]}`)
	runRefusals(t, UserAgentFilterIn.Check, []refusal{
		{"invalid", `{"deny":["ok","(unclosed"]}`, api.CodeBadFieldValue, "m.deny[1]"},
		{"backreference", `{"allow":["(a)\\1"]}`, api.CodeBadFieldValue, "m.allow[0]"},
		{"empty", `{"allow":[""]}`, api.CodeBadFieldValue, "m.allow[0]"},
		{"too long", `{"allow":["` + rep("a", MaxUserAgentRegexBytes+1) + `"]}`, api.CodeBadFieldValue, "m.allow[0]"},
		{"too many", `{"deny":[` + strings.TrimSuffix(rep(`"a",`, MaxUserAgentRegexes+1), ",") + `]}`, api.CodeBadFieldValue, "m.deny"},
		{"expands too far", `{"allow":["((((a{100}){100}){100}){100})"]}`, api.CodeBadFieldValue, "m.allow[0]"},
	})
}

func TestRouteRules(t *testing.T) {
	for _, c := range []struct {
		name, matchType, match, code string
	}{
		{"exact", ExactPath, "/", ""},
		{"prefix", PathPrefix, "/blog/", ""},
		{"bad type", "regex", "/", CodeMatchType},
		{"empty type", "", "/", CodeMatchType},
		{"no match", ExactPath, "", CodeNoMatch},
		{"host form", PathPrefix, "example.com/blog", CodeMatchNotPath},
		{"query", PathPrefix, "/a?b", CodeMatchNotPath},
		{"space", PathPrefix, "/a b", CodeMatchNotPath},
		{"too long", PathPrefix, "/" + rep("a", MaxMatchBytes), CodeMatchTooLong},
	} {
		err := CheckMatchType("match_type", c.matchType)
		if err == nil {
			err = CheckMatch("match", c.match)
		}
		if c.code == "" && err != nil || c.code != "" && !strings.Contains(errCode(err), c.code) {
			t.Errorf("%s: %v, want %q", c.name, err, c.code)
		}
	}
	for _, c := range []struct {
		name, matchType, match string
		oauth, oidc, saml      bool
		code                   string
	}{
		{"none", ExactPath, "/x", false, false, false, ""},
		{"saml", PathPrefix, "/x", false, false, true, ""},
		{"oauth on /", PathPrefix, "/", true, false, false, ""},
		{"oauth elsewhere", PathPrefix, "/x", true, false, false, CodeOAuthNotRoot},
		{"two", PathPrefix, "/", true, true, false, CodeOneAuthModule},
		{"three", PathPrefix, "/", true, true, true, CodeOneAuthModule},
		{"not a path route", "host", "/", false, true, false, CodeAuthNotOnPathRoute},
	} {
		err := CheckAuth("oidc", c.matchType, c.match, c.oauth, c.oidc, c.saml)
		if c.code == "" && err != nil || c.code != "" && errCode(err) != c.code {
			t.Errorf("%s: %v, want %q", c.name, err, c.code)
		}
	}
}

func errCode(err error) string {
	if e, ok := api.AsError(err); ok {
		return e.Code
	}
	return ""
}

// Every secret is sealed before it is stored: the stored item holds no plaintext, and the
// sealed value opens only for the route it was sealed for.
func TestSecretsAreSealed(t *testing.T) {
	ctx := context.Background()
	sealer := seal.NewLocal(bytes.Repeat([]byte{7}, 32))
	aad := seal.ResourceContext("ac_1", "edghtsrt_1")
	const plain = "PLAINTEXT-SECRET-7f3a"
	w, _ := decode[WebhookVerificationIn](t, `{"provider":"github","secret":"`+plain+`"}`).Check("")
	o, _ := decode[OAuthIn](t, `{"provider":{"google":{"client_id":"i","client_secret":"`+plain+`"}}}`).Check("")
	d, _ := decode[OIDCIn](t, `{"issuer":"https://i.example","client_id":"c","client_secret":"`+plain+`"}`).Check("")
	for name, m := range map[string]Sealable{"webhook_verification": &w, "oauth": &o, "oidc": &d} {
		unsealed, err := attributevalue.MarshalMap(m)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(flatten(unsealed), plain) {
			t.Fatalf("%s: an unsealed secret reached the item", name)
		}
		if err := m.SealSecrets(ctx, sealer, aad); err != nil {
			t.Fatal(err)
		}
		item, err := attributevalue.MarshalMap(m)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(flatten(item), plain) {
			t.Fatalf("%s: plaintext in the stored item", name)
		}
	}
	got, err := w.Secret.Open(ctx, sealer, aad, "webhook_verification.secret")
	if err != nil || got != plain {
		t.Fatalf("open: %q, %v", got, err)
	}
	if _, err := w.Secret.Open(ctx, sealer, seal.ResourceContext("ac_1", "edghtsrt_2"), "webhook_verification.secret"); err == nil {
		t.Fatal("a secret opened on another route")
	}
	if _, err := w.Secret.Open(ctx, sealer, aad, "oidc.client_secret"); err == nil {
		t.Fatal("a secret opened as another member")
	}
}

// flatten renders an item for a plaintext search, bytes included.
func flatten(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
