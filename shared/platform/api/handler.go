package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"path"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/metrics"
)

// MaxBodyBytes caps every request body; larger bodies get a 400 before any work is done.
const MaxBodyBytes = 1 << 20

// Handler serves one operation. It returns the value to render as JSON (nil for 204) or an
// error; an *Error is rendered in the envelope, anything else as an opaque 500.
type Handler func(ctx context.Context, r *Request) (any, error)

// SourceFunc extracts the client's address; Lambda reads API Gateway's request context and the
// local server the connection's remote address. Forwarded-for headers are never consulted.
type SourceFunc func(*http.Request) netip.Addr

// RemoteAddrSource is the SourceFunc for a plain net/http server.
func RemoteAddrSource(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

// Mux is where routes are registered: an *http.ServeMux, or a recorder in tests that compare
// the routes in code with template.yaml.
type Mux interface {
	Handle(pattern string, h http.Handler)
}

// Front wraps the route mux with what happens before routing: CORS first (a request from a
// browser origin gets its headers, errors included, so a page can read them, and a preflight is
// answered here, see CORSMaxAge, for any path, as no route registers OPTIONS), then Canonical.
func (s *Server) Front(mux http.Handler) http.Handler {
	canonical := Canonical(mux)
	return http.HandlerFunc(func(w http.ResponseWriter, hr *http.Request) {
		if s.RateLimitPolicy != "" {
			w.Header().Set("RateLimit-Policy", s.RateLimitPolicy)
		}
		if cors(w, hr) {
			return
		}
		canonical.ServeHTTP(w, hr)
	})
}

// Canonical answers a request whose path is not canonical (".", ".." or empty segments, also
// when percent-encoded) with a 404 in the error envelope, and passes every other to h. An
// http.ServeMux would answer it with a redirect that keeps the method and has no envelope, and a
// client must never be sent on to another resource than the one it named, so every ServeMux
// that answers requests is behind Canonical (through Front for the families).
func Canonical(h http.Handler) http.Handler {
	notFound := (&Server{}).NotFound()
	return http.HandlerFunc(func(w http.ResponseWriter, hr *http.Request) {
		if !canonicalPath(hr.URL.Path) {
			notFound.ServeHTTP(w, hr)
			return
		}
		h.ServeHTTP(w, hr)
	})
}

// canonicalPath reports whether p is a path http.ServeMux serves as it is rather than
// redirecting to its cleaned form.
func canonicalPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	clean := path.Clean(p)
	if p[len(p)-1] == '/' && clean != "/" {
		clean += "/"
	}
	return clean == p
}

// NotFound answers requests no route matched, in the error envelope.
func (s *Server) NotFound() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, hr *http.Request) {
		op := ids.New(ids.Operation)
		w.Header().Set("Ngrok-Operation-Id", op)
		writeJSON(w, http.StatusNotFound, ErrNotFound.envelope(op))
	})
}

// Server turns Handlers into http.Handlers with the wire conventions applied.
//
// Requests: `Authorization: Bearer <api key token>` (missing 401 ERR_NGROK_200, malformed 201,
// not key-shaped 403 202, a key id instead of its token 207); `Ngrok-Version` absent or 2, else
// 400 217. Bodies are JSON, only on POST/PATCH/PUT, with Content-Type application/json (else
// 210), at most MaxBodyBytes, decoded by Decode. An absent member means "not supplied", never
// zero.
//
// Responses: create 201, get/list/update 200 with JSON, delete 204 with no body. Timestamps are
// RFC 3339 UTC with whole seconds and Z (Timestamp). `uri` members are absolute URLs on the host
// the request came to. A list or map member with nothing in it is [] or {}, never null (Slice,
// Map). Every response carries Ngrok-Operation-Id (op_…), also in error details and logs.
type Server struct {
	Log    *slog.Logger
	Source SourceFunc
	// RateLimitPolicy, when set, is the RateLimit-Policy field every response carries (package
	// ratelimit formats it); the RateLimit field with the account's remaining quota comes from
	// the request's rate-limit decision (Authentication.Admit), and a request over the limit is
	// 429 ERR_NGROK_226 with Retry-After, whatever else it would have answered.
	RateLimitPolicy string
	// Metrics receives a line per request refused for its rate limit or its credentials
	// (metrics.RateLimited, metrics.AuthFailure) and the usage line of every request whose
	// caller was verified (metrics.Usage); nil is standard output.
	Metrics *metrics.Emitter
	// Budget, when set, is how long every request may run, in place of the budget its route
	// was registered with (HandleWithin): test stacks set a longer one (see testkit). Zero
	// leaves each route's own.
	Budget time.Duration
	// Budgets are how long a request of each family (by its collection path, "/api_keys") may
	// run: the timeout of the function serving it, which the local server sets. On Lambda the
	// invocation's context carries that deadline, so a function leaves them unset.
	Budgets map[string]time.Duration
	// Auth makes each request's authentication state (package auth's Authenticator); nil
	// leaves requests without one, so no caller is ever verified and every handler's success
	// fails closed.
	Auth Authenticator
}

