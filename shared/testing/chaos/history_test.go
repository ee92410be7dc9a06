package chaos

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/testing/testkit"
)

// history is one run of concurrent clients on a fresh account, recorded for the checker.
type history struct {
	f     *faulty
	acct  *testkit.Account
	start time.Time
	mu    sync.Mutex
	ops   []porcupine.Operation
	// ids are the resources creates answered with, by kind: what clients get, patch and delete.
	ids [][]string
	// created holds each create's key's resource, once an answer named it; pending the keys
	// of creates without such an answer yet.
	created map[string]string
	pending map[string]input
	// answers counts the answers by class ("201", "503 ERR_NGROK_1501", "lost", ...); dishonest
	// lists those no fault excuses.
	answers   map[string]int
	dishonest []string
	seq       int
	// urls are the URLs the history's endpoints are created on and moved between: fewer than
	// the endpoints clients try to make, so the rule of one endpoint per URL is at work. They
	// are under a wildcard the account reserved (a public endpoint's host is on its domain).
	urls []string
}

func newHistory(t *testing.T, f *faulty, acct *testkit.Account) *history {
	parent := testkit.UniqueName("chaos", "example.com")
	reserve := map[string]any{"domain": "*." + parent}
	key := http.Header{resource.IdempotencyHeader: {"chaos-urls"}}
	// Faults may already be on: the reservation is sent again, with its key, until answered.
	for try := 0; ; try++ {
		a := f.do(acct.Token, "POST", "/reserved_domains", key, reserve)
		if a.err == nil && a.status == http.StatusCreated {
			break
		}
		if try == 20 {
			t.Fatalf("reserving *.%s: %d %s %v", parent, a.status, a.body, a.err)
		}
	}
	return &history{f: f, acct: acct, start: time.Now(), ids: make([][]string, len(kinds)),
		created: map[string]string{}, pending: map[string]input{}, answers: map[string]int{},
		urls: []string{"https://one." + parent, "https://two." + parent, "https://three." + parent}}
}

func (h *history) now() int64 { return int64(time.Since(h.start)) }

// run sends in and records it as client c's operation.
func (h *history) run(c int, in input) output {
	k := kinds[in.kind]
	var a answer
	call := h.now()
	switch in.op {
	case "create":
		a = h.f.do(h.acct.Token, "POST", k.path, http.Header{resource.IdempotencyHeader: {in.key}}, createBody(in))
	case "get":
		a = h.f.do(h.acct.Token, "GET", k.path+"/"+in.id, nil, nil)
	case "patch":
		body := map[string]any{"description": in.value}
		if in.url != "" {
			body["url"] = in.url
		}
		a = h.f.do(h.acct.Token, "PATCH", k.path+"/"+in.id, nil, body)
	case "delete":
		a = h.f.do(h.acct.Token, "DELETE", k.path+"/"+in.id, nil, nil)
	case "list":
		a = h.f.do(h.acct.Token, "GET", k.path, nil, nil)
	}
	ret := h.now()
	out := h.interpret(in, a)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.answers[class(a)]++
	if why := honest(a, k.refusal); why != "" {
		h.dishonest = append(h.dishonest, fmt.Sprintf("%s: %s", describe(in, out), why))
	}
	if in.op == "create" {
		if out.outcome == ok {
			h.created[in.key] = out.id
			delete(h.pending, in.key)
			if !out.replayed || !contains(h.ids[in.kind], out.id) {
				h.ids[in.kind] = append(h.ids[in.kind], out.id)
			}
		} else if _, done := h.created[in.key]; !done {
			h.pending[in.key] = in
		}
	}
	if out.outcome == unknown {
		ret = math.MaxInt64 // it may take effect at any time after its call
		if in.op == "get" || in.op == "list" {
			return out // a read nobody saw the answer of tells nothing
		}
	}
	if out.outcome >= refused && (in.op == "get" || in.op == "list") {
		return out
	}
	h.ops = append(h.ops, porcupine.Operation{ClientId: c, Input: in, Call: call, Output: out, Return: ret})
	return out
}

// trafficPolicy is the traffic policy of the histories' endpoints.
const trafficPolicy = "on_http_request:\n  - actions:\n      - type: deny\n"

// createBody is the body of the create in.
func createBody(in input) map[string]any {
	body := map[string]any{"description": in.value}
	switch in.kind {
	case ipPolicyRule:
		body["ip_policy_id"], body["cidr"], body["action"] = in.parent, in.cidr, "allow"
	case endpoint:
		body["url"], body["type"], body["traffic_policy"] = in.url, "cloud", trafficPolicy
	}
	return body
}

