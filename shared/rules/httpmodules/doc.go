// Package httpmodules validates the modules of an HTTPS edge route (request_headers,
// response_headers, compression, circuit_breaker, webhook_verification, oauth, oidc, saml,
// websocket_tcp_converter, user_agent_filter) and the route's own selector, and derives what the
// service computes for them (the SAML service provider's URLs, certificate and metadata).
//
// Each module has three forms: the request form (XIn, every member a pointer or a list so an
// absent member differs from a zero one), the stored form (X, DynamoDB attributes) that
// XIn.Check returns, and the response form (XJSON) that X.JSON renders. Check takes the field
// path of the module in the request ("" for a module PUT's body, "oauth" inside a route) and
// returns a 400 naming the offending member below it. `enabled` defaults to true.
//
// # Secrets
//
// Webhook, OAuth and OIDC client secrets and the SAML request signing key are write-only. A
// Secret holds the plaintext only in memory (it has no DynamoDB attribute, so an unsealed
// secret can never be stored); Sealable.SealSecrets seals it with the account's sealer, bound
// to the account, the route and the member, before the module is written. Responses render
// every secret as null.
//
// # Rules and codes (ERR_NGROK_<n>)
//
//   - Headers: names are HTTP tokens (7023) of at most MaxHeaderNameBytes (7105); added values
//     are valid field values (7024) of at most MaxHeaderValueBytes (7106); at most MaxHeaders
//     added and MaxHeaders removed (7015); one name added twice with different casing is 7069;
//     removing Host from a request needs a replacement in add (7164).
//   - Circuit breaker: tripped_duration > 0 (7016), rolling_window > 0 (7017), num_buckets
//     1–128 (7018), error_threshold_percentage 0.0–1.0 (7011), volume_threshold ≥ 0. Absent
//     members take the platform's defaults (DefaultCircuitBreaker).
//   - Webhook verification: provider one of Providers, case-insensitive, stored as given
//     (missing 7029, unknown 7030); sns refuses a secret (7026), every other provider requires
//     one (7027) of at most MaxWebhookSecretBytes (7154); sendgrid's is its base64 ECDSA public
//     verification key (7107).
//   - OAuth: exactly one provider (none 7037, several 7036); client_id and client_secret both or
//     neither (7033); scopes only with the account's own app (7034); every provider has a
//     managed app. Lists: empty entries (7051–7054), duplicates (7046–7049), too many
//     (7056–7058, 7060, 7061), too long (7139–7141, 7144, 7145); email addresses and domains
//     valid (7043, 7039), lowercase (7067, 7068), with valid punycode (7045, 7044); GitHub teams
//     are a numeric id or org/team (7040), and with the account's own app and its own scopes,
//     teams or organizations need read:org and email rules need user:email (7038).
//     cookie_prefix alphanumeric with periods (7042) of at most MaxCookiePrefixBytes (7136);
//     auth_check_interval 0 (the default) or MinAuthCheckInterval–MaxSessionSeconds (7035,
//     7158); maximum_duration at most MaxSessionSeconds (7161).
//   - OIDC: issuer required (7088), an absolute http(s) URL (215) of at most MaxIssuerBytes
//     (7087); client_id (7089, 7148) and client_secret (7090, 7149) required; scopes (7150,
//     7151); cookie_prefix (7042, 7153); maximum_duration (7162).
//   - SAML: idp_metadata required (7091), at most MaxIdPMetadataBytes (7080), parsed with
//     crewjam/saml as an IdP EntityDescriptor (or an EntitiesDescriptor holding one) that has an
//     IDPSSODescriptor with a single sign-on service (7083); nameid_format one of NameIDFormats;
//     authorized_groups non-empty names. The service provider's entity_id and metadata_url,
//     assertion_consumer_service_url and single_logout_url are on the route's edge's first
//     hostport (SPURLs); request_signing_certificate_pem is the certificate of an RSA key pair
//     generated for the route (NewSigningKey), whose private key is sealed.
//   - Every session module: inactivity_timeout at most one year (7092); integers are not
//     negative (215).
//   - User agent filter: allow and deny are RE2 regular expressions (215 naming the entry), at
//     most MaxUserAgentRegexes each of at most MaxUserAgentRegexBytes, so compiling them is
//     bounded; matching RE2 is linear in the input.
//   - Route: match_type exact_path or path_prefix (7130); match required (7123), a /path
//     (7131) of at most MaxMatchBytes (7135). At most one of oauth, oidc and saml (7079), only on
//     path routes (7134); oauth only on the route whose match is "/" (7127).
package httpmodules
