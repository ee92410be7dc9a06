package iprestrict

import (
	"net/netip"
	"strings"

	"tunnelapi/shared/platform/api"
)

// Error codes of CIDR validation.
const (
	CodeInvalidCIDR   = "ERR_NGROK_1406"
	CodeNotNormalised = "ERR_NGROK_1409"
	CodeMissingMask   = "ERR_NGROK_1413"
)

// ParseCIDR validates an IPv4 or IPv6 CIDR as a rule's cidr field: a mask is required (1413),
// the address must be the network address (1409, naming the normalised form) and anything else
// unparseable is 1406. The returned prefix prints in canonical form (IPv6 lowercased and
// compressed), which is what is stored.
func ParseCIDR(field, s string) (netip.Prefix, error) {
	if s == "" {
		return netip.Prefix{}, api.BadRequest(CodeInvalidCIDR, field, "%s must be an IPv4 or IPv6 CIDR such as 192.0.2.0/24 or 2001:db8::/32", field)
	}
	addr, _, hasMask := strings.Cut(s, "/")
	if !hasMask {
		if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
			return netip.Prefix{}, api.BadRequest(CodeMissingMask, field,
				"%s %s has no mask: write it as %s/%d for this single address", field, api.Describe(s), a.String(), a.BitLen())
		}
		return netip.Prefix{}, api.BadRequest(CodeInvalidCIDR, field, "%s %s is not a CIDR such as 192.0.2.0/24 or 2001:db8::/32", field, api.Describe(s))
	}
	p, err := netip.ParsePrefix(s)
	if err != nil || strings.Contains(addr, "%") {
		return netip.Prefix{}, api.BadRequest(CodeInvalidCIDR, field, "%s %s is not a valid CIDR: an IPv4 or IPv6 address, '/', and a mask length (0-32 for IPv4, 0-128 for IPv6)", field, api.Describe(s))
	}
	if m := p.Masked(); m != p {
		return netip.Prefix{}, api.BadRequest(CodeNotNormalised, field,
			"%s %s has host bits set: its normalised form is %s", field, api.Describe(s), m.String())
	}
	return p, nil
}
