package chaos

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"tunnelapi/shared/testing/faults"
)

// The size of the recorded histories. `make test` runs a few per fault class; `make chaos`
// runs the acceptance size (50 histories of 200 operations by 8 clients per class).
var (
	histories  = flag.Int("chaos.histories", 1, "histories per fault class")
	operations = flag.Int("chaos.ops", 200, "operations per history")
	clients    = flag.Int("chaos.clients", 8, "concurrent clients per history")
)

// check runs porcupine on h; a history that is not linearizable is written out as porcupine's
// visualization, whose path the failure names.
func check(t *testing.T, name string, ops []porcupine.Operation) porcupine.CheckResult {
	t.Helper()
	m := model.ToModel()
	res, info := porcupine.CheckOperationsVerbose(m, ops, time.Minute)
	if res != porcupine.Ok {
		dir := filepath.Join(os.TempDir(), "tunnelapi-chaos")
		os.MkdirAll(dir, 0o755)
		path := filepath.Join(dir, fmt.Sprintf("%s-%d.html", strings.ReplaceAll(name, "/", "_"), time.Now().UnixNano()))
		if err := porcupine.VisualizePath(m, info, path); err != nil {
			t.Logf("visualization: %v", err)
		}
		t.Logf("history %s is %s: visualization in %s", name, res, path)
	}
	return res
}

// Under each fault class, concurrent clients' histories of creates, gets, PATCHes, deletes and
// lists are linearizable; every answer is a 2xx, a documented 4xx or a 503 with Retry-After; no
// request runs past its deadline; and the audit log holds exactly one event per committed
// mutation and none for one that did not commit.
func TestLinearizableUnderFaults(t *testing.T) {
	for _, fc := range faults.Classes {
		t.Run(fc.Name, func(t *testing.T) {
			f := newFaulty(t)
			var total, lost atomic.Int64
			tally := map[string]int{}
			for i := 0; i < *histories; i++ {
				acct := f.stack.NewAccount(t)
				h := newHistory(t, f, acct)
				fc.Apply(t, f.dyn, f.proxy)
				h.record(*clients, *operations)
				for _, d := range h.dishonest {
					t.Errorf("history %d: %s", i, d)
				}
				if res := check(t, fmt.Sprintf("%s-%d", fc.Name, i), h.ops); res != porcupine.Ok {
					t.Errorf("history %d of %d operations is %s", i, len(h.ops), res)
				}
				checkAudit(t, h)
				for k, n := range h.answers {
					tally[k] += n
				}
				total.Add(int64(h.seq))
				for _, op := range h.ops {
					if op.Output.(output).outcome == unknown {
						lost.Add(1)
					}
				}
			}
			if n := f.late.Load(); n > 0 {
				t.Errorf("%d requests ran past their deadline", n)
			}
			keys := make([]string, 0, len(tally))
			for k := range tally {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var parts []string
			for _, k := range keys {
				parts = append(parts, fmt.Sprintf("%s:%d", k, tally[k]))
			}
			t.Logf("%s: %d histories, %d operations by %d clients, %d with unknown outcome; toxics %d, DynamoDB failures %v; answers %s",
				fc.Name, *histories, total.Load(), *clients, lost.Load(), f.proxy.Added(), f.dyn.Injected(), strings.Join(parts, " "))
		})
	}
}

// checkAudit compares the account's audit log with what the history committed: one created
// event per resource a create made, one updated event per PATCH that committed (each PATCH
// sets a description of its own), none for one that did not, and one deleted event per
// resource gone at the end, except a rule that went with its policy: that one has a deleted
// event only when a delete of the rule itself committed (the policy's event covers the rest).
func checkAudit(t *testing.T, h *history) {
	t.Helper()
	events := map[string]int{}
	for _, it := range h.acct.AuditLog(t) {
		var env struct {
			Object struct {
				ID          string `json:"id"`
				Description string `json:"description"`
			} `json:"object"`
		}
		json.Unmarshal([]byte(it.Payload), &env)
		verb := it.EventType[strings.LastIndex(it.EventType[:len(it.EventType)-3], "_")+1 : len(it.EventType)-3]
		if env.Object.ID == h.acct.APIKeyID || kindOf(env.Object.ID) < 0 {
			continue
		}
		switch verb {
		case "updated":
			events["updated "+env.Object.Description]++
		default:
			events[verb+" "+env.Object.ID]++
		}
	}
	// The lists record ends with, one per kind, show what is left.
	final := map[string]bool{}
	for _, op := range h.ops[len(h.ops)-len(kinds):] {
		for _, e := range op.Output.(output).list {
			final[e[:strings.Index(e, "=")]] = true
		}
	}
	patches := map[string]outcome{}
	// deletes holds, for each rule a delete of its own named, whether one committed (ok) or
	// may have (unknown).
	deletes := map[string]outcome{}
	for _, op := range h.ops {
		in, o := op.Input.(input), op.Output.(output).outcome
		switch {
		case in.op == "patch":
			patches[in.value] = o
		case in.op == "delete" && in.kind == ipPolicyRule && (o == ok || o == unknown):
			if prev, seen := deletes[in.id]; !seen || prev != ok {
				deletes[in.id] = o
			}
		}
	}
	for _, id := range h.created {
		if n := events["created "+id]; n != 1 {
			t.Errorf("%d created events for %s, want 1", n, id)
		}
		n := events["deleted "+id]
		switch d, named := deletes[id]; {
		case final[id] && n != 0, !final[id] && kindOf(id) != ipPolicyRule && n != 1:
			t.Errorf("%d deleted events for %s, which is gone: %v", n, id, !final[id])
		case kindOf(id) == ipPolicyRule && !final[id] && ((named && d == ok && n != 1) || (!named && n != 0) || n > 1):
			t.Errorf("%d deleted events for rule %s, gone, whose own deletes were %v (named %v)", n, id, d, named)
		}
	}
	for value, o := range patches {
		n := events["updated "+value]
		if (o == ok && n != 1) || (o != ok && o != unknown && n != 0) || n > 1 {
			t.Errorf("%d updated events for the PATCH to %q, whose answer was %v", n, value, o)
		}
	}
}
