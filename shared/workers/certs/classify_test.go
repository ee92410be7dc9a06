package certs

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/mholt/acmez/v3/acme"
)

// A failure is DNS_ERROR when the owner must fix DNS (the CNAME check, or the authority's dns,
// caa, unauthorized, incorrectResponse and rejectedIdentifier problems, however wrapped), and
// INTERNAL_ERROR otherwise (unreachable, throttled, rate limited, the authority's own trouble).
func TestClassify(t *testing.T) {
	names := []string{"app.example.com"}
	problem := func(typ string) error {
		return fmt.Errorf("ordering: %w", fmt.Errorf("[app.example.com] %w", acme.Problem{Type: typ, Detail: "detail of " + typ}))
	}
	for _, tc := range []struct {
		name string
		err  error
		code string
		msg  string
	}{
		{"missing CNAME", &dnsProblem{"no CNAME record at _acme-challenge.app.example.com"}, DNSError, "_acme-challenge.app.example.com"},
		{"wrapped CNAME", fmt.Errorf("job: %w", &dnsProblem{"x is a CNAME to y"}), DNSError, "x is a CNAME to y"},
		{"dns", problem(acme.ProblemTypeDNS), DNSError, "detail of " + acme.ProblemTypeDNS},
		{"caa", problem(acme.ProblemTypeCAA), DNSError, "app.example.com"},
		{"unauthorized", problem(acme.ProblemTypeUnauthorized), DNSError, "could not validate"},
		{"incorrect", problem(acme.ProblemTypeIncorrectResponse), DNSError, "could not validate"},
		{"rejected", problem(acme.ProblemTypeRejectedIdentifier), DNSError, "could not validate"},
		{"rate limited", problem(acme.ProblemTypeRateLimited), InternalError, "retrying"},
		{"server internal", problem(acme.ProblemTypeServerInternal), InternalError, "retrying"},
		{"bad nonce", problem(acme.ProblemTypeBadNonce), InternalError, "retrying"},
		{"unreachable", fmt.Errorf("acme: %w", &net.OpError{Op: "dial", Err: errors.New("connection refused")}), InternalError, "unavailable"},
	} {
		code, msg := classify(tc.err, names)
		if code != tc.code || !strings.Contains(msg, tc.msg) {
			t.Errorf("%s: %s %q, want %s containing %q", tc.name, code, msg, tc.code, tc.msg)
		}
	}
}
