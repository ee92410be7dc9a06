package certs_test

import (
	"net/http"
	"testing"
	"time"

	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/workers/certs"
	"tunnelapi/shared/workers/operator"
	"tunnelapi/shared/workers/scheduler"
)

// A suspended account's due renewal is deferred by PauseDelay, not requested: the scheduler
// requests nothing while it is suspended, nor at once after it is resumed, and requests it (and
// the certificate is renewed) once the deferred entry comes due.
func TestSuspendedAccountsRenewalsWait(t *testing.T) {
	h := newHarness(t, func(w *certs.Worker) { w.RenewBefore = 91 * 24 * time.Hour })
	ctx := t.Context()
	_, id, _ := h.domainWithCNAME(t, "paused")
	h.a.Do(t, "PATCH", "/reserved_domains/"+id, withPolicy).Expect(t, http.StatusOK)
	first := h.waitFor(t, "/reserved_domains/"+id, 30*time.Second, issued)["certificate"].(map[string]any)["id"].(string)

	op := &operator.Operator{DB: h.s.DB}
	if _, err := op.SetStatus(ctx, h.a.AccountID, auth.StatusSuspended); err != nil {
		t.Fatal(err)
	}
	sched, now := &scheduler.Scheduler{DB: h.s.DB}, time.Now()
	if n, err := sched.Run(ctx, now); err != nil || n != 0 {
		t.Fatalf("the scheduler requested %d renewals of a suspended account (%v), want 0", n, err)
	}
	if _, err := op.SetStatus(ctx, h.a.AccountID, ""); err != nil {
		t.Fatal(err)
	}
	if n, err := sched.Run(ctx, now); err != nil || n != 0 {
		t.Fatalf("the deferred renewal was requested before PauseDelay passed: %d (%v)", n, err)
	}
	if n, err := sched.Run(ctx, now.Add(scheduler.PauseDelay+time.Minute)); err != nil || n != 1 {
		t.Fatalf("after PauseDelay the scheduler requested %d renewals (%v), want 1", n, err)
	}
	h.waitFor(t, "/reserved_domains/"+id, 30*time.Second, func(b map[string]any) bool {
		ref, _ := b["certificate"].(map[string]any)
		return issued(b) && ref != nil && ref["id"] != first
	})
}
