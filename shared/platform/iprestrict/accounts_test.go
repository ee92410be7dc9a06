package iprestrict

import (
	"context"
	"errors"
	"net/http/httptest"
	"net/netip"
	"testing"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/fakedb"
)

// Change derives a new version from the one the request was checked against, refuses a
// lockout, and names no version when the state becomes empty; a version whose item is gone
// asks for the operation to be built again.
func TestChange(t *testing.T) {
	ctx := context.Background()
	x := &Accounts{DB: store.New(fakedb.New(), "test")}
	r := &api.Request{HTTP: httptest.NewRequest("POST", "/", nil), Source: netip.MustParseAddr("10.0.0.1")}
	put := func(s *State) {
		s.PutRestriction(Restriction{ID: "ipx_a", Enforced: true, PolicyIDs: []string{"ipp_1"}}, map[string][]Rule{"ipp_1": {rule("10.0.0.0/8", false)}})
	}

	tx := &store.Tx{}
	if upd, err := x.Change(ctx, r, tx, "acct", 0, "f", func(*State) bool { return false }, put); upd != nil || err != nil || tx.Len() != 0 {
		t.Fatalf("unaffected change: %v %v %v", upd, err, tx.Len())
	}
	// A lockout names the field and writes nothing.
	r.Source = netip.MustParseAddr("192.0.2.1")
	if _, err := x.Change(ctx, r, tx, "acct", 0, "f", func(*State) bool { return true }, put); err == nil || tx.Len() != 0 {
		t.Fatalf("lockout: %v, writes %v", err, tx.Len())
	} else if e, _ := api.AsError(err); e == nil || e.Field != "f" {
		t.Fatalf("lockout error %v does not name f", err)
	}
	r.Source = netip.MustParseAddr("10.0.0.1")
	upd, err := x.Change(ctx, r, tx, "acct", 0, "f", func(*State) bool { return true }, put)
	if err != nil || upd == nil || tx.Len() != 1 {
		t.Fatalf("first version: %v %v %v", upd, err, tx.Len())
	}
	// A version not stored (nor cached) is auth.ErrRetry.
	if _, err := x.State(ctx, "acct", 42); !errors.Is(err, auth.ErrRetry) {
		t.Fatalf("missing version: %v", err)
	}
	if err := x.Check(ctx, r, "acct", 42); !errors.Is(err, auth.ErrRetry) {
		t.Fatalf("check of a missing version: %v", err)
	}
}
