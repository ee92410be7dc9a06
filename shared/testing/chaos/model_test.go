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
	// notApplied: a 503 ERR_NGROK_1501 or a 409; the operation changed nothing.
	notApplied
	// unknown: no answer, or a 503 ERR_NGROK_1502; the mutation may or may not have happened.
	unknown
)

// kind is one family the histories operate on: its collection path, list key and id prefix.
type kind struct{ path, listKey, prefix string }

// kinds are the families of the model: resources with a description, created, read, changed,
// deleted and listed.
var kinds = []kind{{"/api_keys", "keys", "ak_"}, {"/ip_policies", "ip_policies", "ipp_"}}

// input is one operation as a client sent it.
type input struct {
	op   string // create, get, patch, delete, list
	kind int
	// id is the resource of a get, patch or delete; for a create, the resource it made if it
	// was applied, known afterwards from any answer to its Idempotency-Key ("" if none came).
	id    string
	key   string // a create's Idempotency-Key
	value string // a create's or patch's description
}

// output is what the operation's answer said.
type output struct {
	outcome  outcome
	id       string   // a create's
	replayed bool     // a create answered from its key's record
	value    string   // a get's or patch's description
	list     []string // a list's resources, "id=description", sorted
}

// modelState is the API's state as the model sees it: the resources by id (with their
// description) and the Idempotency-Keys by the resource their create made. It is immutable.
type modelState struct {
	res  map[string]string
	keys map[string]string
}

func (s modelState) with(f func(res, keys map[string]string)) modelState {
	n := modelState{res: make(map[string]string, len(s.res)+1), keys: make(map[string]string, len(s.keys)+1)}
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
		b = append(b, id+"="+v)
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

// step is the sequential specification of the API: the states an operation with its answer
// can lead to from s (none when the answer is impossible).
func step(s modelState, in input, out output) []modelState {
	same := []modelState{s}
	switch in.op {
	case "create":
		create := func() modelState {
			return s.with(func(res, keys map[string]string) { res[in.id], keys[in.key] = in.value, in.id })
		}
		_, bound := s.keys[in.key]
		switch out.outcome {
		case ok:
			if out.replayed {
				if s.keys[in.key] != out.id {
					return nil
				}
				return same
			}
			if bound || s.issued(out.id) || out.id != in.id {
				return nil
			}
			return []modelState{create()}
		case notApplied:
			return same
		case unknown:
			if bound || in.id == "" {
				return same
			}
			return []modelState{s, create()}
		}
	case "get":
		v, exists := s.res[in.id]
		if (out.outcome == ok && exists && v == out.value) || (out.outcome == notFound && !exists) {
			return same
		}
	case "patch", "delete":
		_, exists := s.res[in.id]
		apply := func() modelState {
			return s.with(func(res, _ map[string]string) {
				if in.op == "patch" {
					res[in.id] = in.value
				} else {
					delete(res, in.id)
				}
			})
		}
		switch {
		case out.outcome == ok && exists && (in.op == "delete" || out.value == in.value):
			return []modelState{apply()}
		case out.outcome == notFound && !exists, out.outcome == notApplied:
			return same
		case out.outcome == unknown && exists:
			return []modelState{s, apply()}
		case out.outcome == unknown:
			return same
		}
	case "list":
		var want []string
		for id, v := range s.res {
			if strings.HasPrefix(id, kinds[in.kind].prefix) {
				want = append(want, id+"="+v)
			}
		}
		sort.Strings(want)
		if out.outcome == ok && strings.Join(want, ",") == strings.Join(out.list, ",") {
			return same
		}
	}
	return nil
}

// model is the API's sequential specification for porcupine.
var model = porcupine.NondeterministicModel{
	Init: func() []any { return []any{modelState{}} },
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
	res := [...]string{"ok", "404", "not applied", "unknown"}[out.outcome]
	switch {
	case in.op == "create" && out.outcome == ok:
		res = fmt.Sprintf("%s (replayed %v)", out.id, out.replayed)
	case in.op == "get" && out.outcome == ok, in.op == "patch" && out.outcome == ok:
		res = out.value
	case in.op == "list" && out.outcome == ok:
		res = "[" + strings.Join(out.list, ", ") + "]"
	}
	switch in.op {
	case "create":
		return fmt.Sprintf("create%s(%q key %s) → %s", kinds[in.kind].path, in.value, in.key, res)
	case "list":
		return fmt.Sprintf("list%s → %s", kinds[in.kind].path, res)
	case "get", "delete":
		return fmt.Sprintf("%s(%s) → %s", in.op, in.id, res)
	default:
		return fmt.Sprintf("patch(%s, %q) → %s", in.id, in.value, res)
	}
}
