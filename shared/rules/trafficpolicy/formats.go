package trafficpolicy

import (
	"regexp"
	"strings"
	"sync"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/iprestrict"
)

// interpolation matches one ${…} (without nested braces) for the regular expression check;
// compiled on first use, not at package initialisation.
var interpolation = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{[^{}]*\}`) })

// regex checks an RE2 expression; interpolations are taken as a plain word, as the platform
// interpolates before it matches.
func (v *validator) regex(path, s string, interpolated bool) {
	if len(s) > MaxRegexBytes {
		v.failLimit(path, "MaxRegexBytes", "the regular expression is %d bytes; the limit is %d (MaxRegexBytes)", len(s), MaxRegexBytes)
		return
	}
	if v.spent(path) {
		return
	}
	if interpolated {
		s = interpolation().ReplaceAllString(s, "x")
	}
	if _, err := regexp.Compile(s); err != nil {
		v.fail(path, "not a valid regular expression (RE2): %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
}

func (v *validator) cidr(path, s string) {
	if _, err := iprestrict.ParseCIDR("cidr", s); err != nil {
		msg := err.Error()
		if e, ok := api.AsError(err); ok {
			msg = e.Msg
		}
		v.fail(path, "%s", msg)
	}
}

func (v *validator) ipPolicy(path, s string) {
	if !ids.Is(s, ids.IPPolicy) {
		v.fail(path, "%s is not an IP policy id (ipp_…)", api.Describe(s))
	}
}

// credential checks username:password (the first colon separates them) and the password's
// documented length.
func (v *validator) credential(path string, f *fieldRef, s string) {
	_, password, ok := strings.Cut(s, ":")
	if !ok {
		v.fail(path, "a credential is username:password; this one has no colon")
		return
	}
	n := len([]rune(password))
	if f.PasswordMinChars > 0 && n < f.PasswordMinChars {
		v.fail(path, "the password is %d characters; it needs at least %d", n, f.PasswordMinChars)
	} else if f.PasswordMaxChars > 0 && n > f.PasswordMaxChars {
		v.fail(path, "the password is %d characters; the limit is %d", n, f.PasswordMaxChars)
	}
}
