package resource

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/metrics"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/fakedb"
)

// widget is the smallest family: a name, and optionally a reference to a parent resource.
type widget struct {
	store.Meta
	Described
	Name   string `dynamodbav:"name"`
	Parent string `dynamodbav:"parent,omitempty"`
}

type widgetJSON struct {
	ID   string `json:"id"`
	URI  string `json:"uri"`
	Name string `json:"name"`
}

type widgetBody struct {
	Name   *string `json:"name"`
	Parent *string `json:"parent"`
	// Touch names a parent to touch (RetryOn) instead of referencing it.
	Touch *string `json:"touch"`
}

var errNoParent = api.Invalid("parent", "no such parent")

var errWidgetInUse = &api.Error{Status: http.StatusConflict, Msg: "the widget is referenced"}

type widgets struct{ *Family[widget, *widget] }

func newWidgets(f *Family[widget, *widget]) widgets { return widgets{f} }

func (w widgets) Render(r *api.Request, it *widget) any {
	return widgetJSON{ID: it.ID, URI: URI(r, w.Path, it.ID), Name: it.Name}
}

func (w widgets) Create(ctx context.Context, r *api.Request, it *widget, m *Mutation) (any, error) {
	return nil, w.apply(r, it, m)
}

func (w widgets) Update(ctx context.Context, r *api.Request, it *widget, m *Mutation) error {
	return w.apply(r, it, m)
}

func (widgets) InUse() *api.Error { return errWidgetInUse }

func (widgets) apply(r *api.Request, it *widget, m *Mutation) error {
	var in widgetBody
	if err := api.Decode(r, &in); err != nil {
		return err
	}
	api.Set(&it.Name, in.Name)
	if in.Parent != nil {
		it.Parent = *in.Parent
		m.Reference(*in.Parent, 1, errNoParent)
	}
	if in.Touch != nil {
		m.Touch("parent", store.ResourceKey(m.r.Caller().AccountID, *in.Touch), expression.UpdateBuilder{})
	}
	return nil
}

var widgetsDescriptor = &Descriptor{Path: "/widgets", Prefix: ids.TunnelGroupBackend, ListKey: "widgets", EventKind: "widget",
	Binding: func() Binding { return Bind(newWidgets) }}

// harness serves the widget family over a fake table, with one API key of one account.
type harness struct {
	t     *testing.T
	db    *fakedb.Table
	mux   *http.ServeMux
	token string
	acct  string
	logs  *bytes.Buffer
	// metrics captures the lines the kit and the server emit.
	metrics *metrics.Buffer
}

func newHarness(t *testing.T) *harness { return newHarnessOf(t, widgetsDescriptor, nil) }

// newHarnessOf is newHarness serving d, with the store reaching the fake table through
// client(table) when client is set.
func newHarnessOf(t *testing.T, d *Descriptor, client func(table store.Client) store.Client) *harness {
	h := &harness{t: t, db: fakedb.New(), mux: http.NewServeMux(), acct: ids.New(ids.Account), logs: &bytes.Buffer{},
		metrics: &metrics.Buffer{}}
	keyID := ids.New(ids.APIKey)
	h.token = ids.NewToken(keyID)
	must(t, h.db.Seed(auth.TokenItem{Key: store.TokenKey(store.TokenHash(h.token)), Kind: auth.KindAPIKey,
		AccountID: h.acct, PrincipalID: "usr_1", Subject: "someone@example.com", ResourceID: keyID}))
	must(t, h.db.Seed(auth.AccountItem{Key: store.AccountKey(h.acct), ID: h.acct}))
	var table store.Client = h.db
	if client != nil {
		table = client(table)
	}
	db := store.New(table, "test")
	emit := &metrics.Emitter{W: h.metrics}
	kit := &Kit{DB: db, Metrics: emit}
	d.Register(kit, h.mux, &api.Server{Log: slog.New(slog.NewTextHandler(h.logs, nil)), Metrics: emit, Auth: &auth.Authenticator{DB: db}})
	return h
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (h *harness) do(method, path, body string) (int, map[string]any) {
	h.t.Helper()
	code, out, _ := h.doWith(method, path, nil, body)
	return code, out
}

// doWith is do with extra request headers; it also returns the response's headers.
func (h *harness) doWith(method, path string, headers http.Header, body string) (int, map[string]any, http.Header) {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, "http://api.test"+path, rd)
	req.Header.Set("Authorization", "Bearer "+h.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header[k] = v
	}
	w := httptest.NewRecorder()
	h.mux.ServeHTTP(w, req)
	var out map[string]any
	if w.Body.Len() > 0 {
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
			h.t.Fatalf("%s %s: body %q: %v", method, path, w.Body, err)
		}
	}
	return w.Code, out, w.Header()
}

