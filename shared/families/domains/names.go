package domains

import (
	"strings"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"

	"tunnelapi/shared/platform/api"
)

// Error codes of domain names, shared by reserved domains and agent ingresses.
const (
	CodeWildcardNotLeft   = "ERR_NGROK_402"
	CodeWildcardLabel     = "ERR_NGROK_403"
	CodeServiceZone       = "ERR_NGROK_404"
	CodeInvalidChar       = "ERR_NGROK_406"
	CodeBadLabelStart     = "ERR_NGROK_407"
	CodeBadEnd            = "ERR_NGROK_408"
	CodeDoubleDot         = "ERR_NGROK_409"
	CodeHyphens34         = "ERR_NGROK_410"
	CodeNonPublicTLD      = "ERR_NGROK_411"
	CodeWildcardSuffix    = "ERR_NGROK_416"
	CodeTooLong           = "ERR_NGROK_423"
	CodeBadPunycode       = "ERR_NGROK_429"
	CodeUnderscore        = "ERR_NGROK_438"
	CodeNotFullyQualified = "ERR_NGROK_448"
)

// maxNameBytes is the longest domain name DNS carries; maxLabelBytes its longest label.
const (
	maxNameBytes  = 253
	maxLabelBytes = 63
)

// Name is a checked domain name: lowercase, without a trailing dot, its leftmost label "*" when
// it is a wildcard.
type Name string

// Wildcard reports whether the name is a wildcard (*.example.com).
func (n Name) Wildcard() bool { return strings.HasPrefix(string(n), "*.") }

// Under reports whether the name is parent or a name below it.
func (n Name) Under(parent string) bool {
	return string(n) == parent || strings.HasSuffix(string(n), "."+parent)
}

// nameError is the 400 with code naming field.
func nameError(code, field, format string, args ...any) error {
	return api.BadRequest(code, field, format, args...)
}

// ParseName checks s as a name to reserve (wildcards allowed when wildcard is set) and returns
// it lowercased. Each rule has the platform's code: characters (406, underscores 438), '..' (409),
// labels starting (407) or ending (408) badly, '--' at positions 3-4 outside 'xn--' (410),
// invalid punycode (429), length (423), a single label or a bare public suffix (448), a top-level
// domain not on the public list (411), '*' elsewhere than as the whole leftmost label (402, 403),
// and a wildcard over a whole public suffix (416).
func ParseName(field, s string, wildcard bool) (Name, error) {
	d := strings.ToLower(s)
	if d == "" {
		return "", nameError(CodeNotFullyQualified, field, "%s is required, such as app.example.com", field)
	}
	if len(d) > maxNameBytes {
		return "", nameError(CodeTooLong, field, "%s is %d bytes long; the limit is %d", field, len(d), maxNameBytes)
	}
	for _, c := range d {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '.', c == '*':
		case c == '_':
			return "", nameError(CodeUnderscore, field, "%s %s may not contain underscores", field, api.Describe(s))
		default:
			return "", nameError(CodeInvalidChar, field, "%s %s contains %q; only letters, digits, '-' and '.' are allowed (non-ASCII names in their xn-- form)", field, api.Describe(s), c)
		}
	}
	if strings.Contains(d, "..") {
		return "", nameError(CodeDoubleDot, field, "%s %s contains '..'", field, api.Describe(s))
	}
	labels := strings.Split(d, ".")
	if len(labels) < 2 {
		return "", nameError(CodeNotFullyQualified, field, "%s %s is not fully qualified: it needs a domain such as %s.example.com", field, api.Describe(s), d)
	}
	for i, l := range labels {
		switch {
		case l == "" && i == 0:
			return "", nameError(CodeBadLabelStart, field, "%s %s starts with '.'", field, api.Describe(s))
		case l == "":
			return "", nameError(CodeBadEnd, field, "%s %s ends with '.'", field, api.Describe(s))
		case strings.Contains(l, "*"):
			if i != 0 {
				return "", nameError(CodeWildcardNotLeft, field, "%s %s: only the leftmost label may be '*'", field, api.Describe(s))
			}
			if l != "*" {
				return "", nameError(CodeWildcardLabel, field, "%s %s: a wildcard's first label must be exactly '*'", field, api.Describe(s))
			}
			if !wildcard {
				return "", nameError(CodeInvalidChar, field, "%s %s: wildcards are not allowed here", field, api.Describe(s))
			}
		case len(l) > maxLabelBytes:
			return "", nameError(CodeTooLong, field, "%s %s has a label of %d bytes; the limit is %d", field, api.Describe(s), len(l), maxLabelBytes)
		case l[0] == '-':
			return "", nameError(CodeBadLabelStart, field, "%s %s has a label starting with '-'", field, api.Describe(s))
		case l[len(l)-1] == '-':
			return "", nameError(CodeBadEnd, field, "%s %s has a label ending with '-'", field, api.Describe(s))
		case len(l) >= 4 && l[2:4] == "--" && !strings.HasPrefix(l, "xn--"):
			return "", nameError(CodeHyphens34, field, "%s %s has '--' at positions 3-4 of label %q, which only 'xn--' may", field, api.Describe(s), l)
		case strings.HasPrefix(l, "xn--"):
			if u, err := idna.Registration.ToUnicode(l); err != nil || u == "" || u == l {
				return "", nameError(CodeBadPunycode, field, "%s %s: label %q is not valid punycode", field, api.Describe(s), l)
			}
		}
	}
	tld := labels[len(labels)-1]
	if suffix, icann := publicsuffix.PublicSuffix(tld); !icann || suffix != tld {
		return "", nameError(CodeNonPublicTLD, field, "%s %s is not on a public top-level domain", field, api.Describe(s))
	}
	bare := strings.TrimPrefix(d, "*.")
	if suffix, _ := publicsuffix.PublicSuffix(bare); suffix == bare {
		if labels[0] == "*" {
			return "", nameError(CodeWildcardSuffix, field, "%s %s would cover the whole public suffix %s", field, api.Describe(s), bare)
		}
		return "", nameError(CodeNotFullyQualified, field, "%s %s is a public suffix, not a name under one", field, api.Describe(s))
	}
	return Name(d), nil
}
