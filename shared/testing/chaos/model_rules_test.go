package chaos

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

// sequential is a history of operations by one client, each returning before the next is called.
func sequential(steps ...opStep) []porcupine.Operation {
	ops := make([]porcupine.Operation, len(steps))
	for i, s := range steps {
		ops[i] = porcupine.Operation{ClientId: 0, Input: s.in, Output: s.out, Call: int64(2 * i), Return: int64(2*i + 1)}
	}
	return ops
}

// opStep is one operation with its answer.
type opStep struct {
	in  input
	out output
}

// The model holds the API's rules between resources, so a service breaking one records a
// history the checker refuses: two endpoints on one URL, a rule created in a deleted policy, a
// rule outliving its policy, a refusal when nothing forbade the operation. The same operations
// in an order the rules allow are linearizable.
func TestModelHoldsTheRules(t *testing.T) {
	const u = "https://one.chaos.example.com"
	policy := opStep{input{op: "create", kind: ipPolicy, id: "ipp_1", key: "k1", value: "p"}, output{outcome: ok, id: "ipp_1"}}
	rule := opStep{input{op: "create", kind: ipPolicyRule, id: "ipr_1", key: "k2", value: "r", parent: "ipp_1"}, output{outcome: ok, id: "ipr_1"}}
	dropPolicy := opStep{input{op: "delete", kind: ipPolicy, id: "ipp_1"}, output{outcome: ok}}
	ep1 := opStep{input{op: "create", kind: endpoint, id: "ep_1", key: "k3", value: "e", url: u}, output{outcome: ok, id: "ep_1"}}
	ep2 := opStep{input{op: "create", kind: endpoint, id: "ep_2", key: "k4", value: "f", url: u}, output{outcome: ok, id: "ep_2"}}
	ep2Refused := opStep{ep2.in, output{outcome: refused}}
	ep2Refused.in.id = ""
	for _, c := range []struct {
		name string
		ops  []porcupine.Operation
		want porcupine.CheckResult
	}{
		{"two endpoints on one URL", sequential(ep1, ep2), porcupine.Illegal},
		{"an endpoint refused while the URL is free", sequential(ep2Refused), porcupine.Illegal},
		{"an endpoint refused while the URL is taken", sequential(ep1, ep2Refused), porcupine.Ok},
		{"a rule created in a deleted policy", sequential(policy, dropPolicy, rule), porcupine.Illegal},
		{"a rule outliving its policy", sequential(policy, rule, dropPolicy,
			opStep{input{op: "get", kind: ipPolicyRule, id: "ipr_1"}, output{outcome: ok, value: "r in ipp_1"}}), porcupine.Illegal},
		{"a rule gone with its policy", sequential(policy, rule, dropPolicy,
			opStep{input{op: "get", kind: ipPolicyRule, id: "ipr_1"}, output{outcome: notFound}}), porcupine.Ok},
		{"a rule refused in a deleted policy", sequential(policy, dropPolicy,
			opStep{rule.in, output{outcome: refused}}), porcupine.Ok},
		// A create answered from its key's record on its first request: an attempt of that same
		// request committed (the table applied a write whose answer failed).
		{"a first create answered replayed", sequential(opStep{policy.in, output{outcome: ok, id: "ipp_1", replayed: true}},
			opStep{input{op: "get", kind: ipPolicy, id: "ipp_1"}, output{outcome: ok, value: "p"}}), porcupine.Ok},
		{"a replayed create naming another resource than its key made", sequential(policy,
			opStep{policy.in, output{outcome: ok, id: "ipp_2", replayed: true}}), porcupine.Illegal},
		{"a create replayed twice", sequential(opStep{policy.in, output{outcome: ok, id: "ipp_1", replayed: true}},
			opStep{policy.in, output{outcome: ok, id: "ipp_1", replayed: true}}), porcupine.Ok},
	} {
		if got := porcupine.CheckOperations(model.ToModel(), c.ops); got != (c.want == porcupine.Ok) {
			t.Errorf("%s: linearizable %v, want %v", c.name, got, c.want == porcupine.Ok)
		}
	}
}
