package main

import (
	"context"
	"testing"
	"time"

	"tunnelapi/shared/families/tunnels"
	"tunnelapi/shared/families/tunnels/lease"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/scheduler"
)

// make run's scheduler sweeps lapsed tunnel sessions on its own tick, also when no certificate
// worker runs (no ACME server): a session whose lease lapsed is ended, one whose lease holds is
// left.
func TestScheduleSweepsWithoutCertificates(t *testing.T) {
	s, a := testkit.AppAccount(t)
	start := func(term time.Duration) string {
		t.Helper()
		now := time.Now()
		id := ids.NewAt(ids.TunnelSession, now.UTC())
		it := &lease.SessionItem{Meta: store.Meta{Key: lease.SessionKey(a.AccountID, id), ID: id, AccountID: a.AccountID, CreatedAt: now.Unix(), Version: 1},
			AgentVersion: "0.70.1", OS: "linux", Region: "us", Behalf: audit.OnBehalf{PrincipalID: a.UserID, BaseURL: "http://127.0.0.1"}}
		if err := tunnels.Start(t.Context(), s.DB, it, term); err != nil {
			t.Fatal(err)
		}
		return id
	}
	lapsing, lasting := start(time.Second), start(time.Hour)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	goSchedule(ctx, &scheduler.Scheduler{DB: s.DB, Log: testkit.Logger()}, 200*time.Millisecond, false)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var it lease.SessionItem
		err := s.DB.Get(t.Context(), lease.SessionKey(a.AccountID, lapsing), &it)
		if store.IsNotFound(err) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lapsed session %s was not swept within 30 s", lapsing)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var it lease.SessionItem
	if err := s.DB.Get(t.Context(), lease.SessionKey(a.AccountID, lasting), &it); err != nil {
		t.Errorf("the session whose lease holds: %v", err)
	}
}
