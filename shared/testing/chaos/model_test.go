package chaos

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"
)

// outcome is what an operation's answer says happened.
type outcome int

const (
	// ok: a 2xx; the operation happened, with the answer's result.
	ok outcome = iota
	// notFound: a 404; the operation found no such resource and changed nothing.
	notFound
	// refused: the 400 the kind documents for a rule that did not hold (kind.refusal: a rule's
	// policy absent, an endpoint's URL served by another); the operation changed nothing.
	refused
	// notApplied: a 503 ERR_NGROK_1501 or a 429 ERR_NGROK_225; the operation changed nothing.
	notApplied
	// unknown: no answer, or a 503 ERR_NGROK_1502; the mutation may or may not have happened.
	unknown
)

// The kinds of the model, as indexes of kinds.
const (
	apiKey = iota
	ipPolicy
	ipPolicyRule
	endpoint
	subscription
)

// kind is one family the histories operate on.
type kind struct {
	path, listKey, prefix string
	// group is the part of the state the kind's operations read and change: kinds of different
	// groups are independent, so porcupine checks each group's operations on their own.
	group int
	// refusal is the error_code of the 400 with which the kind refuses an operation a rule of
	// the API forbids in the present state (its create's or PATCH's precondition), "" if none.
	refusal string
}

// kinds are the families of the model: API keys and event subscriptions (independent
// resources); IP policies with their rules (a rule needs its policy; deleting a policy deletes
// its rules); cloud endpoints on a few URLs (one endpoint per URL of an account, without
// pooling).
var kinds = []kind{
	apiKey:       {path: "/api_keys", listKey: "keys", prefix: "ak_", group: 0},
	ipPolicy:     {path: "/ip_policies", listKey: "ip_policies", prefix: "ipp_", group: 1},
	ipPolicyRule: {path: "/ip_policy_rules", listKey: "ip_policy_rules", prefix: "ipr_", group: 1, refusal: "ERR_NGROK_1414"},
	endpoint:     {path: "/endpoints", listKey: "endpoints", prefix: "ep_", group: 2, refusal: "ERR_NGROK_215"},
	subscription: {path: "/event_subscriptions", listKey: "event_subscriptions", prefix: "esb_", group: 3},
}

// groups is the number of independent groups of kinds.
const groups = 4

// kindOf is the kind of the resource id.
func kindOf(id string) int {
	for k, kd := range kinds {
		if strings.HasPrefix(id, kd.prefix) {
			return k
		}
	}
	return -1
}

// input is one operation as a client sent it.
type input struct {
	op   string // create, get, patch, delete, list
	kind int
	// id is the resource of a get, patch or delete; for a create, the resource it made if it
	// was applied, known afterwards from any answer to its Idempotency-Key ("" if none came).
	id    string
	key   string // a create's Idempotency-Key
	value string // a create's or patch's description
	// parent is a rule's policy (create); url an endpoint's URL (create, or the URL a PATCH
	// moves it to; "" keeps it).
	parent, url string
	// cidr is a rule's (create); the model does not need it, as no two rules share one.
	cidr string
}

// output is what the operation's answer said.
type output struct {
	outcome  outcome
	id       string   // a create's
	replayed bool     // a create answered from its key's record
	value    string   // a get's or patch's resource, as res.String shows it
	list     []string // a list's resources, "id=" and res.String, sorted
}

// res is a resource as the model sees it.
type res struct {
	desc   string
	parent string // a rule's policy
	url    string // an endpoint's URL
}

func (r res) String() string {
	s := r.desc
	if r.parent != "" {
		s += " in " + r.parent
	}
	if r.url != "" {
		s += " on " + r.url
	}
	return s
}

// modelState is the API's state as the model sees it: the resources by id and the
// Idempotency-Keys by the resource their create made. It is immutable.
type modelState struct {
	res  map[string]res
	keys map[string]string
}

func (s modelState) with(f func(res map[string]res, keys map[string]string)) modelState {
	n := modelState{res: make(map[string]res, len(s.res)+1), keys: make(map[string]string, len(s.keys)+1)}
	for k, v := range s.res {
		n.res[k] = v
	}
	for k, v := range s.keys {
		n.keys[k] = v
	}
	f(n.res, n.keys)
	return n
}

func (s modelState) String() string {
	var b []string
	for id, v := range s.res {
		b = append(b, id+"="+v.String())
	}
	sort.Strings(b)
	var k []string
	for key, id := range s.keys {
		k = append(k, key+"→"+id)
	}
	sort.Strings(k)
	return "{" + strings.Join(b, ", ") + "} keys {" + strings.Join(k, ", ") + "}"
}

// issued reports whether id was ever made by a create.
func (s modelState) issued(id string) bool {
	for _, v := range s.keys {
		if v == id {
			return true
		}
	}
	return false
}

// urlHolder is the endpoint on url other than self, "" if none.
func (s modelState) urlHolder(url, self string) string {
	for id, r := range s.res {
		if id != self && r.url == url && kindOf(id) == endpoint {
			return id
		}
	}
	return ""
}

// allowed reports whether the API's rules let in (a create or PATCH) happen in s: a rule's
// policy exists; an endpoint's URL is served by no other endpoint.
func (s modelState) allowed(in input) bool {
	switch {
	case in.kind == ipPolicyRule && in.op == "create":
		_, exists := s.res[in.parent]
		return exists
	case in.kind == endpoint && in.url != "":
		return s.urlHolder(in.url, in.id) == ""
	}
	return true
}

