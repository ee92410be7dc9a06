package iprestrict_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"tunnelapi/shared/testing/testkit"
)

// benchGet measures GET /api_keys/{id} through the HTTP server for account a.
func benchGet(b *testing.B, s *testkit.Stack, a *testkit.Account) {
	path := "/api_keys/" + a.APIKeyID
	s.Do(b, "GET", path, a.Token, nil).Expect(b, http.StatusOK) // warm the token hint and the compiled state
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if res := s.Do(b, "GET", path, a.Token, nil); res.Status != http.StatusOK {
			b.Fatalf("status %d: %s", res.Status, res.Body)
		}
	}
}

// fixture is shared by both benchmarks so that they run against the same table in the same
// state: an account without restrictions, and one with an enforced api restriction of 1,000
// rules (IPv4 and IPv6, nested allows and denies, with 127.0.0.1 allowed).
var fixture struct {
	once              sync.Once
	s                 *testkit.Stack
	plain, restricted *testkit.Account
}

func setup(b *testing.B) {
	fixture.once.Do(func() {
		s := testkit.App(b)
		fixture.s, fixture.plain, fixture.restricted = s, s.NewAccount(b), restricted(b, s)
	})
	if fixture.s == nil {
		b.Fatal("benchmark fixture failed")
	}
}

func BenchmarkRequestNoRestriction(b *testing.B) {
	setup(b)
	benchGet(b, fixture.s, fixture.plain)
}

// The same request from an address checked against the 1,000-rule restriction.
func BenchmarkRequestRestriction1000Rules(b *testing.B) {
	setup(b)
	benchGet(b, fixture.s, fixture.restricted)
}

func restricted(b *testing.B, s *testkit.Stack) *testkit.Account {
	a := s.NewAccount(b)
	pol := a.Do(b, "POST", "/ip_policies", map[string]any{"description": "bench"}).Expect(b, http.StatusCreated)["id"].(string)
	rule := func(cidr, action string) {
		a.Do(b, "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": pol, "cidr": cidr, "action": action}).Expect(b, http.StatusCreated)
	}
	rule("127.0.0.0/8", "allow")
	n := 1
	for i := 0; n < 1000; i++ {
		switch i % 4 {
		case 0:
			rule(fmt.Sprintf("10.%d.%d.0/24", i/256%256, i%256), "allow")
		case 1:
			rule(fmt.Sprintf("10.%d.%d.128/25", i/256%256, (i-1)%256), "deny")
		case 2:
			rule(fmt.Sprintf("2001:db8:%x::/48", i), "allow")
		default:
			rule(fmt.Sprintf("127.%d.%d.0/24", 1+i/256%200, i%256), "deny")
		}
		n++
	}
	a.Do(b, "POST", "/ip_restrictions", map[string]any{"type": "api", "enforced": true, "ip_policy_ids": []string{pol}}).Expect(b, http.StatusCreated)
	return a
}

// BenchmarkRequestRestrictionRatio alternates the two requests so that both see the same
// moment of the local stack (DynamoDB Local's JIT keeps warming up for a while, which makes
// back-to-back benchmarks drift); it reports restricted ns/op over unrestricted ns/op.
func BenchmarkRequestRestrictionRatio(b *testing.B) {
	setup(b)
	s := fixture.s
	get := func(a *testkit.Account) time.Duration {
		start := time.Now()
		if res := s.Do(b, "GET", "/api_keys/"+a.APIKeyID, a.Token, nil); res.Status != http.StatusOK {
			b.Fatalf("status %d: %s", res.Status, res.Body)
		}
		return time.Since(start)
	}
	get(fixture.plain)
	get(fixture.restricted)
	b.ResetTimer()
	var plain, restricted time.Duration
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			plain += get(fixture.plain)
			restricted += get(fixture.restricted)
		} else {
			restricted += get(fixture.restricted)
			plain += get(fixture.plain)
		}
	}
	b.ReportMetric(float64(plain.Nanoseconds())/float64(b.N), "plain-ns/op")
	b.ReportMetric(float64(restricted.Nanoseconds())/float64(b.N), "restricted-ns/op")
	b.ReportMetric(float64(restricted)/float64(plain), "ratio")
}
