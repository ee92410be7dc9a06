package testkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
)

// FamilySpec describes a family to the shared conformance suite.
type FamilySpec struct {
	// Family is the family's descriptor: its path, list key and id prefix.
	Family *resource.Descriptor
	// Create returns a valid create body; n distinguishes items. It may create prerequisites.
	Create func(t *testing.T, a *Account, n int) any
	// Update is a valid PATCH body and the fields it must change to in the response (nil for a
	// family that serves no update).
	Update      any
	UpdateWants map[string]any
	// Text is a string member of the create and PATCH bodies that the strict JSON checks send
	// ("description" when empty).
	Text string
	// Secret names a field shown only in the create response ("token"), null afterwards.
	Secret string
	// RoundTrips replaces RoundTrips' operations for the request kinds it names, for a family
	// whose hooks must read more than the generic shape (say why where it is set).
	RoundTrips map[string]map[string]int
}

var timestampRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)

// Conformance runs what every family must do: create, get, list, update and delete with their
// status codes and shapes; absolute URIs; secrets shown once; 404 for unknown, malformed and
// other accounts' ids; lists that never show another account's items; paging parameters checked.
// Of the five operations it checks those the family serves (Descriptor.Operations), and that
// each of the others answers as an unknown route does.
func (s *Stack) Conformance(t *testing.T, spec FamilySpec) {
	c := &conformance{s: s, spec: spec, a: s.NewAccount(t), b: s.NewAccount(t), serves: spec.Family.Offers, text: spec.Text}
	if c.text == "" {
		c.text = "description"
	}
	t.Run("create", c.create)
	if c.created == nil {
		t.FailNow()
	}
	c.id = c.created["id"].(string)
	c.item = spec.Family.Path + "/" + c.id
	for _, check := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"get", c.get},
		{"list", c.list},
		{"other account", c.otherAccount},
		{"not found", c.notFound},
		{"paging parameters", c.pagingParameters},
		{"update", c.update},
		{"path id in body", c.pathIDInBody},
		{"strict JSON", c.strictJSON},
		{"beforeId", c.beforeID},
		{"idempotent create", c.idempotentCreate},
		{"concurrent deletes", c.concurrentDeletes},
		{"round trips", func(t *testing.T) { s.roundTrips(t, spec, c.a) }},
		{"unserved operations", func(t *testing.T) { s.unserved(t, spec, c.a, c.item) }},
		{"delete", c.delete},
	} {
		t.Run(check.name, check.run)
	}
}

// conformance is one run of the suite on one family: the two accounts, and the item the
// create made, which the checks after it read, change and finally delete.
type conformance struct {
	s      *Stack
	spec   FamilySpec
	a, b   *Account
	serves func(resource.Operation) bool
	// text is FamilySpec.Text or its default.
	text string
	// created is the create's response; id and item are its id and path.
	created  map[string]any
	id, item string
}

// create creates the item the later checks use: a well-formed id, its absolute uri, created_at in
// UTC seconds, the secret shown.
func (c *conformance) create(t *testing.T) {
	c.created = c.a.Do(t, "POST", c.spec.Family.Path, c.spec.Create(t, c.a, 0)).Expect(t, http.StatusCreated)
	id, _ := c.created["id"].(string)
	if !ids.Is(id, c.spec.Family.Prefix) {
		t.Fatalf("id %q is not a %s_ id", id, c.spec.Family.Prefix)
	}
	if want := c.s.Server.URL + c.spec.Family.Path + "/" + id; c.created["uri"] != want {
		t.Fatalf("uri %v, want %s", c.created["uri"], want)
	}
	if ca, ok := c.created["created_at"].(string); ok && !timestampRE.MatchString(ca) {
		t.Fatalf("created_at %q is not RFC 3339 UTC whole seconds", ca)
	}
	if c.spec.Secret != "" {
		if v, _ := c.created[c.spec.Secret].(string); v == "" {
			t.Fatalf("create response has no %s: %v", c.spec.Secret, c.created)
		}
	}
}

// get reads the item back as the create showed it, the secret null.
func (c *conformance) get(t *testing.T) {
	got := c.a.Do(t, "GET", c.item, nil).Expect(t, http.StatusOK)
	for k, v := range c.created {
		if k == c.spec.Secret {
			if got[k] != nil {
				t.Fatalf("%s is %v on GET, want null", k, got[k])
			}
			continue
		}
		if fmt.Sprint(got[k]) != fmt.Sprint(v) {
			t.Fatalf("GET %s = %v, create returned %v", k, got[k], v)
		}
	}
}