// authFailures are the codes of requests refused for missing, malformed or unknown credentials.
var authFailures = []string{CodeNoAuthHeader, CodeBadAuthHeader, CodeNotAKey, CodeUnknownKey, CodeAuthtokenAsKey, CodeKeyIDAsKey}

// countRefusal emits the metric of a request refused with code, if it is one that is counted.
func (s *Server) countRefusal(code string) {
	switch {
	case code == CodeRateLimited:
		s.Metrics.Emit(metrics.RateLimited, nil, 1)
	case slices.Contains(authFailures, code):
		s.Metrics.Emit(metrics.AuthFailure, map[string]string{metrics.DimCode: code}, 1)
	}
}

// ReplyMargin is the part of a request's deadline kept for answering: the handler's work (every
// SDK call and retry under it) must end this long before the function would be stopped, so a
// dependency too slow to answer gets a 503 rather than a request cut off without one.
const ReplyMargin = 500 * time.Millisecond

// deadline is the context a request runs under: the earlier of its own deadline and start plus
// its budget (Budget if set, else budget), less ReplyMargin.
func (s *Server) deadline(ctx context.Context, start time.Time, budget time.Duration) (context.Context, context.CancelFunc) {
	if s.Budget > 0 {
		budget = s.Budget
	}
	end, ok := ctx.Deadline()
	if budget > 0 && (!ok || start.Add(budget).Before(end)) {
		end, ok = start.Add(budget), true
	}
	if !ok {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, end.Add(-ReplyMargin))
}

// Handle returns an http.Handler that runs h and writes status on success.
func (s *Server) Handle(status int, h Handler) http.Handler { return s.HandleWithin("", 0, status, h) }

// HandleWithin is Handle for a route of family (its collection path, "/api_keys") whose request
// may run budget: the Timeout of the function serving it in template.yaml
// (resource.Descriptor.Register passes both, from Budgets). On Lambda the invocation's context
// carries the same deadline; the local server has only this. Zero leaves the request's own deadline, if
// any. Once answered, a request whose caller was verified has its usage line written (see
// usage).
func (s *Server) HandleWithin(family string, budget time.Duration, status int, h Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, hr *http.Request) {
		start := time.Now()
		r := &Request{HTTP: hr, OpID: ids.New(ids.Operation), headers: w.Header()}
		if s.Auth != nil {
			r.auth = s.Auth.Session(r)
		}
		tally := &r.tally
		w.Header().Set("Ngrok-Operation-Id", r.OpID)
		if s.Source != nil {
			r.Source = s.Source(hr)
		} else {
			r.Source = RemoteAddrSource(hr)
		}
		ctx, cancel := s.deadline(metrics.WithTally(hr.Context(), tally), start, budget)
		v, err := s.serve(ctx, r, h)
		cancel()
		// A request over its account's limit is a 429 whatever else went wrong: nothing was
		// released or committed, as reads and commits wait for the decision
		// (Authentication.Admit). Settling here also puts the RateLimit field on responses that
		// never reached one.
		if aerr := r.admit(); aerr != nil {
			v, err = nil, aerr
		}
		code := status
		if err != nil {
			e, ok := AsError(err)
			if !ok {
				s.logger().Error("request failed", "op", r.OpID, "method", hr.Method, "path", hr.URL.Path, "err", err.Error())
				e = internal
			}
			code = e.Status
			s.countRefusal(e.Code)
			e.setRetryAfter(w.Header())
			writeJSON(w, code, e.envelope(r.OpID))
		} else if v == nil {
			w.WriteHeader(http.StatusNoContent)
			code = http.StatusNoContent
		} else {
			writeJSON(w, status, v)
		}
		s.usage(r, family, code, tally)
		s.logRequest(hr.Context(), r.OpID, hr, code, time.Since(start))
	})
}

