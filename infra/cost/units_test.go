package cost_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/samples"
	"tunnelapi/shared/testing/testkit"
)

// ruleMeter is a DynamoDB client that, for each transaction, reads every item it writes or
// checks before and after the call (as meter does) and keeps each item's write units by
// DynamoDB's rule, for unitsCheck to compare with what the store counted.
type ruleMeter struct {
	store.Client
	m *meter
	c *unitsCheck
}

func (r *ruleMeter) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	before, err := r.m.sizes(ctx, in)
	if err != nil {
		return nil, err
	}
	out, err := r.Client.TransactWriteItems(ctx, in, opts...)
	if err != nil {
		return out, err
	}
	after, err := r.m.sizes(ctx, in)
	if err != nil {
		return nil, err
	}
	want := make([]float64, len(before))
	for i := range before {
		want[i] = txUnits(before[i:i+1], after[i:i+1])
		if k := itemKey(in.TransactItems[i]); isSmall(k) && max(before[i], after[i]) > store.SmallItemBytes {
			r.c.fail(fmt.Sprintf("the item at %v takes %d bytes, more than store.SmallItemBytes", k, max(before[i], after[i])))
		}
	}
	r.c.expect(&in.TransactItems[0], want)
	return out, nil
}

// itemKey is the key of a transaction's write.
func itemKey(w types.TransactWriteItem) store.Key {
	var av map[string]types.AttributeValue
	switch {
	case w.Put != nil:
		av = w.Put.Item
	case w.Update != nil:
		av = w.Update.Key
	case w.Delete != nil:
		av = w.Delete.Key
	case w.ConditionCheck != nil:
		av = w.ConditionCheck.Key
	}
	s := func(name string) string {
		v, _ := av[name].(*types.AttributeValueMemberS)
		if v == nil {
			return ""
		}
		return v.Value
	}
	return store.Key{PK: s(store.AttrPK), SK: s(store.AttrSK)}
}

// isSmall reports whether k is a token's or an account's key, whose items the store bounds by
// store.SmallItemBytes.
func isSmall(k store.Key) bool {
	return k == store.TokenKey(strings.TrimPrefix(k.PK, "T#")) ||
		k == store.AccountKey(strings.TrimPrefix(k.PK, "A#"))
}

// localUnits is what DynamoDB Local reports for a transaction whose writes cost units each:
// the sum of their distinct values (two 2-unit Puts report 2, a 2-unit and a 4-unit one 6),
// where DynamoDB sums every write.
func localUnits(units []float64) float64 {
	var sum float64
	for i, u := range units {
		if !slices.Contains(units[:i], u) {
			sum += u
		}
	}
	return sum
}

// unitsCheck compares, for every committed transaction, the write units the store counted
// with the rule's (ruleMeter) and with what DynamoDB Local reported.
type unitsCheck struct {
	mu            sync.Mutex
	want          map[*types.TransactWriteItem][]float64
	counted, asks int
	askedShapes   map[string]int
	problems      []string
}

func (c *unitsCheck) expect(first *types.TransactWriteItem, want []float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.want[first] = want
}

func (c *unitsCheck) fail(problem string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.problems = append(c.problems, problem)
}

// check is the store's DB.CheckUnits.
func (c *unitsCheck) check(items []types.TransactWriteItem, counted []float64, reported float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	want, ok := c.want[&items[0]]
	delete(c.want, &items[0])
	if !ok {
		c.problems = append(c.problems, fmt.Sprintf("a transaction of %d writes went past the meter", len(items)))
		return
	}
	if counted == nil {
		c.asks++
		c.askedShapes[shape(items)]++
		return
	}
	c.counted++
	if !slices.Equal(counted, want) {
		c.problems = append(c.problems, fmt.Sprintf("%s: counted %v, DynamoDB's rule %v", shape(items), counted, want))
	}
	if localUnits(counted) != reported {
		c.problems = append(c.problems, fmt.Sprintf("%s: counted %v, DynamoDB Local reported %v", shape(items), counted, reported))
	}
}

// shape names a transaction's writes by kind and key prefix.
func shape(items []types.TransactWriteItem) string {
	var parts []string
	for _, w := range items {
		k := itemKey(w)
		kind := "check"
		switch {
		case w.Put != nil:
			kind = "put"
		case w.Update != nil:
			kind = "update"
		case w.Delete != nil:
			kind = "delete"
		}
		pk := k.PK[:min(2, len(k.PK))] + "*"
		if rest, ok := strings.CutPrefix(k.PK, "A#"); ok {
			if _, coll, ok := strings.Cut(rest, "#"); ok {
				pk = "A#*#" + coll
			}
		}
		sk, _, _ := strings.Cut(k.SK, "_")
		parts = append(parts, kind+" "+pk+"|"+sk)
	}
	return strings.Join(parts, ", ")
}