// list finds the item in the first page, with the list's uri, a null next_page_uri and no secret.
func (c *conformance) list(t *testing.T) {
	if !c.serves(resource.OpList) {
		t.Skip("the family serves no list")
	}
	page := c.a.Do(t, "GET", c.spec.Family.Path, nil).Expect(t, http.StatusOK)
	items, ok := page[c.spec.Family.ListKey].([]any)
	if !ok {
		t.Fatalf("list has no %q array: %v", c.spec.Family.ListKey, page)
	}
	if page["uri"] != c.s.Server.URL+c.spec.Family.Path {
		t.Fatalf("list uri %v", page["uri"])
	}
	if _, ok := page["next_page_uri"]; !ok || page["next_page_uri"] != nil {
		t.Fatalf("next_page_uri %v, want null", page["next_page_uri"])
	}
	found := false
	for _, it := range items {
		m := it.(map[string]any)
		if m["id"] == c.id {
			found = true
			if c.spec.Secret != "" && m[c.spec.Secret] != nil {
				t.Fatalf("%s shown in list", c.spec.Secret)
			}
		}
	}
	if !found {
		t.Fatalf("created %s not in list", c.id)
	}
}

// otherAccount checks that another account can neither read, change, delete nor list the item.
func (c *conformance) otherAccount(t *testing.T) {
	c.b.Do(t, "GET", c.item, nil).ExpectError(t, http.StatusNotFound, "", "")
	if c.serves(resource.OpUpdate) {
		c.b.Do(t, "PATCH", c.item, c.spec.Update).ExpectError(t, http.StatusNotFound, "", "")
	}
	if c.serves(resource.OpDelete) {
		c.b.Do(t, "DELETE", c.item, nil).ExpectError(t, http.StatusNotFound, "", "")
	}
	if c.serves(resource.OpList) {
		page := c.b.Do(t, "GET", c.spec.Family.Path, nil).Expect(t, http.StatusOK)
		for _, it := range page[c.spec.Family.ListKey].([]any) {
			if it.(map[string]any)["id"] == c.id {
				t.Fatalf("account B sees A's %s", c.id)
			}
		}
	}
	c.a.Do(t, "GET", c.item, nil).Expect(t, http.StatusOK)
}

// notFound checks the 404 of unknown, malformed and foreign-kind ids.
func (c *conformance) notFound(t *testing.T) {
	for _, bad := range []string{ids.New(c.spec.Family.Prefix), "nope", c.spec.Family.Prefix + "_x", ids.New("zz"), strings.Repeat("a", 2000)} {
		c.a.Do(t, "GET", c.spec.Family.Path+"/"+bad, nil).ExpectError(t, http.StatusNotFound, "", "")
		if c.serves(resource.OpDelete) {
			c.a.Do(t, "DELETE", c.spec.Family.Path+"/"+bad, nil).ExpectError(t, http.StatusNotFound, "", "")
		}
	}
}

