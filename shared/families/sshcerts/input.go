package sshcerts

import (
	"errors"
	"net/netip"
	"strings"
	"time"
	"unicode"

	"golang.org/x/crypto/ssh"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/rules/sshkey"
)

// Bounds on certificate contents: generous for real use, small enough that a request cannot make
// a certificate (or its item) unreasonably large.
const (
	maxPrincipals     = 256
	maxPrincipalBytes = 255
	maxListBytes      = 16 << 10 // all principals together; all extensions together
	maxExtensions     = 64
	maxOptionBytes    = 4096
	minRSABits        = 1024 // OpenSSH refuses smaller RSA keys
)

// ParsePublicKey parses one public key in authorized-keys form (sshkey.Parse) and returns it
// with its type name: rsa, ecdsa or ed25519. Missing is 1952; anything else that is not exactly
// one such key is 612.
func ParsePublicKey(text string) (ssh.PublicKey, string, error) {
	pub, typ, err := sshkey.Parse(text, minRSABits)
	switch {
	case errors.Is(err, sshkey.ErrMissing):
		return nil, "", api.BadRequest(CodePublicKeyMissing, "public_key", "public_key is required")
	case err != nil:
		return nil, "", api.BadRequest(CodeInvalidPublicKey, "public_key", "%s", err.Error())
	}
	return pub, typ, nil
}

// Principals validates a list of principals (user or host names): each non-empty, at most 255
// bytes, without whitespace, control characters or commas (which OpenSSH would split on).
func Principals(v *[]string) ([]string, error) {
	if v == nil {
		return []string{}, nil
	}
	if len(*v) > maxPrincipals {
		return nil, api.Invalid("principals", "principals has %d entries; at most %d are accepted", len(*v), maxPrincipals)
	}
	out := make([]string, 0, len(*v))
	total := 0
	for i, p := range *v {
		if total += len(p); total > maxListBytes {
			return nil, api.Invalid("principals", "principals are %d bytes or more together; the limit is %d bytes", total, maxListBytes)
		}
		if p == "" || len(p) > maxPrincipalBytes || strings.ContainsFunc(p, func(r rune) bool {
			return r == ',' || unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar
		}) {
			return nil, api.Invalid("principals", "principals[%d] %s must be 1 to %d bytes without whitespace, commas or control characters",
				i, api.Describe(p), maxPrincipalBytes)
		}
		out = append(out, p)
	}
	return out, nil
}

// CriticalOptions validates a user certificate's critical options: only force-command (a
// non-empty command) and source-address (a comma-separated list of addresses and normalised
// CIDRs), as OpenSSH refuses a certificate with any critical option it does not know.
func CriticalOptions(v *map[string]string) (map[string]string, error) {
	out := map[string]string{}
	if v == nil {
		return out, nil
	}
	for name, value := range *v {
		if len(value) > maxOptionBytes {
			return nil, api.Invalid("critical_options", "critical option %s is longer than %d bytes", api.Describe(name), maxOptionBytes)
		}
		switch name {
		case "force-command":
			if value == "" || strings.ContainsRune(value, 0) {
				return nil, api.Invalid("critical_options", "critical option force-command must be a non-empty command")
			}
		case "source-address":
			if err := sourceAddresses(value); err != nil {
				return nil, err
			}
		default:
			return nil, api.Invalid("critical_options", "critical option %s is not supported; only force-command and source-address are", api.Describe(name))
		}
		out[name] = value
	}
	return out, nil
}

func sourceAddresses(list string) error {
	if strings.TrimSpace(list) == "" {
		return api.Invalid("critical_options", "critical option source-address must list at least one address or CIDR")
	}
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if p, err := netip.ParsePrefix(s); err == nil {
			if p != p.Masked() {
				return api.Invalid("critical_options", "source-address %s has host bits set; use %s", api.Describe(s), p.Masked())
			}
			continue
		}
		if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
			continue
		}
		return api.Invalid("critical_options", "source-address %s is not an IP address or CIDR", api.Describe(s))
	}
	return nil
}

// standardExtensions are the extensions OpenSSH defines; each carries an empty value.
var standardExtensions = map[string]bool{
	"no-touch-required": true, "permit-X11-forwarding": true, "permit-agent-forwarding": true,
	"permit-port-forwarding": true, "permit-pty": true, "permit-user-rc": true, "verify-required": true,
}

// DefaultExtensions are a user certificate's extensions when the request names none.
func DefaultExtensions() map[string]string {
	return map[string]string{"permit-pty": "", "permit-user-rc": ""}
}

// Extensions validates a user certificate's extensions; absent means DefaultExtensions, a
// supplied map (even empty) is used as given.
func Extensions(v *map[string]string) (map[string]string, error) {
	if v == nil {
		return DefaultExtensions(), nil
	}
	if len(*v) > maxExtensions {
		return nil, api.Invalid("extensions", "extensions has %d entries; at most %d are accepted", len(*v), maxExtensions)
	}
	out := map[string]string{}
	total := 0
	for name, value := range *v {
		if total += len(name) + len(value); total > maxListBytes {
			return nil, api.Invalid("extensions", "extensions are %d bytes or more together; the limit is %d bytes", total, maxListBytes)
		}
		if name == "" || len(name) > maxPrincipalBytes || strings.ContainsFunc(name, func(r rune) bool {
			return unicode.IsSpace(r) || unicode.IsControl(r)
		}) {
			return nil, api.Invalid("extensions", "extension name %s must be 1 to %d bytes without whitespace or control characters", api.Describe(name), maxPrincipalBytes)
		}
		if standardExtensions[name] && value != "" {
			return nil, api.Invalid("extensions", "extension %s takes no value", name)
		}
		if len(value) > maxOptionBytes {
			return nil, api.Invalid("extensions", "extension %s has a value longer than %d bytes", name, maxOptionBytes)
		}
		out[name] = value
	}
	return out, nil
}

// Validity resolves valid_after (default now) and valid_until (default valid_after + dflt):
// 241 for a value that is not RFC 3339, 215 when valid_until is not after valid_after or either
// lies before 1970.
func Validity(after, until *string, now time.Time, dflt func(time.Time) time.Time) (time.Time, time.Time, error) {
	va := now.UTC().Truncate(time.Second)
	if after != nil {
		t, err := parseTime("valid_after", *after)
		if err != nil {
			return va, va, err
		}
		va = t
	}
	vu := dflt(va)
	if until != nil {
		t, err := parseTime("valid_until", *until)
		if err != nil {
			return va, vu, err
		}
		vu = t
	}
	if !vu.After(va) {
		return va, vu, api.Invalid("valid_until", "valid_until (%s) must be after valid_after (%s)",
			api.Timestamp(vu.Unix()), api.Timestamp(va.Unix()))
	}
	return va, vu, nil
}

func parseTime(field, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return t, api.BadRequest(api.CodeBadTimestamp, field, "%s %s is not an RFC 3339 timestamp (2025-01-02T15:04:05Z)", field, api.Describe(s))
	}
	t = t.UTC().Truncate(time.Second)
	if t.Unix() < 0 {
		return t, api.Invalid(field, "%s must not be before 1970-01-01T00:00:00Z", field)
	}
	return t, nil
}
