package httpmodules

import (
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/base64"
	"slices"
	"strings"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/seal"
)

// Providers are the webhook verification providers, lowercase.
var Providers = []string{
	"aftership", "airship", "alchemy", "sns", "autodesk", "bitbucket", "bolt", "box", "brex",
	"buildkite", "calendly", "castle", "chargify", "circleci", "clearbit", "clerk", "coinbase",
	"contentful", "docusign", "dropbox", "facebook_graph_api", "facebook_messenger", "frameio",
	"github", "gitlab", "go1", "heroku", "hostedhooks", "hubspot", "graphcms", "instagram",
	"intercom", "jira", "launch_darkly", "linear", "mailchimp", "mailgun", "microsoft_teams",
	"modern_treasury", "mongodb", "mux", "orb", "orbit", "pagerduty", "pinwheel", "plivo",
	"pusher", "sendgrid", "sentry", "shopify", "signal_sciences", "slack", "sonatype", "square",
	"stripe", "svix", "terraform", "tiktok", "trendmicro_conformity", "twilio", "twitter",
	"typeform", "vmware", "webex", "whatsapp", "worldline", "xero", "zendesk", "zoom",
}

// WebhookVerification is a stored webhook_verification module; the provider is stored as given.
type WebhookVerification struct {
	Enabled  bool   `dynamodbav:"enabled"`
	Provider string `dynamodbav:"provider"`
	Secret   Secret `dynamodbav:"secret"`
}

// WebhookVerificationIn is the request form of WebhookVerification.
type WebhookVerificationIn struct {
	Enabled  *bool   `json:"enabled"`
	Provider *string `json:"provider"`
	Secret   *string `json:"secret"`
}

// WebhookVerificationJSON is the response form: the secret is write-only, always null.
type WebhookVerificationJSON struct {
	Enabled  bool    `json:"enabled"`
	Provider string  `json:"provider"`
	Secret   *string `json:"secret"`
}

// Check validates a webhook_verification module: provider one of Providers, case-insensitive,
// stored as given (missing 7029, unknown 7030); sns refuses a secret (7026), every other
// provider requires one (7027) of at most MaxWebhookSecretBytes (7154); sendgrid's is its base64
// ECDSA public verification key (7107).
func (in WebhookVerificationIn) Check(field string) (WebhookVerification, error) {
	w := WebhookVerification{Enabled: enabled(in.Enabled)}
	pf, sf := path(field, "provider"), path(field, "secret")
	if in.Provider == nil || *in.Provider == "" {
		return w, api.BadRequest(CodeNoProvider, pf, "%s is required: one of %s", pf, strings.Join(Providers, ", "))
	}
	w.Provider = *in.Provider
	p := strings.ToLower(w.Provider)
	if !slices.Contains(Providers, p) {
		return w, api.BadRequest(CodeUnknownProvider, pf, "%s %s is not a supported provider", pf, api.Describe(w.Provider))
	}
	secret := ""
	if in.Secret != nil {
		secret = *in.Secret
	}
	switch {
	case p == "sns" && secret != "":
		return w, api.BadRequest(CodeSNSSecret, sf, "the sns provider takes no %s: messages are verified with AWS's signing certificate", sf)
	case p != "sns" && secret == "":
		return w, api.BadRequest(CodeWebhookSecret, sf, "%s is required for provider %s", sf, api.Describe(w.Provider))
	case len(secret) > MaxWebhookSecretBytes:
		return w, api.BadRequest(CodeWebhookSecretLong, sf, "%s is %d bytes long; the limit is %d", sf, len(secret), MaxWebhookSecretBytes)
	case p == "sendgrid" && !ecdsaPublicKey(secret):
		return w, api.BadRequest(CodeSendGridKey, sf, "%s for sendgrid must be its verification key: a base64 ECDSA public key", sf)
	}
	w.Secret.Plain = secret
	return w, nil
}

// ecdsaPublicKey reports whether s is a base64 DER (PKIX) ECDSA public key, the form of
// SendGrid's signed event webhook verification key.
func ecdsaPublicKey(s string) bool {
	der, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return false
	}
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return false
	}
	_, ok := k.(*ecdsa.PublicKey)
	return ok
}

// SealSecrets seals the secret.
func (w *WebhookVerification) SealSecrets(ctx context.Context, s seal.Sealer, aad map[string]string) error {
	return w.Secret.seal(ctx, s, aad, "webhook_verification.secret")
}

// JSON returns w's response form.
func (w WebhookVerification) JSON() *WebhookVerificationJSON {
	return &WebhookVerificationJSON{Enabled: w.Enabled, Provider: w.Provider}
}
