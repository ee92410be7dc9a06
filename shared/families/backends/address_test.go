package backends

import (
	"net"
	"strconv"
	"testing"
)

// FuzzCheckAddress: an address checkAddress accepts splits into a host and a port 1–65535; any
// other answers with one of the address codes, never a panic.
func FuzzCheckAddress(f *testing.F) {
	for _, s := range []string{"a.example.com:443", "[::1]:1", "10.0.0.1:65535", ":80", "x", "[a]:1", "a:0443", "a..b:1", "[fe80::1%25x]:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		err := checkAddress(addr)
		if err != nil {
			if e, ok := err.(interface{ Error() string }); !ok || e.Error() == "" {
				t.Fatalf("%q: empty error", addr)
			}
			return
		}
		host, port, serr := net.SplitHostPort(addr)
		n, perr := strconv.Atoi(port)
		if serr != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			t.Fatalf("%q accepted: host %q port %q", addr, host, port)
		}
	})
}

// FuzzCheckHeaders: accepted headers are valid HTTP header fields within the limits.
func FuzzCheckHeaders(f *testing.F) {
	f.Add("Content-Type", "text/plain")
	f.Add("X A", "v")
	f.Add("X-A", "a\r\nb")
	f.Fuzz(func(t *testing.T, name, value string) {
		if checkHeaders(map[string]string{name: value}) == nil && (name == "" || len(name) > MaxHeaderNameBytes || len(value) > MaxHeaderValueBytes) {
			t.Fatalf("accepted header %q: %q", name, value)
		}
	})
}
