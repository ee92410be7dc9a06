package testkit

import (
	"encoding/json"
	"net"
	"strings"
	"testing"

	"tunnelapi/shared/platform/api"
)

// FreePort returns a local TCP port nothing listens on (at the moment it is asked).
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// IsFieldError reports whether err is nil or a 4xx in the error envelope that names a field: what
// every bad input must get.
func IsFieldError(err error) bool {
	if err == nil {
		return true
	}
	e, ok := api.AsError(err)
	return ok && e.Status >= 400 && e.Status < 500 && e.Code != "" && e.Field != ""
}

// JSONString is s as a JSON string literal, with <, > and & as they are.
func JSONString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