func (h *harness) create(name string) string {
	h.t.Helper()
	code, out := h.do("POST", "/widgets", `{"name":"`+name+`"}`)
	if code != http.StatusCreated {
		h.t.Fatalf("create: %d %v", code, out)
	}
	return out["id"].(string)
}

// lastTx is the transaction of the last TransactWriteItems call.
func (h *harness) lastTx() []types.TransactWriteItem {
	var last []types.TransactWriteItem
	for _, c := range h.db.Calls() {
		if c.Op == fakedb.OpTransactWriteItems {
			last = c.Input.(*dynamodb.TransactWriteItemsInput).TransactItems
		}
	}
	return last
}

// outboxOf returns the event the transaction put in the outbox and checks that the same
// transaction put it in the audit log too.
func outboxOf(t *testing.T, tx []types.TransactWriteItem) audit.Envelope {
	t.Helper()
	var ob audit.OutboxItem
	var lg audit.LogItem
	for _, it := range tx {
		if it.Put == nil {
			continue
		}
		pk := it.Put.Item["pk"].(*types.AttributeValueMemberS).Value
		switch {
		case strings.HasPrefix(pk, "O#"):
			must(t, attributevalue.UnmarshalMap(it.Put.Item, &ob))
		case strings.HasPrefix(pk, "E#"):
			must(t, attributevalue.UnmarshalMap(it.Put.Item, &lg))
		}
	}
	if ob.EventID == "" || lg.EventID != ob.EventID || lg.Payload != ob.Payload {
		t.Fatalf("outbox %+v and log %+v are not one event of the transaction", ob, lg)
	}
	var env audit.Envelope
	must(t, json.Unmarshal([]byte(ob.Payload), &env))
	return env
}

func TestCreateGetUpdateDelete(t *testing.T) {
	h := newHarness(t)
	id := h.create("one")
	env := outboxOf(t, h.lastTx())
	if env.EventType != "widget_created.v0" || env.AccountID != h.acct || env.Principal.ID != "usr_1" {
		t.Errorf("created event = %+v", env)
	}
	if want := `{"id":"` + id + `","uri":"https://api.test/widgets/` + id + `","name":"one"}`; string(env.Object) != want {
		t.Errorf("event object = %s, want %s", env.Object, want)
	}
	stored := h.db.Item(store.Collection(h.acct, ids.TunnelGroupBackend), id)
	if stored["name"].(*types.AttributeValueMemberS).Value != "one" || stored["v"].(*types.AttributeValueMemberN).Value != "1" {
		t.Errorf("stored = %v", stored)
	}

	if code, out := h.do("GET", "/widgets/"+id, ""); code != 200 || out["name"] != "one" {
		t.Errorf("get: %d %v", code, out)
	}
	if code, _ := h.do("GET", "/widgets/"+ids.New(ids.TunnelGroupBackend), ""); code != 404 {
		t.Errorf("get of an absent id: %d", code)
	}
	if code, out := h.do("GET", "/widgets", ""); code != 200 || len(out["widgets"].([]any)) != 1 {
		t.Errorf("list: %d %v", code, out)
	}

	if code, out := h.do("PATCH", "/widgets/"+id, `{"name":"two"}`); code != 200 || out["name"] != "two" {
		t.Fatalf("update: %d %v", code, out)
	}
	if env := outboxOf(t, h.lastTx()); env.EventType != "widget_updated.v0" || !strings.Contains(string(env.Object), `"name":"two"`) {
		t.Errorf("updated event = %+v", env)
	}
	stored = h.db.Item(store.Collection(h.acct, ids.TunnelGroupBackend), id)
	if stored["v"].(*types.AttributeValueMemberN).Value != "2" {
		t.Errorf("version after update = %v", stored["v"])
	}

	if code, _ := h.do("DELETE", "/widgets/"+id, ""); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	if env := outboxOf(t, h.lastTx()); env.EventType != "widget_deleted.v0" {
		t.Errorf("deleted event = %+v", env)
	}
	if h.db.Item(store.Collection(h.acct, ids.TunnelGroupBackend), id) != nil {
		t.Error("item still stored after delete")
	}
	if code, _ := h.do("DELETE", "/widgets/"+id, ""); code != 404 {
		t.Errorf("second delete: %d", code)
	}
}

