package api

import (
	"context"
	"net/http"
	"net/netip"
	"strings"

	"tunnelapi/shared/platform/metrics"
)

// Caller is who a request acts as once its bearer token has been verified.
type Caller struct {
	AccountID    string
	PrincipalID  string // usr_… or bot_…
	Admin        bool
	CredentialID string // the ak_… the token belongs to
	TokenHash    string
	Subject      string // a human-readable name of the principal, for audit events
}

// Request is what a handler sees: the HTTP request, its body (already size-capped), its
// operation id, and its authentication state (Auth): the caller its bearer token resolves to,
// trusted once verified.
type Request struct {
	HTTP   *http.Request
	Body   []byte
	OpID   string
	Token  string
	Source netip.Addr

	headers http.Header
	auth    Authentication
	// tally is what the request's DynamoDB calls consumed, for its usage line: held here so
	// that a request is one allocation, not two.
	tally metrics.Tally
}

// Authentication is what the request wrapper and handlers read of a request's authentication
// state. Package auth owns that state (auth.Session) and changes it; this package only reads
// it: the caller for handlers and audit events, whether it was verified for the usage line and
// the fail-closed check, and the rate-limit decision for the 429.
type Authentication interface {
	// Caller is who the request's token resolves to, nil before it is resolved: trusted only
	// once Verified.
	Caller() *Caller
	// Verified reports whether the store has confirmed the caller in this request, in the same
	// round trip as the data it guards.
	Verified() bool
	// Admit waits for the request's rate-limit decision and returns its refusal (a 429 *Error),
	// or nil when admitted or when no decision is pending. Nothing read may be released and
	// nothing written before it returns nil.
	Admit() error
}

// Authenticator makes the authentication state of each request a Server serves; package
// auth's Authenticator is the one implementation.
type Authenticator interface {
	Session(r *Request) Authentication
}

type requestKey struct{}

// FromContext returns the Request being served on ctx, if any.
func FromContext(ctx context.Context) (*Request, bool) {
	r, ok := ctx.Value(requestKey{}).(*Request)
	return r, ok
}

// RequestAs returns a request for hr acting as c, a caller already trusted, outside any served
// request: a worker recording a change as the request that asked for it (audit.OnBehalf). Its
// caller is fixed: nothing resolves or rate-limits it, and it is never Verified, as no store
// confirms it in this request.
func RequestAs(hr *http.Request, c Caller) *Request {
	return &Request{HTTP: hr, auth: fixedCaller{&c}}
}

// fixedCaller is the authentication state of a RequestAs request.
type fixedCaller struct{ c *Caller }

func (f fixedCaller) Caller() *Caller { return f.c }
func (fixedCaller) Verified() bool    { return false }
func (fixedCaller) Admit() error      { return nil }

// Auth returns r's authentication state: made by its Server's Authenticator (package auth
// reaches it with auth.Of), fixed by RequestAs, or nil for a request made otherwise.
func (r *Request) Auth() Authentication { return r.auth }

// Caller returns who r's token resolves to (Authentication.Caller), nil before it is resolved
// or without authentication state: trusted only once the store verified it.
func (r *Request) Caller() *Caller {
	if r.auth == nil {
		return nil
	}
	return r.auth.Caller()
}

// verified reports whether r's caller was verified in this request.
func (r *Request) verified() bool { return r.auth != nil && r.auth.Verified() }

// admit waits for r's rate-limit decision and returns its refusal, if any.
func (r *Request) admit() error {
	if r.auth == nil {
		return nil
	}
	return r.auth.Admit()
}

// Header returns response headers a handler may add to (for example an IP-restriction warning).
func (r *Request) Header() http.Header { return r.headers }

// PathValue returns a path wildcard of the route pattern.
func (r *Request) PathValue(name string) string { return r.HTTP.PathValue(name) }

// BaseURL is the scheme and host the request came to; URIs are built on it so that clients
// can follow them verbatim whatever the deployment's host.
func (r *Request) BaseURL() string { return r.scheme() + "://" + r.HTTP.Host }

// URI returns the absolute URL of path on the request's own host, made in one allocation (every
// rendered resource has one).
func (r *Request) URI(path string) string { return r.scheme() + "://" + r.HTTP.Host + path }

// scheme is the scheme of BaseURL.
func (r *Request) scheme() string {
	if p := r.HTTP.Header.Get("X-Forwarded-Proto"); p == "http" || p == "https" {
		return p
	}
	if r.HTTP.TLS == nil && isLoopbackHost(r.HTTP.Host) {
		return "http"
	}
	return "https"
}

func isLoopbackHost(host string) bool {
	h := host
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.HasSuffix(h, "]") {
		h = h[:i]
	}
	h = strings.Trim(h, "[]")
	if h == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.IsLoopback()
}

// bearerToken extracts the API key token from the Authorization header's values, applying the
// platform's header checks (200 missing, 201 unparseable, 202 not key-shaped, 206/207 wrong kind
// of secret). More than one Authorization header is a 400: a server that picked one would
// disagree with API Gateway, which joins them into one value with commas (a comma is never part
// of a token, so a joined value is recognised as such).
func bearerToken(values []string) (string, *Error) {
	if len(values) > 1 || len(values) == 1 && strings.Contains(values[0], ",") {
		return "", &Error{Status: http.StatusBadRequest, Code: CodeBadAuthHeader,
			Msg: "exactly one Authorization header is allowed", Field: "Authorization"}
	}
	h := ""
	if len(values) == 1 {
		h = values[0]
	}
	if h == "" {
		return "", &Error{Status: http.StatusUnauthorized, Code: CodeNoAuthHeader,
			Msg: "Authorization header is required: 'Authorization: Bearer <api key>'", Field: "Authorization"}
	}
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return "", &Error{Status: http.StatusUnauthorized, Code: CodeBadAuthHeader,
			Msg: "Authorization header must have the form 'Bearer <api key>'", Field: "Authorization"}
	}
	tok = strings.TrimSpace(tok)
	if strings.HasPrefix(tok, "ak_") {
		return "", &Error{Status: http.StatusForbidden, Code: CodeKeyIDAsKey,
			Msg: "the bearer token is an API key id, not the API key's token", Field: "Authorization"}
	}
	if !TokenShaped(tok) {
		return "", &Error{Status: http.StatusForbidden, Code: CodeNotAKey,
			Msg: "the bearer token is not an API key token", Field: "Authorization"}
	}
	return tok, nil
}

// TokenShaped reports whether tok has the shape of this service's secrets: a 27-character
// KSUID, an underscore and 21 base62 characters.
func TokenShaped(tok string) bool {
	if len(tok) != 27+1+21 || tok[27] != '_' {
		return false
	}
	for i := 0; i < len(tok); i++ {
		if i == 27 {
			continue
		}
		c := tok[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