// Every function's sample events (every family's create, get, list, update and delete, and
// their set-ups) run against DynamoDB Local with each transaction metered: the write units the
// store counts for each item must be DynamoDB's rule applied to the item's sizes read before and
// after the call, and their sum as DynamoDB Local sums them its report. Transactions the store
// cannot count ask DynamoDB, and are listed.
func TestCountedWriteUnitsAreDynamoDBs(t *testing.T) {
	s, a := testkit.AppAccount(t)
	c := newUnitsCheck()
	meterOn := func(db *store.DB) { c.meter(t, db) }
	meterOn(s.DB)
	for _, f := range app.Functions() {
		files, err := app.SampleFiles("../..", f.Dir)
		if err != nil {
			t.Fatal(err)
		}
		deps, _ := s.Instance(t, f.Families...)
		if deps.Kit.DB != s.DB {
			meterOn(deps.Kit.DB)
		}
		handler := deps.Handler(f.Families...)
		vars, err := samples.Setup(t.Context(), "../..", f.Dir, testkit.SampleMakers(t, a))
		if err != nil {
			t.Fatal(err)
		}
		vars[app.TokenPlaceholder] = a.Token
		for _, file := range files {
			ev := testkit.ReadSample(t, file, vars)
			res, err := handler(t.Context(), ev)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if res.StatusCode >= 500 {
				t.Fatalf("%s: %d %s", file, res.StatusCode, res.Body)
			}
			app.SampleCreated(vars, ev.RouteKey, []byte(res.Body))
		}
	}
	c.report(t)
	if c.counted == 0 {
		t.Error("the store counted no transaction's units")
	}
}

// newUnitsCheck returns an empty unitsCheck.
func newUnitsCheck() *unitsCheck {
	return &unitsCheck{want: map[*types.TransactWriteItem][]float64{}, askedShapes: map[string]int{}}
}

// meter has db's transactions metered by ruleMeter and checked by c until the test ends.
func (c *unitsCheck) meter(t *testing.T, db *store.DB) {
	orig := db.Client
	db.Client = &ruleMeter{Client: orig, m: &meter{Client: orig}, c: c}
	db.CheckUnits = c.check
	t.Cleanup(func() { db.Client, db.CheckUnits = orig, nil })
}

// report fails t for every count that differed, and logs the counts and the shapes asked.
func (c *unitsCheck) report(t *testing.T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.problems {
		t.Error(p)
	}
	t.Logf("%d transactions counted by the store, each as DynamoDB's rule and DynamoDB Local have it; %d asked:", c.counted, c.asks)
	for _, sh := range slices.Sorted(maps.Keys(c.askedShapes)) {
		t.Logf("  asked %d× %s", c.askedShapes[sh], sh)
	}
}

// The load benchmark's mix (infra/local's BenchmarkLoadVs2800fb0: an API key, an IP policy with
// a rule moved to another CIDR, an internal endpoint and an event subscription, each created,
// read, updated and deleted), with each transaction metered: the store counts them as DynamoDB's
// rule and DynamoDB Local have it, and asks DynamoDB, whose answer costs DynamoDB Local a job per
// item on its one SQLite thread, only for an IP policy rule's writes.
func TestLoadMixWritesAreCounted(t *testing.T) {
	s, a := testkit.AppAccount(t)
	c := newUnitsCheck()
	c.meter(t, s.DB)
	for n := range 3 {
		tag := fmt.Sprint("load-", n)
		id := func(path string, body any) string {
			return a.Do(t, "POST", path, body).Expect(t, http.StatusCreated)["id"].(string)
		}
		key := id("/api_keys", map[string]any{"description": tag})
		a.Do(t, "PATCH", "/api_keys/"+key, map[string]any{"metadata": tag}).Expect(t, http.StatusOK)
		a.Do(t, "DELETE", "/api_keys/"+key, nil).Expect(t, http.StatusNoContent)
		policy := id("/ip_policies", map[string]any{"description": tag})
		rule := id("/ip_policy_rules", map[string]any{"ip_policy_id": policy, "cidr": "10.0.0.0/24", "action": "allow"})
		a.Do(t, "PATCH", "/ip_policy_rules/"+rule, map[string]any{"cidr": "10.1.0.0/16"}).Expect(t, http.StatusOK)
		a.Do(t, "DELETE", "/ip_policy_rules/"+rule, nil).Expect(t, http.StatusNoContent)
		a.Do(t, "DELETE", "/ip_policies/"+policy, nil).Expect(t, http.StatusNoContent)
		endpoint := id("/endpoints", map[string]any{"url": "tcp://" + tag + ".internal:5432", "traffic_policy": "on_tcp_connect: []"})
		a.Do(t, "DELETE", "/endpoints/"+endpoint, nil).Expect(t, http.StatusNoContent)
		sub := id("/event_subscriptions", map[string]any{"description": tag})
		a.Do(t, "PATCH", "/event_subscriptions/"+sub, map[string]any{"metadata": tag}).Expect(t, http.StatusOK)
		a.Do(t, "DELETE", "/event_subscriptions/"+sub, nil).Expect(t, http.StatusNoContent)
	}
	c.report(t)
	// An IP policy rule's writes update its policy's index unread, so they ask.
	asks := 0
	for shape, n := range c.askedShapes {
		if !strings.Contains(shape, "|"+ids.IPPolicyRule) {
			t.Errorf("asked %d× %s: only an IP policy rule's writes may ask", n, shape)
		}
		asks += n
	}
	if c.counted+asks != 3*13 || c.counted != 3*10 {
		t.Errorf("%d transactions counted and %d asked, want 30 counted and the rules' 9 asked", c.counted, asks)
	}
}