// TestRetryBound: a write that keeps losing (a version conflict on the item, a transaction
// conflict, a changed item it derived from) is built again up to maxAttempts times, then 429
// ERR_NGROK_225 with Retry-After.
func TestRetryBound(t *testing.T) {
	conflict := fakedb.Canceled(fakedb.ReasonNone, fakedb.ReasonNone, fakedb.ReasonNone, fakedb.ReasonConflict, fakedb.ReasonNone)
	// An update's writes: the item, the outbox and log events, the token and account guards.
	version := fakedb.Canceled(fakedb.ReasonConditionalCheck, fakedb.ReasonNone, fakedb.ReasonNone, fakedb.ReasonNone, fakedb.ReasonNone)
	tests := []struct {
		name     string
		fail     error
		failures int
		wantCode int
	}{
		{"version conflict, then success", version, maxAttempts - 1, 200},
		{"version conflict every time", version, maxAttempts, 429},
		{"transaction conflict, then success", conflict, 3, 200},
		{"transaction conflict every time", conflict, maxAttempts, 429},
		{"throttled is not retried", fakedb.Throttled(), 1, 500},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			id := h.create("w")
			before := h.db.Count(fakedb.OpTransactWriteItems)
			for range tc.failures {
				h.db.Fail(fakedb.OpTransactWriteItems, tc.fail)
			}
			code, out := h.do("PATCH", "/widgets/"+id, `{"name":"x"}`)
			if code != tc.wantCode {
				t.Fatalf("status %d %v, want %d", code, out, tc.wantCode)
			}
			calls := h.db.Count(fakedb.OpTransactWriteItems) - before
			want := min(tc.failures+1, maxAttempts)
			if tc.wantCode == 500 {
				want = 1
			}
			if calls != want {
				t.Errorf("%d transactions, want %d", calls, want)
			}
			if code == 429 && (out["error_code"] != api.CodeTooConcurrent || out["details"].(map[string]any)["retry_after"] != "1") {
				t.Errorf("429 body = %v", out)
			}
		})
	}
}

// TestRetryOnAndRefuse: a RetryOn label rebuilds the operation; a Refuse label answers with
// its error at once.
func TestRetryOnAndRefuse(t *testing.T) {
	h := newHarness(t)
	parent := h.create("parent")

	// Touch of the parent (the first write of the create) fails twice, then holds.
	touchFailed := fakedb.Canceled(fakedb.ReasonConditionalCheck, fakedb.ReasonNone, fakedb.ReasonNone, fakedb.ReasonNone, fakedb.ReasonNone, fakedb.ReasonNone)
	h.db.Fail(fakedb.OpTransactWriteItems, touchFailed, touchFailed)
	before := h.db.Count(fakedb.OpTransactWriteItems)
	if code, out := h.do("POST", "/widgets", `{"name":"child","touch":"`+parent+`"}`); code != 201 {
		t.Fatalf("create touching parent: %d %v", code, out)
	}
	if n := h.db.Count(fakedb.OpTransactWriteItems) - before; n != 3 {
		t.Errorf("%d transactions, want 3", n)
	}

	// A touched parent that does not exist is retried to the bound.
	missing := ids.New(ids.TunnelGroupBackend)
	if code, _ := h.do("POST", "/widgets", `{"name":"child","touch":"`+missing+`"}`); code != 429 {
		t.Errorf("touch of a missing parent: %d, want 429", code)
	}

	// A reference to a missing parent is refused with the family's error, without retrying.
	before = h.db.Count(fakedb.OpTransactWriteItems)
	code, out := h.do("POST", "/widgets", `{"name":"child","parent":"`+missing+`"}`)
	if code != 400 || out["error_code"] != api.CodeBadFieldValue || out["details"].(map[string]any)["field"] != "parent" {
		t.Errorf("reference to a missing parent: %d %v", code, out)
	}
	if n := h.db.Count(fakedb.OpTransactWriteItems) - before; n != 1 {
		t.Errorf("%d transactions for a refusal, want 1", n)
	}

	// A referenced widget cannot be deleted; once unreferenced it can.
	code, out = h.do("POST", "/widgets", `{"name":"child","parent":"`+parent+`"}`)
	if code != 201 {
		t.Fatalf("create referencing parent: %d %v", code, out)
	}
	if code, out := h.do("DELETE", "/widgets/"+parent, ""); code != 409 || out["msg"] != errWidgetInUse.Msg {
		t.Errorf("delete of a referenced widget: %d %v", code, out)
	}
}

