package view

import (
	"testing"

	"tunnelapi/shared/platform/api"
)

func TestParseURL(t *testing.T) {
	cases := []struct {
		in, want, hostport string
	}{
		{"https://Example.ngrok.app", "https://example.ngrok.app", "example.ngrok.app:443"},
		{"HTTPS://example.ngrok.app:443/", "https://example.ngrok.app", "example.ngrok.app:443"},
		{"http://example.com:80", "http://example.com", "example.com:80"},
		{"http://example.com:8080", "http://example.com:8080", "example.com:8080"},
		{"tls://example.com", "tls://example.com", "example.com:443"},
		{"tcp://1.tcp.example.com:20000", "tcp://1.tcp.example.com:20000", "1.tcp.example.com:20000"},
		{"https://*.example.com", "https://*.example.com", "*.example.com:443"},
		{"https://api.internal", "https://api.internal", "api.internal:443"},
	}
	for _, c := range cases {
		u, err := ParseURL(c.in)
		if err != nil || u.String() != c.want || u.HostPort() != c.hostport {
			t.Errorf("ParseURL(%q) = %v %v, %v; want %s %s", c.in, u, u.HostPort(), err, c.want, c.hostport)
		}
	}
	for _, bad := range []string{"", "example.com", "ftp://example.com", "https://example.com/path", "https://example.com?q=1",
		"https://user@example.com", "tcp://example.com", "https://example.com:0", "https://example.com:70000", "https://example.com:",
		"https://localhost", "https://10.0.0.1", "https://exa_mple.com", "https://-a.example.com", "https://a.*.example.com", "https://[::1]"} {
		_, err := ParseURL(bad)
		if e, ok := api.AsError(err); !ok || e.Code != CodeInvalidURL || e.Field != "url" {
			t.Errorf("ParseURL(%q) error %v, want %s", bad, err, CodeInvalidURL)
		}
	}
}
