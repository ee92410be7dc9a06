// Package acl validates tunnel credential bind rules and answers whether a credential may bind
// a hostname, an address or a set of labels.
package acl

import (
	"fmt"
	"strconv"
	"strings"
)

// Rule is one parsed ACL rule.
type Rule struct {
	any      bool   // "*": no restriction
	host     string // exact hostname, lowercased
	suffix   string // "*.example.com" → ".example.com"
	addrHost string // address rule: host and port
	addrPort int
	labelKey string // label rule; "*" matches any
	labelVal string
}

// Parse validates one rule: "*", or "bind:" followed by a hostname, a "*.<suffix>" wildcard,
// a "host:port" address, or a "key=value" label where key and/or value may be "*".
func Parse(s string) (Rule, error) {
	if s == "*" {
		return Rule{any: true}, nil
	}
	v, ok := strings.CutPrefix(s, "bind:")
	if !ok {
		return Rule{}, fmt.Errorf("ACL rule %q must be '*' or start with 'bind:'", s)
	}
	if k, val, isLabel := strings.Cut(v, "="); isLabel {
		if !validLabelPart(k) || !validLabelPart(val) {
			return Rule{}, fmt.Errorf("ACL rule %q: a label rule is 'bind:key=value' with non-empty key and value ('*' matches any)", s)
		}
		return Rule{labelKey: k, labelVal: val}, nil
	}
	if h, p, isAddr := strings.Cut(v, ":"); isAddr {
		port, err := strconv.Atoi(p)
		if err != nil || port < 1 || port > 65535 || !validHostname(h) {
			return Rule{}, fmt.Errorf("ACL rule %q: an address rule is 'bind:host:port' with a port from 1 to 65535", s)
		}
		return Rule{addrHost: strings.ToLower(h), addrPort: port}, nil
	}
	if rest, wild := strings.CutPrefix(v, "*."); wild {
		if !validHostname(rest) {
			return Rule{}, fmt.Errorf("ACL rule %q: '*.' must be followed by a valid domain", s)
		}
		return Rule{suffix: "." + strings.ToLower(rest)}, nil
	}
	if !validHostname(v) {
		return Rule{}, fmt.Errorf("ACL rule %q: %q is not a valid hostname", s, v)
	}
	return Rule{host: strings.ToLower(v)}, nil
}

func validLabelPart(s string) bool {
	if s == "" || strings.ContainsAny(s, "= \t\r\n,") {
		return false
	}
	return s == "*" || !strings.Contains(s, "*")
}

func validHostname(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// ACL is a credential's parsed rule list. An empty list, or one containing "*", permits all.
type ACL []Rule

// ParseAll parses every rule; the error names the index of the first bad one.
func ParseAll(rules []string) (ACL, int, error) {
	out := make(ACL, 0, len(rules))
	for i, s := range rules {
		r, err := Parse(s)
		if err != nil {
			return nil, i, err
		}
		out = append(out, r)
	}
	return out, -1, nil
}

func (a ACL) unrestricted() bool {
	if len(a) == 0 {
		return true
	}
	for _, r := range a {
		if r.any {
			return true
		}
	}
	return false
}

// AllowsHostname reports whether a credential with this ACL may bind hostname.
func (a ACL) AllowsHostname(hostname string) bool {
	if a.unrestricted() {
		return true
	}
	h := strings.ToLower(strings.TrimSuffix(hostname, "."))
	for _, r := range a {
		switch {
		case r.host != "" && r.host == h:
			return true
		case r.suffix != "" && (strings.HasSuffix(h, r.suffix) && len(h) > len(r.suffix)):
			return true
		}
	}
	return false
}

// AllowsAddr reports whether the credential may bind the TCP address host:port.
func (a ACL) AllowsAddr(host string, port int) bool {
	if a.unrestricted() {
		return true
	}
	h := strings.ToLower(host)
	for _, r := range a {
		if r.addrHost != "" && r.addrHost == h && r.addrPort == port {
			return true
		}
	}
	return false
}

// AllowsLabels reports whether the credential may bind a tunnel with these labels: every label
// must be matched by some rule. An empty set binds nothing and is refused unless unrestricted.
func (a ACL) AllowsLabels(labels map[string]string) bool {
	if a.unrestricted() {
		return true
	}
	if len(labels) == 0 {
		return false
	}
	for k, v := range labels {
		ok := false
		for _, r := range a {
			if r.labelKey != "" && (r.labelKey == "*" || r.labelKey == k) && (r.labelVal == "*" || r.labelVal == v) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
