package domains_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
)

// reserve reserves name as acct and returns the answer.
func reserve(t *testing.T, acct *testkit.Account, name string) *testkit.Response {
	t.Helper()
	return acct.Do(t, "POST", "/reserved_domains", map[string]any{"domain": name})
}

// reservedUnder returns the names acct holds one label under parent, and its wildcard over it.
func reservedUnder(t *testing.T, acct *testkit.Account, parent string) (names map[string]string, wildcard string) {
	t.Helper()
	names = map[string]string{}
	for _, id := range mustWalk(t, acct) {
		d := acct.Do(t, "GET", "/reserved_domains/"+id, nil).Expect(t, http.StatusOK)["domain"].(string)
		label, rest, _ := strings.Cut(d, ".")
		switch {
		case rest != parent:
		case label == "*":
			wildcard = id
		default:
			names[d] = id
		}
	}
	return names, wildcard
}

func mustWalk(t *testing.T, acct *testkit.Account) []string {
	t.Helper()
	ids, _ := acct.WalkPages(t, "/reserved_domains", "reserved_domains")
	return ids
}

// A wildcard and the names it covers (one label under its parent) are held by one account: a
// wildcard over another account's name, and a name under another account's wildcard, are 417
// and store nothing; the same account may hold both; deleting releases the claim.
func TestWildcardConflictsAcrossAccounts(t *testing.T) {
	_, a, b := testkit.AppTwoAccounts(t)
	parent := testkit.UniqueName("cover", "example.com")
	foo := reserve(t, a, "foo."+parent).Expect(t, http.StatusCreated)["id"].(string)
	refused := []struct {
		name  string
		acct  *testkit.Account
		stage string
	}{
		{"*." + parent, b, "wildcard over a's name"},
		{"*." + strings.ToUpper(parent), b, "wildcard over a's name, upper case"},
	}
	for _, c := range refused {
		reserve(t, c.acct, c.name).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_417", "domain")
	}
	// The same account holds the wildcard beside its names.
	wild := reserve(t, a, "*."+parent).Expect(t, http.StatusCreated)["id"].(string)
	bar := reserve(t, a, "bar."+parent).Expect(t, http.StatusCreated)["id"].(string)
	for _, name := range []string{"baz." + parent, "BAZ." + parent, "foo." + parent} {
		code := "ERR_NGROK_417"
		if strings.HasPrefix(name, "foo.") {
			code = "ERR_NGROK_414" // the name itself is a's: its own guard answers first
		}
		reserve(t, b, name).ExpectError(t, http.StatusBadRequest, code, "domain")
	}
	reserve(t, b, "*."+parent).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_414", "domain")
	// Not covered: the parent itself, names two labels down, and a wildcard one level down.
	for _, name := range []string{parent, "x.deep." + parent, "*.deep." + parent} {
		reserve(t, b, name).Expect(t, http.StatusCreated)
	}
	if names, w := reservedUnder(t, b, parent); len(names) != 0 || w != "" {
		t.Fatalf("b holds %v and wildcard %q under %s after its refusals", names, w, parent)
	}
	// Deleting a's wildcard frees the names under it; then a's wildcard is refused while b
	// holds one of them, and allowed again once b releases it.
	a.Do(t, "DELETE", "/reserved_domains/"+wild, nil).Expect(t, http.StatusNoContent)
	baz := reserve(t, b, "baz."+parent).Expect(t, http.StatusCreated)["id"].(string)
	reserve(t, a, "*."+parent).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_417", "domain")
	b.Do(t, "DELETE", "/reserved_domains/"+baz, nil).Expect(t, http.StatusNoContent)
	wild = reserve(t, a, "*."+parent).Expect(t, http.StatusCreated)["id"].(string)
	// Once a releases everything under the parent, b takes the wildcard.
	for _, id := range []string{wild, foo, bar} {
		a.Do(t, "DELETE", "/reserved_domains/"+id, nil).Expect(t, http.StatusNoContent)
	}
	reserve(t, b, "*."+parent).Expect(t, http.StatusCreated)
	reserve(t, a, "foo."+parent).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_417", "domain")
}

