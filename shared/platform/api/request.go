package api

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
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
// operation id, and the caller its bearer token resolves to (trusted once verified).
type Request struct {
	HTTP   *http.Request
	Body   []byte
	OpID   string
	Token  string
	Source netip.Addr

	caller    *Caller
	verified  bool
	headers   http.Header
	account   AccountState
	admission Admission
}

// Admission is a request's rate-limit decision, being made while the request runs: counting
// the request against its account starts as soon as the account is known and runs alongside
// the request's own reads. Package ratelimit implements it.
type Admission interface {
	// Settle waits for the decision, adds its RateLimit header fields to h and returns the
	// refusal (a 429 *Error) or nil. It may be called any number of times.
	Settle(h http.Header) *Error
	// Release gives the request's count back when it was admitted: its caller was refused
	// (an unknown or revoked key, a refused address), so it spends none of the account's
	// quota. It waits for the decision, removes the RateLimit field from h, and makes Settle
	// admit without fields from then on. It may be called any number of times.
	Release(h http.Header)
}

// AccountState is what authentication verified a request's caller against on the account item,
// kept for the rest of the request so that its writes condition on the same state. Only package
// auth sets it; the zero value means the account item has not been read in this request.
type AccountState struct {
	// Read is set once the caller was verified against the account item in this request.
	Read bool
	// Stale is set when a write found the account item changed since it was read: it must be
	// read (and the caller verified) again before the next write.
	Stale bool
	// Restriction is the version of the account's API IP restriction the request was checked
	// against; 0 means none.
	Restriction int64
}

type requestKey struct{}

// FromContext returns the Request being served on ctx, if any.
func FromContext(ctx context.Context) (*Request, bool) {
	r, ok := ctx.Value(requestKey{}).(*Request)
	return r, ok
}

// Caller returns the caller SetCaller recorded (nil before): trusted only once IsVerified.
func (r *Request) Caller() *Caller { return r.caller }

// SetCaller records the identity the token resolves to. It is not yet trusted: Verified marks
// the moment the store has confirmed it in the same round trip as the data it guards.
func (r *Request) SetCaller(c *Caller) { r.caller = c }

// Verified marks the caller as confirmed by a consistent read or transaction condition.
func (r *Request) Verified() { r.verified = true }

// IsVerified reports whether Verified was called during this request.
func (r *Request) IsVerified() bool { return r.verified }

// SetAccountState records the account state the caller was last verified against, so that
// writes condition on (and handlers derive writes from) the state the request was checked with.
func (r *Request) SetAccountState(s AccountState) { r.account = s }

// AccountState returns what SetAccountState recorded (the zero value before).
func (r *Request) AccountState() AccountState { return r.account }

// SetAdmission records the request's pending rate-limit decision (package auth does, once the
// caller's account is known).
func (r *Request) SetAdmission(a Admission) { r.admission = a }

// Admit waits for the request's rate-limit decision and returns its refusal, if any. Nothing
// read may be released and nothing written before it returns nil; without a decision pending
// (no limit, or no account known) it returns nil at once.
func (r *Request) Admit() error {
	if r.admission == nil {
		return nil
	}
	if e := r.admission.Settle(r.headers); e != nil {
		return e
	}
	return nil
}

// Uncount gives back the request's count against its account's rate limit (Admission.Release):
// package auth calls it when it refuses the caller, so that only verified, admitted callers
// spend an account's quota.
func (r *Request) Uncount() {
	if r.admission != nil {
		r.admission.Release(r.headers)
	}
}

// Header returns response headers a handler may add to (for example an IP-restriction warning).
func (r *Request) Header() http.Header { return r.headers }

// PathValue returns a path wildcard of the route pattern.
func (r *Request) PathValue(name string) string { return r.HTTP.PathValue(name) }

// BaseURL is the scheme and host the request came to; URIs are built on it so that clients
// can follow them verbatim whatever the deployment's host.
func (r *Request) BaseURL() string {
	scheme := "https"
	if p := r.HTTP.Header.Get("X-Forwarded-Proto"); p == "http" || p == "https" {
		scheme = p
	} else if r.HTTP.TLS == nil && isLoopbackHost(r.HTTP.Host) {
		scheme = "http"
	}
	return scheme + "://" + r.HTTP.Host
}

// URI returns the absolute URL of path on the request's own host.
func (r *Request) URI(path string) string { return r.BaseURL() + path }

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
