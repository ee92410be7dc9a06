package httpmodules

import (
	"strings"

	"tunnelapi/shared/platform/api"
)

// Match types of a route.
const (
	ExactPath  = "exact_path"
	PathPrefix = "path_prefix"
)

// CheckMatchType validates a route's match_type: exact_path or path_prefix (7130).
func CheckMatchType(field, t string) error {
	if t != ExactPath && t != PathPrefix {
		return api.BadRequest(CodeMatchType, field, `%s must be "exact_path" or "path_prefix"`, field)
	}
	return nil
}

// CheckMatch validates a route's match: required (7123), a path beginning with "/" (7131), of
// visible ASCII without a query or fragment, of at most MaxMatchBytes (7135).
func CheckMatch(field, m string) error {
	switch {
	case m == "":
		return api.BadRequest(CodeNoMatch, field, "%s is required: the path the route selects, such as /blog", field)
	case len(m) > MaxMatchBytes:
		return api.BadRequest(CodeMatchTooLong, field, "%s is %d bytes long; the limit is %d", field, len(m), MaxMatchBytes)
	case m[0] != '/' || strings.ContainsAny(m, "?#") || !visibleASCII(m):
		return api.BadRequest(CodeMatchNotPath, field, "%s %s must be a /path form without query or fragment", field, api.Describe(m))
	}
	return nil
}

func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// CheckAuth validates the authentication modules a route would have: at most one of oauth,
// oidc and saml (7079; field names the one being set), only on a path route (7134), and oauth
// only on the route whose match is "/" (7127).
func CheckAuth(field, matchType, match string, oauth, oidc, saml bool) error {
	n := 0
	for _, b := range []bool{oauth, oidc, saml} {
		if b {
			n++
		}
	}
	switch {
	case n == 0:
		return nil
	case n > 1:
		return api.BadRequest(CodeOneAuthModule, field, "a route may have only one of oauth, oidc and saml; delete the other first")
	case matchType != ExactPath && matchType != PathPrefix:
		return api.BadRequest(CodeAuthNotOnPathRoute, field, "oauth, oidc and saml are allowed only on exact_path and path_prefix routes")
	case oauth && match != "/":
		return api.BadRequest(CodeOAuthNotRoot, field, "oauth is allowed only on the route whose match is \"/\"")
	}
	return nil
}