// pagingParameters checks the 400s of bad limit, before_id and unknown parameters.
func (c *conformance) pagingParameters(t *testing.T) {
	if !c.serves(resource.OpList) {
		t.Skip("the family serves no list")
	}
	c.a.Do(t, "GET", c.spec.Family.Path+"?limit=0", nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_233", "limit")
	c.a.Do(t, "GET", c.spec.Family.Path+"?limit=101", nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_233", "limit")
	c.a.Do(t, "GET", c.spec.Family.Path+"?limit=x", nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_233", "limit")
	c.a.Do(t, "GET", c.spec.Family.Path+"?before_id="+ids.New("zz"), nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_223", "before_id")
	c.a.Do(t, "GET", c.spec.Family.Path+"?bogus=1", nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_231", "bogus")
}

// update checks a PATCH, its effect on a later GET, and the 400s of unknown members and bad JSON.
func (c *conformance) update(t *testing.T) {
	if !c.serves(resource.OpUpdate) {
		t.Skip("the family serves no update")
	}
	got := c.a.Do(t, "PATCH", c.item, c.spec.Update).Expect(t, http.StatusOK)
	for k, v := range c.spec.UpdateWants {
		if fmt.Sprint(got[k]) != fmt.Sprint(v) {
			t.Fatalf("PATCH %s = %v, want %v", k, got[k], v)
		}
	}
	if c.spec.Secret != "" && got[c.spec.Secret] != nil {
		t.Fatalf("%s shown after PATCH", c.spec.Secret)
	}
	again := c.a.Do(t, "GET", c.item, nil).Expect(t, http.StatusOK)
	for k, v := range c.spec.UpdateWants {
		if fmt.Sprint(again[k]) != fmt.Sprint(v) {
			t.Fatalf("GET after PATCH %s = %v, want %v", k, again[k], v)
		}
	}
	c.a.Do(t, "PATCH", c.item, map[string]any{"bogus_field": 1}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_214", "bogus_field")
	c.a.Do(t, "PATCH", c.item, "{").ExpectError(t, http.StatusBadRequest, "ERR_NGROK_213", "")
}

// pathIDInBody checks a PATCH body that repeats the path id (the JavaScript client's).
func (c *conformance) pathIDInBody(t *testing.T) {
	// The JavaScript client sends its whole argument, path id included, as the PATCH body.
	if !c.serves(resource.OpUpdate) {
		t.Skip("the family serves no update")
	}
	with := func(id any) map[string]any {
		m := map[string]any{}
		if b, err := json.Marshal(c.spec.Update); err != nil || json.Unmarshal(b, &m) != nil {
			t.Fatalf("update body %v is not an object", c.spec.Update)
		}
		m["id"] = id
		return m
	}
	got := c.a.Do(t, "PATCH", c.item, with(c.id)).Expect(t, http.StatusOK)
	if got["id"] != c.id {
		t.Fatalf("PATCH with the path id in the body: %v", got)
	}
	c.a.Do(t, "PATCH", c.item, with(nil)).Expect(t, http.StatusOK)
	c.a.Do(t, "PATCH", c.item, with(ids.New(c.spec.Family.Prefix))).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_215", "id")
	c.a.Do(t, "PATCH", c.item, with(7)).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_215", "id")
}

// strictJSON checks that creates and PATCHes refuse JSON that a lenient decoder would take.
func (c *conformance) strictJSON(t *testing.T) {
	cases := []struct{ body, code, field string }{
		{`{"` + strings.ToUpper(c.text) + `":"x"}`, "ERR_NGROK_214", strings.ToUpper(c.text)},
		{`{"` + c.text + `":"a","` + c.text + `":"b"}`, "ERR_NGROK_213", c.text},
		{`{"` + c.text + `":"\ud800"}`, "ERR_NGROK_213", c.text},
		{`{"` + c.text + "\":\"\xff\"}", "ERR_NGROK_213", c.text},
		{`{"` + c.text + `":"a\u0000b"}`, "ERR_NGROK_215", c.text},
	}
	if strings.Contains(c.text, "s") {
		// The member named with a long s (U+017F), which a case-folding decoder takes for it.
		cases = append(cases, struct{ body, code, field string }{
			`{"` + strings.Replace(c.text, "s", `\u017f`, 1) + `":"x"}`, "ERR_NGROK_214", strings.Replace(c.text, "s", "ſ", 1)})
	}
	for _, tc := range cases {
		if c.serves(resource.OpUpdate) {
			c.a.Do(t, "PATCH", c.item, tc.body).ExpectError(t, http.StatusBadRequest, tc.code, tc.field)
		}
		c.a.Do(t, "POST", c.spec.Family.Path, tc.body).ExpectError(t, http.StatusBadRequest, tc.code, tc.field)
	}
}

// beforeID checks that beforeId pages as before_id does.
func (c *conformance) beforeID(t *testing.T) {
	// The JavaScript client pages with beforeId; it means what before_id means.
	if !c.serves(resource.OpList) {
		t.Skip("the family serves no list")
	}
	c.a.Do(t, "POST", c.spec.Family.Path, c.spec.Create(t, c.a, 1)).Expect(t, http.StatusCreated)
	page := c.a.Do(t, "GET", c.spec.Family.Path+"?limit=2", nil).Expect(t, http.StatusOK)
	items := page[c.spec.Family.ListKey].([]any)
	if len(items) != 2 {
		t.Fatalf("two items created, page of two holds %d", len(items))
	}
	newest, older := items[0].(map[string]any)["id"].(string), items[1].(map[string]any)["id"].(string)
	for _, q := range []string{"beforeId=" + newest, "before_id=" + newest, "beforeId=" + newest + "&before_id=" + newest} {
		got := c.a.Do(t, "GET", c.spec.Family.Path+"?limit=1&"+q, nil).Expect(t, http.StatusOK)[c.spec.Family.ListKey].([]any)
		if len(got) != 1 || got[0].(map[string]any)["id"] != older {
			t.Fatalf("%s listed %v, want %s", q, got, older)
		}
	}
	c.a.Do(t, "GET", c.spec.Family.Path+"?beforeId="+ids.New("zz"), nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_223", "beforeId")
	c.a.Do(t, "GET", c.spec.Family.Path+"?beforeId="+newest+"&before_id="+older, nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_223", "")
}

// idempotentCreate races creates under one Idempotency-Key.
func (c *conformance) idempotentCreate(t *testing.T) {
	// Retries of one create with one Idempotency-Key, even at once, create one resource
	// and all get its response; the key with another body is a 422 naming the key.
	key := http.Header{resource.IdempotencyHeader: {"conformance-" + ids.New(ids.Operation)}}
	body, err := json.Marshal(c.spec.Create(t, c.a, 3))
	if err != nil {
		t.Fatal(err)
	}
	var before []string
	if c.serves(resource.OpList) {
		before, _ = c.a.WalkPages(t, c.spec.Family.Path, c.spec.Family.ListKey)
	}
	responses := c.a.RaceWith(t, ConcurrentCreates, "POST", c.spec.Family.Path, key, body)
	var first *Response
	replayed := 0
	for _, res := range responses {
		if res.Status != http.StatusCreated {
			t.Fatalf("idempotent create: %d %s", res.Status, res.Body)
		}
		if res.Header.Get(resource.ReplayedHeader) != "" {
			replayed++
		}
		if first == nil {
			first = res
		} else if !bytes.Equal(res.Body, first.Body) {
			t.Fatalf("two responses to one idempotent create differ:\n%s\n%s", first.Body, res.Body)
		}
	}
	if replayed != ConcurrentCreates-1 {
		t.Fatalf("%d of %d responses marked %s, want %d", replayed, ConcurrentCreates, resource.ReplayedHeader, ConcurrentCreates-1)
	}
	id := first.JSON(t)["id"].(string)
	if c.serves(resource.OpList) {
		after, _ := c.a.WalkPages(t, c.spec.Family.Path, c.spec.Family.ListKey)
		if len(after) != len(before)+1 || !slices.Contains(after, id) {
			t.Fatalf("%d concurrent creates with one key: %d items before, %d after, want one more (%s)", ConcurrentCreates, len(before), len(after), id)
		}
	}
	// The create body with the update's members is another valid create; without an
	// update, another item's create body is.
	other, bodies := map[string]any{}, []any{c.spec.Create(t, c.a, 3), c.spec.Update}
	if c.spec.Update == nil {
		bodies = []any{c.spec.Create(t, c.a, 5)}
	}
	for _, v := range bodies {
		b, err := json.Marshal(v)
		if err != nil || json.Unmarshal(b, &other) != nil {
			t.Fatalf("body %v is not an object", v)
		}
	}
	c.a.DoWith(t, "POST", c.spec.Family.Path, key, other).ExpectError(t, http.StatusUnprocessableEntity, api.CodeBadFieldValue, resource.IdempotencyHeader)
	for _, bad := range []string{strings.Repeat("k", resource.MaxIdempotencyKeyBytes+1), "a,b", "caf\u00e9"} {
		c.a.DoWith(t, "POST", c.spec.Family.Path, http.Header{resource.IdempotencyHeader: {bad}}, body).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_215", resource.IdempotencyHeader)
	}
	if c.serves(resource.OpDelete) {
		c.a.Do(t, "DELETE", c.spec.Family.Path+"/"+id, nil).Expect(t, http.StatusNoContent)
	}
}

// concurrentDeletes races deletes of one item.
func (c *conformance) concurrentDeletes(t *testing.T) {
	if !c.serves(resource.OpDelete) {
		t.Skip("the family serves no delete")
	}
	// Racing deletes of one resource tell the truth: one succeeds, the others find it gone.
	// None may blame the callers' own valid credentials (401/403) or fail (5xx).
	victim := c.a.Do(t, "POST", c.spec.Family.Path, c.spec.Create(t, c.a, 2)).Expect(t, http.StatusCreated)["id"].(string)
	statuses := c.a.Race(t, ConcurrentDeletes, "DELETE", c.spec.Family.Path+"/"+victim, nil)
	if statuses[http.StatusNoContent] != 1 || statuses[http.StatusNotFound] != ConcurrentDeletes-1 {
		t.Fatalf("%d concurrent DELETEs of one %s answered %v, want one 204 and %d 404", ConcurrentDeletes, c.spec.Family.Prefix, statuses, ConcurrentDeletes-1)
	}
}

// delete deletes the item: a 204 with no body, then 404s.
func (c *conformance) delete(t *testing.T) {
	if !c.serves(resource.OpDelete) {
		t.Skip("the family serves no delete")
	}
	res := c.a.Do(t, "DELETE", c.item, nil)
	if res.Status != http.StatusNoContent || len(res.Body) != 0 {
		t.Fatalf("DELETE: %d %q, want 204 and no body", res.Status, res.Body)
	}
	c.a.Do(t, "GET", c.item, nil).ExpectError(t, http.StatusNotFound, "", "")
	c.a.Do(t, "DELETE", c.item, nil).ExpectError(t, http.StatusNotFound, "", "")
	c.a.Do(t, "PATCH", c.item, c.spec.Update).ExpectError(t, http.StatusNotFound, "", "")
}

// unserved checks that each operation the family does not serve answers, on the collection
// and on the existing item, exactly as a route no family serves does: the same status and
// body but for the operation id.
func (s *Stack) unserved(t *testing.T, spec FamilySpec, a *Account, item string) {
	unknown := a.Do(t, "GET", "/no_such_family/x", nil)
	want := unknown.ExpectError(t, http.StatusNotFound, "", "")
	delete(want["details"].(map[string]any), "operation_id")
	checked := 0
	for _, op := range []struct {
		op           resource.Operation
		method, path string
	}{
		{resource.OpList, "GET", spec.Family.Path}, {resource.OpUpdate, "PATCH", item},
		{resource.OpDelete, "DELETE", item},
	} {
		if spec.Family.Offers(op.op) {
			continue
		}
		got := a.Do(t, op.method, op.path, map[string]any{}).ExpectError(t, unknown.Status, "", "")
		delete(got["details"].(map[string]any), "operation_id")
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s %s answered %v, an unknown route %v", op.method, op.path, got, want)
		}
		checked++
	}
	if checked == 0 {
		t.Skip("the family serves all five operations")
	}
	a.Do(t, "GET", item, nil).Expect(t, http.StatusOK)
}

// ConcurrentDeletes is how many DELETEs of one resource the conformance suite races.
const ConcurrentDeletes = 20

// ConcurrentCreates is how many POSTs with one Idempotency-Key the conformance suite races.
const ConcurrentCreates = 10

// Race sends n copies of one request at once and counts the statuses.
func (a *Account) Race(t testing.TB, n int, method, path string, body any) map[int]int {
	t.Helper()
	statuses := map[int]int{}
	for _, res := range a.RaceWith(t, n, method, path, nil, body) {
		statuses[res.Status]++
	}
	return statuses
}

// RaceWith sends n copies of one request with headers at once, all released together, and
// returns the responses.
func (a *Account) RaceWith(t testing.TB, n int, method, path string, headers http.Header, body any) []*Response {
	t.Helper()
	return AtOnce(n, func(int) *Response { return a.DoWith(t, method, path, headers, body) })
}

// AtOnce runs request(0) … request(n-1), each in its own goroutine, all released together so
// that they race, and returns their responses in that order.
func AtOnce(n int, request func(i int) *Response) []*Response {
	var (
		wg    sync.WaitGroup
		out   = make([]*Response, n)
		start = make(chan struct{})
	)
	for i := range n {
		wg.Go(func() {
			<-start
			out[i] = request(i)
		})
	}
	close(start)
	wg.Wait()
	return out
}

// WalkPages follows next_page_uri from path until null, returning the ids in order.
func (a *Account) WalkPages(t testing.TB, path, listKey string) (ids []string, pages int) {
	t.Helper()
	next := path
	for next != "" {
		page := a.Do(t, "GET", next, nil).Expect(t, http.StatusOK)
		pages++
		items := page[listKey].([]any)
		for _, it := range items {
			ids = append(ids, it.(map[string]any)["id"].(string))
		}
		n, _ := page["next_page_uri"].(string)
		base, _, _ := strings.Cut(path, "?")
		if n != "" && !strings.HasPrefix(n, a.s.Server.URL+base+"?") {
			t.Fatalf("next_page_uri %q is not absolute on this host", n)
		}
		next = n
		if len(items) == 0 {
			break
		}
	}
	return ids, pages
}

// RoundTrips are the DynamoDB operations, by name and count, that each request kind of every
// family makes on its request path with a warm process (the token's identity already known)
// and no rate limit: a read is one consistent BatchGetItem of the caller's token and account
// items with the data, a write one TransactWriteItems guarded by them. A list reads the
// caller's items and queries its page concurrently: two operations, one round trip of latency.
// No request makes any SQS call: events leave through the table's stream.
var RoundTrips = map[string]map[string]int{
	"create": {"TransactWriteItems": 1},
	"get":    {"BatchGetItem": 1},
	"list":   {"BatchGetItem": 1, "Query": 1},
	"update": {"BatchGetItem": 1, "TransactWriteItems": 1},
	"delete": {"BatchGetItem": 1, "TransactWriteItems": 1},
}

// roundTrips counts, through the SDK middleware, the DynamoDB and SQS operations each request
// kind of the family makes, and fails unless they are exactly RoundTrips.
func (s *Stack) roundTrips(t *testing.T, spec FamilySpec, a *Account) {
	// The process knows the token: a read, of the list or else of an item that does not exist.
	if spec.Family.Offers(resource.OpList) {
		a.Do(t, "GET", spec.Family.Path, nil).Expect(t, http.StatusOK)
	} else {
		a.Do(t, "GET", spec.Family.Path+"/"+ids.New(spec.Family.Prefix), nil).ExpectError(t, http.StatusNotFound, "", "")
	}
	var id string
	kinds := []struct {
		kind   string
		status int
		do     func() *Response
	}{
		{"create", http.StatusCreated, nil},
		{"get", http.StatusOK, func() *Response { return a.Do(t, "GET", spec.Family.Path+"/"+id, nil) }},
		{"list", http.StatusOK, func() *Response { return a.Do(t, "GET", spec.Family.Path+"?limit=2", nil) }},
		{"update", http.StatusOK, func() *Response { return a.Do(t, "PATCH", spec.Family.Path+"/"+id, spec.Update) }},
		{"delete", http.StatusNoContent, func() *Response { return a.Do(t, "DELETE", spec.Family.Path+"/"+id, nil) }},
	}
	ops := map[string]resource.Operation{"create": resource.OpCreate, "get": resource.OpGet, "list": resource.OpList,
		"update": resource.OpUpdate, "delete": resource.OpDelete}
	for _, k := range kinds {
		if !spec.Family.Offers(ops[k.kind]) {
			continue
		}
		do := k.do
		if k.kind == "create" {
			// The body first: building it may create prerequisites, with calls of their own.
			body := spec.Create(t, a, 4)
			do = func() *Response { return a.Do(t, "POST", spec.Family.Path, body) }
		}
		var res *Response
		got := s.RoundTripsOf(t, func() { res = do() })
		if res.Status != k.status {
			t.Fatalf("%s: %d %s, want %d", k.kind, res.Status, res.Body, k.status)
		}
		if k.kind == "create" {
			id = res.JSON(t)["id"].(string)
		}
		want, own := spec.RoundTrips[k.kind]
		if !own {
			want = RoundTrips[k.kind]
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s %s made DynamoDB calls %v, want %v", k.kind, spec.Family.Path, got, want)
		}
	}
}

// RoundTripsOf runs do and returns the DynamoDB operations, by name, made on the request path
// meanwhile; any SQS call fails the test.
func (s *Stack) RoundTripsOf(t testing.TB, do func()) map[string]int {
	t.Helper()
	s.Calls.Reset()
	s.SQSCalls.Reset()
	do()
	if n := s.SQSCalls.Total(); n != 0 {
		t.Errorf("%d SQS calls on the request path %v, want none", n, s.SQSCalls.ByName())
	}
	return s.Calls.ByName()
}
