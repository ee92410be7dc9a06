package testkit

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"tunnelapi/shared/platform/ids"
)

var nameSeq atomic.Int64

// UniqueName returns label-<pid>-<n>-<random>.parent, a DNS name no other test uses: reserved
// names are unique across accounts, the shared stack outlives each test, and pebble and
// challtestsrv outlive each run (other runs beside this one included).
func UniqueName(label, parent string) string {
	return fmt.Sprintf("%s-%d-%d-%s.%s", label, os.Getpid(), nameSeq.Add(1), strings.ToLower(ids.RandomBase62(6)), parent)
}

// ReserveDomain reserves a fresh domain (UniqueName under example.com) in the account and
// returns its name and id.
func (a *Account) ReserveDomain(tb testing.TB) (name, id string) {
	tb.Helper()
	name = UniqueName("test", "example.com")
	id = a.Do(tb, "POST", "/reserved_domains", map[string]any{"domain": name}).Expect(tb, http.StatusCreated)["id"].(string)
	return name, id
}

// ReserveAddr reserves a TCP address in the account and returns it (host:port) and its id.
func (a *Account) ReserveAddr(tb testing.TB) (addr, id string) {
	tb.Helper()
	got := a.Do(tb, "POST", "/reserved_addrs", map[string]any{}).Expect(tb, http.StatusCreated)
	return got["addr"].(string), got["id"].(string)
}

// ReserveWildcard reserves the wildcard over a fresh parent (UniqueName under example.com) in
// the account and returns the parent, one label under which the account may serve any name
// (a public endpoint's host must be on a reserved domain of its account), and the id.
func (a *Account) ReserveWildcard(tb testing.TB) (parent, id string) {
	tb.Helper()
	parent = UniqueName("wild", "example.com")
	return parent, a.ReserveWildcardOver(tb, parent)
}

// ReserveWildcardOver reserves *.parent in the account and returns its id, for a test that
// names its hosts before it has the account.
func (a *Account) ReserveWildcardOver(tb testing.TB, parent string) (id string) {
	tb.Helper()
	return a.Do(tb, "POST", "/reserved_domains", map[string]any{"domain": "*." + parent}).Expect(tb, http.StatusCreated)["id"].(string)
}