// step is the sequential specification of the API: the states an operation with its answer
// can lead to from s (none when the answer is impossible).
func step(s modelState, in input, out output) []modelState {
	same := []modelState{s}
	switch in.op {
	case "create":
		create := func() modelState {
			return s.with(func(rs map[string]res, keys map[string]string) {
				rs[in.id], keys[in.key] = res{desc: in.value, parent: in.parent, url: in.url}, in.id
			})
		}
		_, bound := s.keys[in.key]
		switch out.outcome {
		case ok:
			if out.replayed && bound {
				if s.keys[in.key] != out.id {
					return nil
				}
				return same
			}
			// Replayed with its key unbound: the request's own earlier attempt committed (the
			// table applied a write whose answer failed) and the server read that back, so this
			// request made the resource, as an unreplayed create does.
			if bound || s.issued(out.id) || out.id != in.id || !s.allowed(in) {
				return nil
			}
			return []modelState{create()}
		case refused:
			// A create whose key made a resource answers with that resource, never a refusal.
			if bound || s.allowed(in) {
				return nil
			}
			return same
		case notApplied:
			return same
		case unknown:
			if bound || in.id == "" || !s.allowed(in) {
				return same
			}
			return []modelState{s, create()}
		}
	case "get":
		v, exists := s.res[in.id]
		if (out.outcome == ok && exists && v.String() == out.value) || (out.outcome == notFound && !exists) {
			return same
		}
	case "patch", "delete":
		cur, exists := s.res[in.id]
		apply := func() modelState {
			return s.with(func(rs map[string]res, _ map[string]string) {
				if in.op == "patch" {
					cur.desc = in.value
					if in.url != "" {
						cur.url = in.url
					}
					rs[in.id] = cur
					return
				}
				delete(rs, in.id)
				for id, r := range rs {
					if r.parent == in.id {
						delete(rs, id) // a policy's rules go with it
					}
				}
			})
		}
		switch {
		case out.outcome == ok && exists && s.allowed(in):
			next := apply()
			if in.op == "patch" && next.res[in.id].String() != out.value {
				return nil
			}
			return []modelState{next}
		case out.outcome == notFound && !exists, out.outcome == notApplied:
			return same
		case out.outcome == refused && exists && !s.allowed(in):
			return same
		case out.outcome == unknown && exists && s.allowed(in):
			return []modelState{s, apply()}
		case out.outcome == unknown:
			return same
		}
	case "list":
		var want []string
		for id, v := range s.res {
			if kindOf(id) == in.kind {
				want = append(want, id+"="+v.String())
			}
		}
		sort.Strings(want)
		if out.outcome == ok && strings.Join(want, ",") == strings.Join(out.list, ",") {
			return same
		}
	}
	return nil
}

// partition splits a history into the operations of each group of kinds, which porcupine
// checks on their own: a history is linearizable exactly when each group's is.
func partition(ops []porcupine.Operation) [][]porcupine.Operation {
	by := make([][]porcupine.Operation, groups)
	for _, op := range ops {
		g := kinds[op.Input.(input).kind].group
		by[g] = append(by[g], op)
	}
	var out [][]porcupine.Operation
	for _, p := range by {
		if len(p) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// model is the API's sequential specification for porcupine.
var model = porcupine.NondeterministicModel{
	Partition: partition,
	Init:      func() []any { return []any{modelState{}} },
	Step: func(state, in, out any) []any {
		next := step(state.(modelState), in.(input), out.(output))
		res := make([]any, len(next))
		for i, n := range next {
			res[i] = n
		}
		return res
	},
	Equal: func(a, b any) bool { return a.(modelState).String() == b.(modelState).String() },
	Hash: func(s any) uint64 {
		h := fnv.New64a()
		h.Write([]byte(s.(modelState).String()))
		return h.Sum64()
	},
	DescribeOperation: func(in, out any) string { return describe(in.(input), out.(output)) },
	DescribeState:     func(s any) string { return s.(modelState).String() },
}

func describe(in input, out output) string {
	result := [...]string{"ok", "404", "refused", "not applied", "unknown"}[out.outcome]
	switch {
	case in.op == "create" && out.outcome == ok:
		result = fmt.Sprintf("%s (replayed %v)", out.id, out.replayed)
	case in.op == "get" && out.outcome == ok, in.op == "patch" && out.outcome == ok:
		result = out.value
	case in.op == "list" && out.outcome == ok:
		result = "[" + strings.Join(out.list, ", ") + "]"
	}
	what := in.value
	if in.parent != "" {
		what += " in " + in.parent
	}
	if in.url != "" {
		what += " on " + in.url
	}
	switch in.op {
	case "create":
		return fmt.Sprintf("create%s(%q key %s) → %s", kinds[in.kind].path, what, in.key, result)
	case "list":
		return fmt.Sprintf("list%s → %s", kinds[in.kind].path, result)
	case "get", "delete":
		return fmt.Sprintf("%s(%s) → %s", in.op, in.id, result)
	default:
		return fmt.Sprintf("patch(%s, %q) → %s", in.id, what, result)
	}
}
