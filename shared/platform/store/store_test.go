package store_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/fakedb"
)

type thing struct {
	store.Meta
	Name string `dynamodbav:"name"`
}

func newThing(account string, n int) *thing {
	id := ids.NewAt(ids.APIKey, time.Unix(1700000000+int64(n), 0))
	return &thing{Meta: store.Meta{Key: store.ResourceKey(account, id), ID: id, AccountID: account, Version: 1}, Name: fmt.Sprint("n", n)}
}

func TestKeys(t *testing.T) {
	id := ids.NewAt(ids.APIKey, time.Unix(1700000000, 0))
	tests := []struct {
		name string
		got  store.Key
		want store.Key
	}{
		{"resource", store.ResourceKey("acct", id), store.Key{PK: "A#acct#" + ids.APIKey, SK: id}},
		{"resource without a valid id keeps the prefix", store.ResourceKey("acct", "xx_notanid"), store.Key{PK: "A#acct#xx", SK: "xx_notanid"}},
		{"resource id with underscores before its KSUID", store.ResourceKey("acct", "x_y_"+id[3:]), store.Key{PK: "A#acct#x_y", SK: "x_y_" + id[3:]}},
		{"resource id with underscores and no KSUID", store.ResourceKey("acct", "x_y_z"), store.Key{PK: "A#acct#x", SK: "x_y_z"}},
		{"resource id without an underscore", store.ResourceKey("acct", "xyz"), store.Key{PK: "A#acct#xyz", SK: "xyz"}},
		{"account", store.AccountKey("acct"), store.Key{PK: "A#acct", SK: "ACCOUNT"}},
		{"ipx", store.IPXKey("acct", 42), store.Key{PK: "A#acct", SK: "IPX#42"}},
		{"token", store.TokenKey("abc"), store.Key{PK: "T#abc", SK: "T"}},
		{"guard", store.GuardKey("domain", "x.example"), store.Key{PK: "U#domain#x.example", SK: "U"}},
		{"event log", store.EventLogKey("acct", "ev_1"), store.Key{PK: "E#acct", SK: "ev_1"}},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, tc.got, tc.want)
		}
	}
	if got := store.Collection("acct", ids.APIKey); got != "A#acct#"+ids.APIKey {
		t.Errorf("Collection = %q", got)
	}
	// The outbox key is stable and inside one of the shards.
	k := store.OutboxKey("ev_1")
	if k != store.OutboxKey("ev_1") || k.SK != "ev_1" || !strings.HasPrefix(k.PK, "O#") {
		t.Errorf("OutboxKey = %+v", k)
	}
	shards := map[string]bool{}
	for i := range 200 {
		shards[store.OutboxKey(fmt.Sprint("ev_", i)).PK] = true
	}
	if len(shards) != store.OutboxShards {
		t.Errorf("200 events used %d shards, want %d", len(shards), store.OutboxShards)
	}
	if h := store.TokenHash("secret"); len(h) != 64 || strings.Contains(h, "secret") {
		t.Errorf("TokenHash = %q", h)
	}
}