// 20 concurrent reservations under one parent from two accounts, wildcards and names mixed:
// whatever the order of commits, no account holds a name under the parent while the other
// holds the wildcard; every answer is a 201 or the refusal its outcome implies.
func TestConcurrentWildcardReservations(t *testing.T) {
	s := testkit.App(t)
	for round := 0; round < 3; round++ {
		accounts := []*testkit.Account{s.NewAccount(t), s.NewAccount(t)}
		parent := testkit.UniqueName("wrace", "example.com")
		const n = 20
		names := make([]string, n)
		for i := range n {
			names[i] = "h" + string(rune('a'+i)) + "." + parent
			if i%5 == round%5 {
				names[i] = "*." + parent
			}
		}
		res := testkit.AtOnce(n, func(i int) *testkit.Response { return reserve(t, accounts[i%2], names[i]) })
		held := make([]map[string]string, 2)
		wildOf := -1
		for k, acct := range accounts {
			var w string
			held[k], w = reservedUnder(t, acct, parent)
			if w != "" {
				if wildOf >= 0 {
					t.Fatalf("round %d: both accounts hold *.%s", round, parent)
				}
				wildOf = k
			}
		}
		if wildOf >= 0 && len(held[1-wildOf]) > 0 {
			t.Fatalf("round %d: account %d holds *.%s while account %d holds %v", round, wildOf, parent, 1-wildOf, held[1-wildOf])
		}
		for i, r := range res {
			k := i % 2
			wildcard := strings.HasPrefix(names[i], "*.")
			_, holds := held[k][names[i]]
			switch {
			case wildcard && k == wildOf && r.Status == http.StatusCreated:
			case wildcard && k == wildOf:
				r.ExpectError(t, http.StatusBadRequest, "ERR_NGROK_413", "domain")
			case wildcard && wildOf >= 0:
				// The other account's wildcard was there first (414), or its names under the
				// parent were, and its wildcard committed after (417).
				want := "ERR_NGROK_414"
				if r.Status == http.StatusBadRequest && r.JSON(t)["error_code"] == "ERR_NGROK_417" && len(held[wildOf]) > 0 {
					want = "ERR_NGROK_417"
				}
				r.ExpectError(t, http.StatusBadRequest, want, "domain")
			case wildcard:
				// No wildcard won: each lost to a name of the other account.
				r.ExpectError(t, http.StatusBadRequest, "ERR_NGROK_417", "domain")
				if len(held[1-k]) == 0 {
					t.Errorf("round %d: wildcard of account %d refused, yet account %d holds no name", round, k, 1-k)
				}
			case holds:
				r.Expect(t, http.StatusCreated)
			default:
				r.ExpectError(t, http.StatusBadRequest, "ERR_NGROK_417", "domain")
				if wildOf != 1-k {
					t.Errorf("round %d: %s of account %d refused, yet the other account holds no wildcard", round, names[i], k)
				}
			}
		}
		t.Logf("round %d: wildcard held by account %d; names held %d and %d", round, wildOf, len(held[0]), len(held[1]))
	}
}

// checkCover is the table invariant of cover guards: each holds exactly the counts of the names
// reserved under its parent (in all and per account) and the account of its wildcard, and no
// account holds a name under a parent whose wildcard is another's.
func checkCover(s *testkit.Stack) error {
	items, err := s.Items(context.Background())
	if err != nil {
		return err
	}
	type counts struct {
		n        int64
		by       map[string]int64
		wildcard string
	}
	want, got := map[string]*counts{}, map[string]*counts{}
	at := func(m map[string]*counts, p string) *counts {
		if m[p] == nil {
			m[p] = &counts{by: map[string]int64{}}
		}
		return m[p]
	}
	for _, it := range items {
		var row struct {
			store.Key
			Account  string `dynamodbav:"account"`
			Domain   string `dynamodbav:"domain"`
			Parent   string `dynamodbav:"cover_parent"`
			Wildcard string `dynamodbav:"wildcard"`
			N        int64  `dynamodbav:"n"`
		}
		if err := store.Unmarshal(it, &row); err != nil {
			return err
		}
		switch {
		case strings.HasPrefix(row.PK, "U#domain_cover#"):
			c := at(got, strings.TrimPrefix(row.PK, "U#domain_cover#"))
			c.n, c.wildcard = row.N, row.Wildcard
			for name, v := range it {
				if acct, ok := strings.CutPrefix(name, "n_"); ok {
					var n int64
					if err := attributevalue.Unmarshal(v, &n); err != nil {
						return err
					}
					if n != 0 {
						c.by[acct] = n
					}
				}
			}
		case strings.HasPrefix(row.SK, "rd_") && row.Parent != "":
			c := at(want, row.Parent)
			if strings.HasPrefix(row.Domain, "*.") {
				c.wildcard = row.Account
			} else {
				c.n++
				c.by[row.Account]++
			}
		}
	}
	for p, w := range want {
		g := at(got, p)
		if g.n != w.n || g.wildcard != w.wildcard || !maps.Equal(g.by, w.by) {
			return fmt.Errorf("cover guard of %s holds n=%d %v wildcard %q; the reservations say n=%d %v wildcard %q", p, g.n, g.by, g.wildcard, w.n, w.by, w.wildcard)
		}
		for acct := range w.by {
			if w.wildcard != "" && acct != w.wildcard {
				return fmt.Errorf("account %s holds names under %s, whose wildcard is account %s's", acct, p, w.wildcard)
			}
		}
	}
	for p, g := range got {
		if _, ok := want[p]; !ok && (g.n != 0 || g.wildcard != "" || len(g.by) != 0) {
			return fmt.Errorf("cover guard of %s holds n=%d %v wildcard %q without reservations", p, g.n, g.by, g.wildcard)
		}
	}
	return nil
}
