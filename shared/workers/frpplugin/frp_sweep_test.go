package frpplugin_test

import (
	"testing"
	"time"

	"tunnelapi/shared/testing/frptest"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/scheduler"
)

// frps killed with SIGKILL reports nothing more: once the lease lapses, the scheduler's sweep
// empties the listings.
func TestFrpServerKilled(t *testing.T) {
	s, a := testkit.AppAccount(t)
	p := frptest.StartPlane(t, s, frptest.PlaneConfig{Lease: 3 * time.Second})
	host, _ := a.ReserveDomain(t)
	_, token := frpCredential(t, a, "bind:"+host)
	agent := p.Agent(t, token, frptest.Proxy{Name: "web", Type: "http", LocalPort: frpUpstream(t, "upstream"), CustomDomains: []string{host}})
	agent.WaitLogin(t)
	agent.WaitProxy(t, "web")
	frpServes(t, p, host, "upstream")
	p.Kill()
	sched := &scheduler.Scheduler{DB: s.DB, Log: testkit.Logger()}
	frpGone(t, p, a, host, frptest.Patience, func() {
		if _, err := sched.Sweep(t.Context(), time.Now()); err != nil {
			t.Logf("sweep: %v", err)
		}
	})
}