// TestErrorsNameTheOperation: an unexpected failure is an opaque 500 whose log line says where
// it happened.
func TestErrorsNameTheOperation(t *testing.T) {
	h := newHarness(t)
	id := h.create("w")
	h.db.Fail(fakedb.OpTransactWriteItems, errors.New("disk on fire"))
	code, out := h.do("PATCH", "/widgets/"+id, `{"name":"x"}`)
	if code != 500 || out["error_code"] != "ERR_NGROK_500" || strings.Contains(out["msg"].(string), "fire") {
		t.Fatalf("status %d %v", code, out)
	}
	log := h.logs.String()
	for _, want := range []string{"resource.update(widget", "store.Commit(item,event.outbox,event.log,auth.token,auth.account)", "disk on fire"} {
		if !strings.Contains(log, want) {
			t.Errorf("log does not name %q:\n%s", want, log)
		}
	}
}

// TestModifyNotFound: a wrapped not-found still becomes the caller's own error.
func TestModifyNotFound(t *testing.T) {
	h := newHarness(t)
	gone := api.Invalid("widget_id", "no such widget")
	var got error
	db := store.New(h.db, "test")
	s := &api.Server{Log: slog.New(slog.DiscardHandler), Auth: &auth.Authenticator{DB: db}}
	h.mux.Handle("GET /probe/{id}", s.Handle(200, func(ctx context.Context, r *api.Request) (any, error) {
		fam := HooksOf[widgets](widgetsDescriptor, &Kit{DB: db})
		_, got = fam.Load(ctx, r, r.PathValue("id"), gone)
		return nil, got
	}))
	if code, _ := h.do("GET", "/probe/"+ids.New(ids.TunnelGroupBackend), ""); code != 400 || !errors.Is(got, gone) {
		t.Errorf("Load of an absent id: %d %v", code, got)
	}
}

// TestIdempotentCreate: the record of a create sent with an Idempotency-Key is one more write
// of the create's own transaction (no extra round trip); a repeat loses that write's condition,
// reads the record and answers with the first response; the key with another body is a 422,
// and a refusal of the repeat by the family (here: a reference the first create used up) still
// answers with the first response.
func TestIdempotentCreate(t *testing.T) {
	h := newHarness(t)
	h.create("warm") // the token's hint is cached, as in a warm process
	calls := func() int { return len(h.db.Calls()) }

	before := calls()
	h.create("plain")
	plain := calls() - before

	key := http.Header{IdempotencyHeader: {"k-1"}}
	before = calls()
	code, first, _ := h.doWith("POST", "/widgets", key, `{"name":"once"}`)
	if code != 201 {
		t.Fatalf("create with a key: %d %v", code, first)
	}
	if n := calls() - before; n != plain {
		t.Errorf("a create with a key made %d DynamoDB calls, without %d", n, plain)
	}
	labels := 0
	for _, it := range h.lastTx() {
		if it.Put != nil && strings.HasPrefix(it.Put.Item["pk"].(*types.AttributeValueMemberS).Value, "I#"+h.acct) {
			labels++
			if it.Put.ConditionExpression == nil {
				t.Error("the idempotency record is written without a condition")
			}
		}
	}
	if labels != 1 {
		t.Fatalf("%d idempotency records in the create's transaction, want 1", labels)
	}

	// The body's member order and spacing do not make it another request.
	code, again, hdr := h.doWith("POST", "/widgets", key, `{ "name" : "once" }`)
	if code != 201 || again["id"] != first["id"] || hdr.Get(ReplayedHeader) != "true" {
		t.Fatalf("repeat: %d %v %v, want the first response %v", code, again, hdr, first)
	}
	if replays := metrics.Of(metrics.IdempotentReplay, h.metrics.Bytes()); len(replays) != 1 || replays[0].Values["IdempotentReplays"] != 1 {
		t.Fatalf("replay metric lines %+v, want one counting 1", replays)
	}
	if code, out, _ := h.doWith("POST", "/widgets", key, `{"name":"twice"}`); code != 422 || out["error_code"] != api.CodeBadFieldValue || out["details"].(map[string]any)["field"] != IdempotencyHeader {
		t.Fatalf("the key with another body: %d %v", code, out)
	}
	for _, bad := range []string{"", strings.Repeat("k", MaxIdempotencyKeyBytes+1), "a b", "a,b"} {
		if code, out, _ := h.doWith("POST", "/widgets", http.Header{IdempotencyHeader: {bad}}, `{"name":"x"}`); code != 400 || out["details"].(map[string]any)["field"] != IdempotencyHeader {
			t.Errorf("key %q: %d %v", bad, code, out)
		}
	}
	if code, _, _ := h.doWith("POST", "/widgets", http.Header{IdempotencyHeader: {"a", "b"}}, `{"name":"x"}`); code != 400 {
		t.Errorf("two keys: %d", code)
	}

	// The first create referenced the parent; a repeat that the family refuses (the reference
	// no longer exists) still answers as the first did.
	parent := h.create("parent")
	pkey := http.Header{IdempotencyHeader: {"k-2"}}
	body := `{"name":"child","parent":"` + parent + `"}`
	code, child, _ := h.doWith("POST", "/widgets", pkey, body)
	if code != 201 {
		t.Fatalf("child: %d %v", code, child)
	}
	if _, err := h.db.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{Key: store.ResourceKey(h.acct, parent).AV()}); err != nil {
		t.Fatal(err)
	}
	if code, out, hdr := h.doWith("POST", "/widgets", pkey, body); code != 201 || out["id"] != child["id"] || hdr.Get(ReplayedHeader) == "" {
		t.Fatalf("repeat after the parent went: %d %v", code, out)
	}
}