// class names an answer for the tally.
func class(a answer) string {
	switch {
	case a.err != nil:
		return "lost"
	case a.status >= 400:
		return fmt.Sprintf("%d %s", a.status, a.errorCode())
	}
	return fmt.Sprint(a.status)
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// interpret reads an answer as the model's output.
func (h *history) interpret(in input, a answer) output {
	switch {
	case a.err != nil || (a.status == 503 && a.errorCode() == "ERR_NGROK_1502"):
		return output{outcome: unknown}
	case a.status == 503 || a.status == 429:
		return output{outcome: notApplied}
	case a.status == 404:
		return output{outcome: notFound}
	case a.status == 400 && kinds[in.kind].refusal != "" && a.errorCode() == kinds[in.kind].refusal:
		return output{outcome: refused}
	case a.status >= 300:
		return output{outcome: unknown} // dishonest: counted, and the model gets no claim from it
	}
	out := output{outcome: ok}
	switch in.op {
	case "create", "get", "patch":
		var r shown
		json.Unmarshal(a.body, &r)
		out.id, out.value, out.replayed = r.ID, r.res().String(), a.header.Get(resource.ReplayedHeader) == "true"
	case "list":
		var l map[string]json.RawMessage
		json.Unmarshal(a.body, &l)
		var items []shown
		json.Unmarshal(l[kinds[in.kind].listKey], &items)
		for _, it := range items {
			if it.ID != h.acct.APIKeyID {
				out.list = append(out.list, it.ID+"="+it.res().String())
			}
		}
		sort.Strings(out.list)
	}
	return out
}

// shown is the part of a resource's wire form the model keeps.
type shown struct {
	ID          string `json:"id"`
	Description string `json:"description"`
	IPPolicy    struct {
		ID string `json:"id"`
	} `json:"ip_policy"`
	URL string `json:"url"`
}

func (s shown) res() res { return res{desc: s.Description, parent: s.IPPolicy.ID, url: s.URL} }

// client runs operations as client c until the history has n of them.
func (h *history) client(c, n int) {
	r := rand.New(rand.NewPCG(uint64(c), uint64(h.start.UnixNano())))
	for {
		h.mu.Lock()
		if h.seq >= n {
			h.mu.Unlock()
			return
		}
		h.seq++
		seq := h.seq
		kind := r.IntN(len(kinds))
		ids := append([]string(nil), h.ids[kind]...)
		policies := append([]string(nil), h.ids[ipPolicy]...)
		h.mu.Unlock()
		if kind == ipPolicyRule && len(policies) == 0 {
			kind, ids = ipPolicy, nil
		}
		value := fmt.Sprintf("c%d-%d", c, seq)
		// An endpoint's PATCH moves it to another URL one time in three.
		url := ""
		if kind == endpoint && r.IntN(3) == 0 {
			url = h.urls[r.IntN(len(h.urls))]
		}
		p := r.IntN(100)
		switch {
		case len(ids) < 2 || p < 15:
			in := input{op: "create", kind: kind, key: fmt.Sprintf("k%d-%d", c, seq), value: value}
			switch kind {
			case ipPolicyRule:
				// Each rule its own CIDR: a duplicate is refused with a code of its own (1408).
				in.parent, in.cidr = policies[r.IntN(len(policies))], fmt.Sprintf("10.%d.%d.0/24", seq/256, seq%256)
			case endpoint:
				in.url = h.urls[r.IntN(len(h.urls))]
			}
			// A client whose create got no answer sends it again with its key, as a client should.
			for try := 0; try < 3 && h.run(c, in).outcome >= notApplied; try++ {
			}
		case p < 40:
			h.run(c, input{op: "get", kind: kind, id: ids[r.IntN(len(ids))]})
		case p < 65:
			h.run(c, input{op: "patch", kind: kind, id: ids[r.IntN(len(ids))], value: value, url: url})
		case p < 75:
			h.run(c, input{op: "delete", kind: kind, id: ids[r.IntN(len(ids))]})
		default:
			h.run(c, input{op: "list", kind: kind})
		}
	}
}

// record runs clients concurrent clients for n operations under the faults active now, then
// heals the faults, settles every create left without an answer by sending it again with its
// key, and lists each kind: the history ends in a known state.
func (h *history) record(clients, n int) {
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() { defer wg.Done(); h.client(c, n) }()
	}
	wg.Wait()
	h.f.heal()
	for key, in := range h.pending {
		if _, done := h.created[key]; !done {
			h.run(0, in)
		}
	}
	for k := range kinds {
		h.run(0, input{op: "list", kind: k})
	}
	// Each create learns the resource its key made, from whichever answer named it.
	for i, op := range h.ops {
		in := op.Input.(input)
		if in.op == "create" {
			in.id = h.created[in.key]
			h.ops[i].Input = in
		}
	}
}
