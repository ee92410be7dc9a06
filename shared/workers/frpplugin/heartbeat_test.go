package frpplugin_test

import (
	"net/http"
	"testing"

	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/frpplugin"
	"tunnelapi/shared/workers/operator"
)

// A heartbeat verifies its caller by its key on every request: a wrong secret or another
// server's name is refused with 401, another valid key is admitted, and a revoked key's very
// next heartbeat is refused, however much of the session's lease is left.
func TestHeartbeatVerifiesItsServer(t *testing.T) {
	s, a := testkit.AppAccount(t)
	g := newRig(t, s)
	token := a.Do(t, "POST", "/credentials", map[string]any{}).Expect(t, http.StatusCreated)["token"].(string)
	_, login := g.login(token, "")
	u := user(login)
	g.expect(frpplugin.OpPing, ping(u), false, "")
	for name, creds := range map[string][2]string{
		"unknown secret": {g.key.Name + "." + g.key.Region, "nope"},
		"other name":     {"edge-9." + g.key.Region, g.key.Secret},
		"other region":   {g.key.Name + ".eu", g.key.Secret},
	} {
		if status, _, body := g.sendAs(creds[0], creds[1], frpplugin.OpPing, ping(u)); status != http.StatusUnauthorized {
			t.Errorf("%s: a heartbeat answered %d %s, want 401", name, status, body)
		}
	}
	other, err := operator.MintTunnelServer(t.Context(), s.DB, "edge-2", "us")
	if err != nil {
		t.Fatal(err)
	}
	if status, res, body := g.sendAs(other.Name+"."+other.Region, other.Secret, frpplugin.OpPing, ping(u)); status != http.StatusOK || res.Reject {
		t.Errorf("another valid key's heartbeat answered %d %s", status, body)
	}

	revokeServer(t, s, g.key.ID)
	// The lease is fresh (the rig's default), yet the next heartbeat reads the key: refused.
	if status, _, body := g.send(frpplugin.OpPing, ping(u)); status != http.StatusUnauthorized {
		t.Errorf("a revoked key's next heartbeat answered %d %s, want 401", status, body)
	}
	if status, res, body := g.sendAs(other.Name+"."+other.Region, other.Secret, frpplugin.OpPing, ping(u)); status != http.StatusOK || res.Reject {
		t.Errorf("after another key's revocation, a valid key's heartbeat answered %d %s", status, body)
	}
}
