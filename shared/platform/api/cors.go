package api

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"tunnelapi/shared/platform/ids"
)

// CORS, as the platform answers browsers: the request's origin is echoed (any origin: the API
// authenticates with a bearer token, never with cookies, so a page gains nothing its caller
// did not hand it), credentials are allowed, and a preflight may be cached for CORSMaxAge.
const CORSMaxAge = 10 * time.Minute

// Methods and headers a preflight allows: every method a route uses, and the request headers
// the clients send. Responses expose the headers a client may read besides the simple ones.
const (
	corsAllowMethods  = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
	corsAllowHeaders  = "Authorization, Content-Type, Ngrok-Version, Idempotency-Key"
	corsExposeHeaders = "Ngrok-Operation-Id, Retry-After, RateLimit, RateLimit-Policy"
)

// cors adds the CORS response headers for a request from a browser origin and reports whether
// the request is a preflight, which it has then answered in full (204, no body, no
// authentication: browsers never send credentials on a preflight).
func cors(w http.ResponseWriter, hr *http.Request) (answered bool) {
	origin := hr.Header.Get("Origin")
	if !validOrigin(origin) {
		return false
	}
	h := w.Header()
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Credentials", "true")
	if hr.Method != http.MethodOptions || hr.Header.Get("Access-Control-Request-Method") == "" {
		h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		return false
	}
	h.Add("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers")
	h.Set("Access-Control-Allow-Methods", corsAllowMethods)
	allow := corsAllowHeaders
	// Echoing what the browser asks for keeps a client that adds a header of its own working;
	// only header names are echoed. (API Gateway splits the list into values at its commas.)
	if names := headerNames(strings.Join(hr.Header.Values("Access-Control-Request-Headers"), ",")); names != nil {
		allow = strings.Join(names, ", ")
	}
	h.Set("Access-Control-Allow-Headers", allow)
	h.Set("Access-Control-Max-Age", strconv.Itoa(int(CORSMaxAge/time.Second)))
	h.Set("Ngrok-Operation-Id", ids.New(ids.Operation))
	w.WriteHeader(http.StatusNoContent)
	return true
}

// validOrigin reports whether o is a serialized origin (scheme://host[:port]) worth echoing.
func validOrigin(o string) bool {
	if o == "" || len(o) > 512 {
		return false
	}
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" &&
		u.Path == "" && u.RawQuery == "" && u.Fragment == "" && u.User == nil && !u.ForceQuery &&
		o == u.Scheme+"://"+u.Host
}

// headerNames splits a comma-separated list of HTTP header names; nil when it is empty or
// anything in it is not a header name.
func headerNames(s string) []string {
	if len(s) > 1024 {
		return nil
	}
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		for i := 0; i < len(part); i++ {
			c := part[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
				return nil
			}
		}
		out = append(out, part)
	}
	return out
}