// logRequest writes a request's access log line. The record is made here without the caller's
// program counter, which Logger.LogAttrs would find by walking the stack: no handler of the
// service logs the source. Nothing is formatted when the level is off.
func (s *Server) logRequest(ctx context.Context, op string, hr *http.Request, status int, took time.Duration) {
	h := s.logger().Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	rec := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
	rec.AddAttrs(slog.String("op", op), slog.String("method", hr.Method), slog.String("path", hr.URL.Path),
		slog.Int("status", status), slog.Int64("ms", took.Milliseconds()))
	_ = h.Handle(ctx, rec)
}

// usage writes the usage line of a request answered with code: its family, status, whether it
// committed a change, the resources it created less those it deleted and the DynamoDB capacity
// its calls consumed (tally), under its caller's account. A request whose caller was not
// verified has none: an unverified token names no account that can be held to it (anyone may
// send one), and such a request spends nothing of the account's either (its rate-limit count
// is given back).
func (s *Server) usage(r *Request, family string, code int, tally *metrics.Tally) {
	c := r.Caller()
	if !r.verified() || c == nil || c.AccountID == "" {
		return
	}
	u := metrics.Usage{Account: c.AccountID, Family: strings.TrimPrefix(family, "/"), Status: code}
	tally.Fill(&u)
	s.Metrics.EmitUsage(u)
}

func (s *Server) logger() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// serve applies the request checks every operation shares, then runs h. A panic becomes an
// opaque 500; a handler that returns success without the store having verified the caller is
// a programming error and fails closed.
func (s *Server) serve(ctx context.Context, r *Request, h Handler) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.logger().Error("panic", "op", r.OpID, "panic", p, "stack", string(debug.Stack()))
			v, err = nil, internal
		}
	}()
	if err := checkVersion(r.HTTP.Header.Get("Ngrok-Version")); err != nil {
		return nil, err
	}
	tok, aerr := bearerToken(r.HTTP.Header.Values("Authorization"))
	if aerr != nil {
		return nil, aerr
	}
	r.Token = tok
	if err := readBody(r); err != nil {
		return nil, err
	}
	ctx = context.WithValue(ctx, requestKey{}, r)
	v, err = h(ctx, r)
	if err == nil && !r.verified() {
		return nil, errors.New("api: handler succeeded without verifying the caller")
	}
	return v, err
}

func checkVersion(v string) *Error {
	if v == "" || v == "2" {
		return nil
	}
	return BadRequest(CodeBadVersion, "Ngrok-Version", "unsupported Ngrok-Version %q: only version 2 is supported", v)
}

func readBody(r *Request) *Error {
	hr := r.HTTP
	switch hr.Method {
	case http.MethodPost, http.MethodPatch, http.MethodPut:
	default:
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(hr.Body, MaxBodyBytes+1))
	if err != nil {
		return BadRequest(CodeUnparseableBody, "body", "the request body could not be read")
	}
	if len(b) > MaxBodyBytes {
		return BadRequest(CodeBodyTooLarge, "body", "the request body exceeds the limit of %d bytes", MaxBodyBytes)
	}
	if len(bytes.TrimSpace(b)) > 0 {
		ct := hr.Header.Get("Content-Type")
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return BadRequest(CodeContentType, "Content-Type", "the request body must be sent with Content-Type: application/json, not %q", ct)
		}
	}
	r.Body = b
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(internal.envelope(w.Header().Get("Ngrok-Operation-Id")))
		status = internal.Status
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}