// TestTooLargeToStore: a create or update whose item or audit event DynamoDB could not store is
// a 400 naming the resource's largest member, decided before any transaction is sent.
func TestTooLargeToStore(t *testing.T) {
	h := newHarness(t)
	id := h.create("small")
	before := h.db.Count(fakedb.OpTransactWriteItems)
	huge := strings.Repeat("n", store.MaxItemBytes)
	for _, req := range []struct{ method, path string }{{"POST", "/widgets"}, {"PATCH", "/widgets/" + id}} {
		code, out := h.do(req.method, req.path, `{"name":"`+huge+`"}`)
		if code != 400 || out["error_code"] != api.CodeBadFieldValue || out["details"].(map[string]any)["field"] != "name" {
			t.Errorf("%s: %d %.300v", req.method, code, out)
		}
	}
	if n := h.db.Count(fakedb.OpTransactWriteItems) - before; n != 0 {
		t.Errorf("%d transactions sent", n)
	}
	if code, out := h.do("GET", "/widgets/"+id, ""); code != 200 || out["name"] != "small" {
		t.Errorf("after the refusals: %d %v", code, out)
	}
}

// TestListPageBytes: a page of large resources ends before api.MaxPageBytes, short of its
// limit, with next_page_uri set; walking the pages shows every resource once, in descending id
// order.
func TestListPageBytes(t *testing.T) {
	h := newHarness(t)
	const n, size = 10, 300 << 10
	var created []string
	for i := range n {
		created = append(created, h.create(fmt.Sprintf("%d%s", i, strings.Repeat("n", size))))
	}
	slices.Sort(created)
	slices.Reverse(created) // newest first: descending ids
	var seen []string
	path := "/widgets?limit=100"
	for pages := 0; path != ""; pages++ {
		if pages > n {
			t.Fatal("the pages do not end")
		}
		code, out := h.do("GET", path, "")
		if code != 200 {
			t.Fatalf("GET %s: %d %v", path, code, out)
		}
		page := out["widgets"].([]any)
		if len(page) == 0 || len(page)*size > api.MaxPageBytes {
			t.Fatalf("a page of %d resources of %d bytes", len(page), size)
		}
		for _, w := range page {
			seen = append(seen, w.(map[string]any)["id"].(string))
		}
		path = ""
		if next, ok := out["next_page_uri"].(string); ok {
			u, err := url.Parse(next)
			if err != nil {
				t.Fatal(err)
			}
			path = u.RequestURI()
		}
	}
	if !slices.Equal(seen, created) {
		t.Fatalf("the pages showed %d resources, want the %d created in descending id order", len(seen), len(created))
	}
}
