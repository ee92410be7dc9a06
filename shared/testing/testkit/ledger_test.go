package testkit

import (
	"slices"
	"testing"
)

func TestLedgerSecrets(t *testing.T) {
	var l ledger
	l.record("POST", 201, []byte(`{"id":"ak_1","token":"secret-1"}`))
	l.record("PATCH", 200, []byte(`{"id":"ak_1","token":null}`))
	l.record("POST", 201, []byte(`{"id":"ep_1","credentials":{"token":"nested"}}`))
	l.record("GET", 200, []byte(`{"id":"ak_2","token":"read-not-shown"}`))
	l.record("POST", 400, []byte(`{"token":"refused"}`))
	l.record("DELETE", 204, nil)
	if got, want := l.secrets(), []string{"secret-1"}; !slices.Equal(got, want) {
		t.Errorf("secrets %q, want %q", got, want)
	}
	if l.mutations != 4 {
		t.Errorf("%d mutations, want 4", l.mutations)
	}
}