func TestGet(t *testing.T) {
	ctx := context.Background()
	f := fakedb.New()
	db := store.New(f, "t")
	it := newThing("acct", 1)
	if err := f.Seed(it); err != nil {
		t.Fatal(err)
	}
	var got thing
	if err := db.Get(ctx, it.Key, &got); err != nil || got.Name != it.Name || got.ID != it.ID {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	err := db.Get(ctx, store.AccountKey("nobody"), &got)
	if !store.IsNotFound(err) {
		t.Fatalf("absent: %v, want ErrNotFound", err)
	}
	f.Fail(fakedb.OpGetItem, fakedb.Throttled())
	err = db.Get(ctx, it.Key, &got)
	var thr *types.ProvisionedThroughputExceededException
	if !errors.As(err, &thr) || !strings.Contains(err.Error(), "store.Get(") {
		t.Fatalf("throttled: %v; want the SDK error wrapped with the operation", err)
	}
}

func TestGetMany(t *testing.T) {
	ctx := context.Background()
	f := fakedb.New()
	db := store.New(f, "t")
	a, b := newThing("acct", 1), newThing("acct", 2)
	f.Seed(a)
	f.Seed(b)
	missing := store.AccountKey("acct")
	items, err := db.GetMany(ctx, b.Key, missing, a.Key, b.Key)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 4 || items[1] != nil || items[0] == nil || items[3] == nil {
		t.Fatalf("items = %v", items)
	}
	var got thing
	store.Unmarshal(items[2], &got)
	if got.ID != a.ID {
		t.Errorf("order: items[2] is %s, want %s", got.ID, a.ID)
	}

	// Small batches (a request's read) and large ones (a sweep) find keys differently; both
	// return each key's item at its position, duplicates and missing keys included.
	for _, n := range []int{3, 40} {
		var keys []store.Key
		for i := range n {
			th := newThing("batch", 100+i)
			if i%3 != 2 {
				f.Seed(th)
			}
			keys = append(keys, th.Key)
			if i%4 == 1 {
				keys = append(keys, th.Key)
			}
		}
		keys = append(keys, keys[0])
		items, err := db.GetMany(ctx, keys...)
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range keys {
			var th thing
			if items[i] != nil {
				store.Unmarshal(items[i], &th)
			}
			if stored := f.Item(k.PK, k.SK) != nil; (items[i] != nil) != stored || stored && th.Key != k {
				t.Fatalf("%d keys: item %d (%v) is %v", len(keys), i, k, items[i])
			}
		}
	}

	// Keys left unprocessed are asked for again, a bounded number of times.
	f.LeaveUnprocessed(2)
	if items, err = db.GetMany(ctx, a.Key); err != nil || items[0] == nil {
		t.Errorf("after 2 unprocessed rounds: %v, %v", items, err)
	}
	f.LeaveUnprocessed(5)
	if _, err = db.GetMany(ctx, a.Key); err == nil || !strings.Contains(err.Error(), "unprocessed") {
		t.Errorf("after 5 unprocessed rounds: %v, want an error", err)
	}

	keys := make([]store.Key, store.MaxBatchGet+1)
	if _, err = db.GetMany(ctx, keys...); err == nil {
		t.Error("more than MaxBatchGet keys: no error")
	}
	f.Fail(fakedb.OpBatchGetItem, errors.New("boom"))
	if _, err = db.GetMany(ctx, a.Key); err == nil || !strings.Contains(err.Error(), "store.GetMany(1 keys): boom") {
		t.Errorf("failure: %v, want it named", err)
	}
}

func TestPageQuery(t *testing.T) {
	ctx := context.Background()
	f, db, all := seeded(5)
	f.Seed(newThing("other", 9)) // another account's collection never shows
	part := store.Collection("acct", ids.APIKey)
	tests := []struct {
		before   string
		limit    int
		want     []int
		wantMore bool
	}{
		{"", 2, []int{4, 3}, true},
		{all[3].ID, 2, []int{2, 1}, true},
		{all[1].ID, 2, []int{0}, false},
		{"", 5, []int{4, 3, 2, 1, 0}, false},
		{"", 100, []int{4, 3, 2, 1, 0}, false},
		{all[0].ID, 10, nil, false},
	}
	for _, tc := range tests {
		items, more, err := db.PageQuery(ctx, part, tc.before, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for _, raw := range items {
			var it thing
			store.Unmarshal(raw, &it)
			for i, a := range all {
				if a.ID == it.ID {
					got = append(got, i)
				}
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) || more != tc.wantMore {
			t.Errorf("before=%q limit=%d: got %v more=%v, want %v more=%v", tc.before, tc.limit, got, more, tc.want, tc.wantMore)
		}
	}
	f.Fail(fakedb.OpQuery, fakedb.Throttled())
	if _, _, err := db.PageQuery(ctx, part, "", 1); err == nil || !strings.Contains(err.Error(), "store.PageQuery(") {
		t.Errorf("throttled page: %v", err)
	}
}

// queryLimits are the Limit of each Query f received, in order.
func queryLimits(f *fakedb.Table) []int32 {
	var out []int32
	for _, c := range f.Calls() {
		if in, ok := c.Input.(*dynamodb.QueryInput); ok {
			out = append(out, aws.ToInt32(in.Limit))
		}
	}
	return out
}

// TestPageQueryFollowsAnswers: DynamoDB ends an answer at 1 MB whatever its Limit (the fake
// here after two items). A page asks again from where an answer ended, each time for no more
// than the page and the one item that tells more still need, until it holds them;
// PageQueryStart returns what one answer holds, with more when DynamoDB ended it, and asks
// again only for the item that tells more; QueryBelow and QueryAll follow answers to their
// limit or the end.
func TestPageQueryFollowsAnswers(t *testing.T) {
	ctx := context.Background()
	f, db, all := seeded(5)
	f.EndAnswersAfter(2)
	part := store.Collection("acct", ids.APIKey)
	idsOf := func(things ...*thing) (out []string) {
		for _, it := range things {
			out = append(out, it.ID)
		}
		return out
	}
	tests := []struct {
		name     string
		read     func() ([]store.Item, bool, error)
		want     []string
		wantMore bool
		limits   []int32
	}{
		{"the whole collection", func() ([]store.Item, bool, error) { return db.PageQuery(ctx, part, "", 100) },
			idsOf(all[4], all[3], all[2], all[1], all[0]), false, []int32{101, 99, 97}},
		{"a page and the item after it", func() ([]store.Item, bool, error) { return db.PageQuery(ctx, part, "", 3) },
			idsOf(all[4], all[3], all[2]), true, []int32{4, 2}},
		{"a page that ends the collection", func() ([]store.Item, bool, error) { return db.PageQuery(ctx, part, all[3].ID, 3) },
			idsOf(all[2], all[1], all[0]), false, []int32{4, 2}},
		{"the start of a page", func() ([]store.Item, bool, error) { return db.PageQueryStart(ctx, part, "", 100) },
			idsOf(all[4], all[3]), true, []int32{101}},
		{"the start of a page that holds it", func() ([]store.Item, bool, error) { return db.PageQueryStart(ctx, part, all[1].ID, 100) },
			idsOf(all[0]), false, []int32{101}},
		{"the start of a page of one answer and the item after it", func() ([]store.Item, bool, error) {
			return db.PageQueryStart(ctx, part, "", 2)
		}, idsOf(all[4], all[3]), true, []int32{3, 1}},
		{"items below a bound", func() ([]store.Item, bool, error) {
			items, err := db.QueryBelow(ctx, part, all[4].ID, 3)
			return items, false, err
		}, idsOf(all[0], all[1], all[2]), false, []int32{3, 1}},
		{"every item", func() ([]store.Item, bool, error) { items, err := db.QueryAll(ctx, part); return items, false, err },
			idsOf(all[0], all[1], all[2], all[3], all[4]), false, []int32{0, 0, 0}},
	}
	for _, tc := range tests {
		before := len(queryLimits(f))
		items, more, err := tc.read()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := itemIDs(t, items); fmt.Sprint(got) != fmt.Sprint(tc.want) || more != tc.wantMore {
			t.Errorf("%s: got %v more=%v, want %v more=%v", tc.name, got, more, tc.want, tc.wantMore)
		}
		if got := queryLimits(f)[before:]; fmt.Sprint(got) != fmt.Sprint(tc.limits) {
			t.Errorf("%s: queries with limits %v, want %v", tc.name, got, tc.limits)
		}
	}
}

func TestQueryAll(t *testing.T) {
	ctx := context.Background()
	_, db, _ := seeded(4)
	part := store.Collection("acct", ids.APIKey)
	items, err := db.QueryAll(ctx, part, "id")
	if err != nil || len(items) != 4 {
		t.Fatalf("QueryAll = %d items, %v", len(items), err)
	}
	if _, ok := items[0]["name"]; ok || items[0]["id"] == nil {
		t.Errorf("projection not applied: %v", items[0])
	}
}

// TestPut: an unconditional write that replaces the item, errors wrapped with the operation.
func TestPut(t *testing.T) {
	ctx := context.Background()
	f := fakedb.New()
	db := store.New(f, "t")
	it := newThing("acct", 1)
	if err := db.Put(ctx, it); err != nil {
		t.Fatal(err)
	}
	it.Name = "replaced"
	if err := db.Put(ctx, it); err != nil {
		t.Fatal(err)
	}
	var got thing
	if err := store.Unmarshal(f.Item(it.PK, it.SK), &got); err != nil || got.Name != "replaced" {
		t.Errorf("after two puts: %+v, %v", got, err)
	}
	f.Fail(fakedb.OpPutItem, fakedb.Throttled())
	if err := db.Put(ctx, it); err == nil || !strings.Contains(err.Error(), "store.Put") {
		t.Errorf("a failing put: %v", err)
	}
}

// TestCommit covers how a transaction's outcome becomes the error callers act on.
func TestCommit(t *testing.T) {
	ctx := context.Background()
	inUse := &api.Error{Status: http.StatusConflict, Msg: "in use"}
	existing := newThing("acct", 1)
	fresh := newThing("acct", 2)
	build := func() *store.Tx {
		tx := &store.Tx{}
		tx.Put("new", fresh, store.Absent())
		tx.Check("parent", existing.Key, store.AtVersion(1))
		return tx
	}
	tests := []struct {
		name   string
		script error
		before func(f *fakedb.Table)
		refuse map[string]error
		check  func(t *testing.T, err error)
	}{
		{name: "commits", check: func(t *testing.T, err error) {
			if err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a real failed condition names its label", before: func(f *fakedb.Table) { f.Seed(fresh) },
			check: func(t *testing.T, err error) {
				if !store.ConditionFailed(err, "new") || store.ConditionFailed(err, "parent") || store.IsConflict(err) {
					t.Fatalf("err = %v", err)
				}
				if !strings.Contains(err.Error(), "store.Commit(new,parent)") {
					t.Errorf("err does not name the operation: %v", err)
				}
			}},
		{name: "scripted condition failure", script: fakedb.Canceled(fakedb.ReasonNone, fakedb.ReasonConditionalCheck),
			check: func(t *testing.T, err error) {
				if !store.ConditionFailed(err, "parent") || store.ConditionFailed(err, "new") {
					t.Fatalf("err = %v", err)
				}
			}},
		{name: "refused label becomes the family's 4xx", script: fakedb.Canceled(fakedb.ReasonNone, fakedb.ReasonConditionalCheck),
			refuse: map[string]error{"parent": inUse},
			check: func(t *testing.T, err error) {
				e, ok := api.AsError(err)
				if !ok || e != inUse || e.Status != http.StatusConflict || !errors.Is(err, inUse) {
					t.Fatalf("err = %v, want the refusal", err)
				}
			}},
		{name: "refusal of another label is not used", script: fakedb.Canceled(fakedb.ReasonConditionalCheck, fakedb.ReasonNone),
			refuse: map[string]error{"parent": inUse},
			check: func(t *testing.T, err error) {
				if errors.Is(err, inUse) || !store.ConditionFailed(err, "new") {
					t.Fatalf("err = %v", err)
				}
			}},
		{name: "a refusal does not hide an unrefused failure", script: fakedb.Canceled(fakedb.ReasonConditionalCheck, fakedb.ReasonConditionalCheck),
			refuse: map[string]error{"parent": inUse},
			check: func(t *testing.T, err error) {
				if errors.Is(err, inUse) || !store.ConditionFailed(err, "new") || !store.ConditionFailed(err, "parent") {
					t.Fatalf("err = %v, want the cancellation naming both labels", err)
				}
			}},
		{name: "the first of several refusals", script: fakedb.Canceled(fakedb.ReasonConditionalCheck, fakedb.ReasonConditionalCheck),
			refuse: map[string]error{"parent": inUse, "new": api.Invalid("name", "taken")},
			check: func(t *testing.T, err error) {
				if e, ok := api.AsError(err); !ok || e.Msg != "taken" {
					t.Fatalf("err = %v, want the refusal of the first failed label", err)
				}
			}},
		{name: "conflict is retryable", script: fakedb.Canceled(fakedb.ReasonNone, fakedb.ReasonConflict),
			check: func(t *testing.T, err error) {
				if !store.IsConflict(err) {
					t.Fatalf("err = %v, want a conflict", err)
				}
			}},
		{name: "conflict with a failed condition is not retryable", script: fakedb.Canceled(fakedb.ReasonConditionalCheck, fakedb.ReasonConflict),
			check: func(t *testing.T, err error) {
				if store.IsConflict(err) || !store.ConditionFailed(err, "new") {
					t.Fatalf("err = %v", err)
				}
			}},
		// An earlier attempt of the same transaction may yet commit: retrying it as a new one
		// could apply it twice (the client's middleware makes it derrors.ErrOutcomeUnknown).
		{name: "transaction in progress is not a conflict", script: &types.TransactionInProgressException{},
			check: func(t *testing.T, err error) {
				var tip *types.TransactionInProgressException
				if store.IsConflict(err) || !errors.As(err, &tip) {
					t.Fatalf("err = %v", err)
				}
			}},
		{name: "throughput reason is neither", script: fakedb.Canceled(fakedb.ReasonThroughput, fakedb.ReasonNone),
			check: func(t *testing.T, err error) {
				var c *store.CanceledError
				if !errors.As(err, &c) || store.IsConflict(err) || len(c.Failed) != 0 || c.Reasons[0] != fakedb.ReasonThroughput {
					t.Fatalf("err = %v", err)
				}
			}},
		{name: "throttled request is passed on, named", script: fakedb.Throttled(),
			check: func(t *testing.T, err error) {
				var thr *types.ProvisionedThroughputExceededException
				if !errors.As(err, &thr) || store.IsConflict(err) || !strings.HasPrefix(err.Error(), "store.Commit(new,parent): ") {
					t.Fatalf("err = %v", err)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := fakedb.New()
			f.Seed(existing)
			if tc.before != nil {
				tc.before(f)
			}
			if tc.script != nil {
				f.Fail(fakedb.OpTransactWriteItems, tc.script)
			}
			tx := build()
			for l, e := range tc.refuse {
				tx.Refuse(l, e)
			}
			tc.check(t, store.New(f, "t").Commit(ctx, tx))
		})
	}
}

func TestCommitWrites(t *testing.T) {
	ctx := context.Background()
	f := fakedb.New()
	db := store.New(f, "t")
	it := newThing("acct", 1)
	f.Seed(it)
	gone := newThing("acct", 2)
	f.Seed(gone)
	tx := &store.Tx{}
	tx.Update("bump", it.Key, expression.Set(expression.Name("name"), expression.Value("renamed")).
		Add(expression.Name(store.AttrVersion), expression.Value(1)), store.Exists(), store.AtVersion(1))
	tx.Delete("gone", gone.Key, store.Unreferenced())
	if tx.Len() != 2 || !tx.Touches(it.Key) || tx.Touches(store.AccountKey("x")) {
		t.Fatalf("Len/Touches wrong")
	}
	if err := db.Commit(ctx, tx); err != nil {
		t.Fatal(err)
	}
	var got thing
	if err := db.Get(ctx, it.Key, &got); err != nil || got.Name != "renamed" || got.Version != 2 {
		t.Errorf("after update: %+v, %v", got, err)
	}
	if err := db.Get(ctx, gone.Key, &got); !store.IsNotFound(err) {
		t.Errorf("deleted item: %v", err)
	}
	// An empty transaction is no call at all; an oversized one is refused before the call.
	before := f.Count(fakedb.OpTransactWriteItems)
	if err := db.Commit(ctx, &store.Tx{}); err != nil || f.Count(fakedb.OpTransactWriteItems) != before {
		t.Errorf("empty tx: %v", err)
	}
	big := &store.Tx{}
	for i := range store.MaxTxItems + 1 {
		big.Check(fmt.Sprint(i), store.GuardKey("k", fmt.Sprint(i)), store.Exists())
	}
	if err := db.Commit(ctx, big); err == nil || f.Count(fakedb.OpTransactWriteItems) != before {
		t.Errorf("oversized tx: %v", err)
	}
}

func TestCreateTable(t *testing.T) {
	f := fakedb.New()
	if err := store.New(f, "t").CreateTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.Fail("CreateTable", errors.New("denied"))
	if err := store.New(f, "t").CreateTable(context.Background()); err == nil || err.Error() != "store.CreateTable(t): denied" {
		t.Errorf("err = %v", err)
	}
}

// seeded returns a fake table holding n things of one account, a store over it, and the things.
func seeded(n int) (*fakedb.Table, *store.DB, []*thing) {
	f := fakedb.New()
	var all []*thing
	for i := range n {
		it := newThing("acct", i)
		all = append(all, it)
		f.Seed(it)
	}
	return f, store.New(f, "t"), all
}

// itemIDs decodes items as things and returns their ids, in order.
func itemIDs(t testing.TB, items []store.Item) (out []string) {
	t.Helper()
	for _, raw := range items {
		var it thing
		if err := store.Unmarshal(raw, &it); err != nil {
			t.Fatal(err)
		}
		out = append(out, it.ID)
	}
	return out
}

// AddUpTo adds only while the value stays within the limit, and a refusal says the value as it
// is, changing nothing.
func TestAddUpTo(t *testing.T) {
	db := store.New(fakedb.New(), "test")
	ctx := context.Background()
	k := store.RateKey("acct", 60, 1)
	exp := time.Unix(1700000000, 0)
	steps := []struct {
		delta, limit, want int64
		ok                 bool
	}{
		{5, 3, 0, false}, // absent, and 5 would pass 3
		{3, 3, 3, true},
		{1, 3, 3, false},
		{2, 10, 5, true},
		{6, 10, 5, false},
		{5, 10, 10, true},
	}
	for i, s := range steps {
		n, ok, err := db.AddUpTo(ctx, k, "n", s.delta, s.limit, exp)
		if err != nil || n != s.want || ok != s.ok {
			t.Fatalf("step %d: AddUpTo(%d, %d) = %d, %v, %v; want %d, %v", i, s.delta, s.limit, n, ok, err, s.want, s.ok)
		}
	}
}
