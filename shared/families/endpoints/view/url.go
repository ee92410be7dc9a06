package view

import (
	"net/url"
	"strconv"
	"strings"

	"tunnelapi/shared/platform/api"
)

// CodeInvalidURL is the endpoint family's code for an invalid URL.
const CodeInvalidURL = "ERR_NGROK_249"

// defaultPorts are stripped from URLs; tcp has none, so a tcp URL needs its port.
var defaultPorts = map[string]int{"http": 80, "https": 443, "tls": 443}

// DefaultPort is the port a URL of scheme has when it names none (ok is false for tcp, which
// has none).
func DefaultPort(scheme string) (port int, ok bool) {
	port, ok = defaultPorts[scheme]
	return port, ok
}

// URL is a validated, normalised endpoint URL.
type URL struct {
	Scheme string
	Host   string
	Port   int
}

// String is the normalised form: lowercase scheme and host, default port omitted.
func (u URL) String() string {
	if d, ok := defaultPorts[u.Scheme]; ok && d == u.Port {
		return u.Scheme + "://" + u.Host
	}
	return u.Scheme + "://" + u.Host + ":" + strconv.Itoa(u.Port)
}

// HostPort is host:port with the effective port.
func (u URL) HostPort() string { return u.Host + ":" + strconv.Itoa(u.Port) }

// Internal reports whether the URL is on the account-private .internal domain.
func (u URL) Internal() bool { return strings.HasSuffix(u.Host, ".internal") }

// ParseURL validates an endpoint URL: scheme http, https, tcp or tls; a hostname (a leading
// "*." wildcard label allowed); an optional port (required for tcp); nothing else.
func ParseURL(s string) (URL, error) {
	bad := func(why string) (URL, error) {
		return URL{}, api.BadRequest(CodeInvalidURL, "url", "url %s is not a valid endpoint URL: %s", api.Describe(s), why)
	}
	if s == "" {
		return bad("it is empty")
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return bad("it needs a scheme: http://, https://, tcp:// or tls://")
	}
	scheme = strings.ToLower(scheme)
	if _, ok := defaultPorts[scheme]; !ok && scheme != "tcp" {
		return bad("the scheme must be http, https, tcp or tls")
	}
	rest = strings.TrimSuffix(rest, "/")
	if strings.ContainsAny(rest, "/?#@ \t\r\n\\") {
		return bad("only a scheme, a host and an optional port are allowed (no path, query, fragment or user info)")
	}
	u, err := url.Parse(scheme + "://" + rest)
	if err != nil {
		return bad("it does not parse")
	}
	host := strings.ToLower(u.Hostname())
	if !validHost(host) {
		return bad("the host must be a domain name such as example.ngrok.app (a leading *. wildcard is allowed)")
	}
	out := URL{Scheme: scheme, Host: host}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return bad("the port must be from 1 to 65535")
		}
		out.Port = n
	} else if strings.HasSuffix(rest, ":") {
		return bad("the port is empty")
	} else if d, ok := defaultPorts[scheme]; ok {
		out.Port = d
	} else {
		return bad("a tcp URL needs a port, such as tcp://1.tcp.example.com:20000")
	}
	return out, nil
}

func validHost(h string) bool {
	if len(h) == 0 || len(h) > 253 {
		return false
	}
	labels := strings.Split(h, ".")
	if len(labels) < 2 {
		return false
	}
	for i, l := range labels {
		if l == "*" && i == 0 {
			continue
		}
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, c := range l {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	// The top-level label is not numeric, so IP literals are not hosts.
	last := labels[len(labels)-1]
	_, err := strconv.Atoi(last)
	return err != nil
}
