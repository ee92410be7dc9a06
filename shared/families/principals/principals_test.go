package principals_test

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestAPIKeysConformance(t *testing.T) {
	s := testkit.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: principals.APIKeysDescriptor, Secret: "token",
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			return map[string]any{"description": "ci key", "metadata": `{"n":1}`}
		},
		Update:      map[string]any{"description": "renamed"},
		UpdateWants: map[string]any{"description": "renamed", "metadata": `{"n":1}`},
	})
}

func TestCredentialsConformance(t *testing.T) {
	s := testkit.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: principals.CredentialsDescriptor, Secret: "token",
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			return map[string]any{"description": "agent", "acl": []string{"bind:*.example.com", "bind:env=prod"}}
		},
		Update:      map[string]any{"acl": []string{}},
		UpdateWants: map[string]any{"acl": []any{}, "description": "agent"},
		// A deletion then queries the account's tunnel sessions to mark the credential's revoked
		// (tunnels.Revoke), after its transaction commits.
		RoundTrips: map[string]map[string]int{"delete": {"BatchGetItem": 1, "TransactWriteItems": 1, "Query": 1}},
	})
}

func TestBotUsersConformance(t *testing.T) {
	s := testkit.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: principals.BotUsersDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			return map[string]any{"name": "ci-bot"}
		},
		Update:      map[string]any{"name": "deploy-bot"},
		UpdateWants: map[string]any{"name": "deploy-bot", "active": true},
	})
}

func TestAuthMatrix(t *testing.T) {
	s, a := testkit.AppAccount(t)
	s.Do(t, "GET", "/api_keys", "", nil).ExpectError(t, http.StatusUnauthorized, "ERR_NGROK_200", "")
	res := s.Do(t, "GET", "/api_keys", "", nil)
	_ = res
	req := func(header string) *testkit.Response {
		r, _ := http.NewRequest("GET", s.Server.URL+"/api_keys", nil)
		r.Header.Set("Authorization", header)
		hr, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer hr.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := hr.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return &testkit.Response{Status: hr.StatusCode, Header: hr.Header, Body: []byte(b.String())}
	}
	req("Basic abc").ExpectError(t, http.StatusUnauthorized, "ERR_NGROK_201", "Authorization")
	req("Bearer garbage").ExpectError(t, http.StatusForbidden, "ERR_NGROK_202", "Authorization")
	req("Bearer "+a.APIKeyID).ExpectError(t, http.StatusForbidden, "ERR_NGROK_207", "Authorization")
	unknown := ids.NewToken(ids.New(ids.APIKey))
	s.Do(t, "GET", "/api_keys", unknown, nil).ExpectError(t, http.StatusForbidden, "ERR_NGROK_203", "")
	// An authtoken is not an API key.
	cred := a.Do(t, "POST", "/credentials", map[string]any{}).Expect(t, http.StatusCreated)
	s.Do(t, "GET", "/api_keys", cred["token"].(string), nil).ExpectError(t, http.StatusForbidden, "ERR_NGROK_206", "")
	// Version header.
	if res := a.DoWith(t, "GET", "/api_keys", http.Header{"Ngrok-Version": {"3"}}, nil); res.Status != 400 {
		t.Fatalf("Ngrok-Version 3: %d", res.Status)
	}

	// A deleted key is refused on the very next request; its sibling keeps working.
	k := a.Do(t, "POST", "/api_keys", map[string]any{"description": "short-lived"}).Expect(t, http.StatusCreated)
	tok := k["token"].(string)
	s.Do(t, "GET", "/api_keys/"+k["id"].(string), tok, nil).Expect(t, http.StatusOK)
	s.Do(t, "DELETE", "/api_keys/"+k["id"].(string), tok, nil).Expect(t, http.StatusNoContent)
	s.Do(t, "GET", "/api_keys", tok, nil).ExpectError(t, http.StatusForbidden, "ERR_NGROK_203", "")
	s.Do(t, "POST", "/api_keys", tok, map[string]any{}).ExpectError(t, http.StatusForbidden, "ERR_NGROK_203", "")
	a.Do(t, "GET", "/api_keys", nil).Expect(t, http.StatusOK)
}

// Bot users and service users are the same principals under two paths: each path's deactivation
// and deletion refuse the keys its principal owns.
func TestBotDeactivationRevokesItsKeys(t *testing.T) {
	for _, path := range []string{"/bot_users", "/service_users"} {
		t.Run(strings.TrimPrefix(path, "/"), func(t *testing.T) { botDeactivationRevokesItsKeys(t, path) })
	}
}

func botDeactivationRevokesItsKeys(t *testing.T, path string) {
	s, a := testkit.AppAccount(t)
	bot := a.Do(t, "POST", path, map[string]any{"name": "ci"}).Expect(t, http.StatusCreated)
	botID := bot["id"].(string)
	key := a.Do(t, "POST", "/api_keys", map[string]any{"owner_id": botID}).Expect(t, http.StatusCreated)
	if key["owner_id"] != botID {
		t.Fatalf("owner_id %v", key["owner_id"])
	}
	tok := key["token"].(string)
	s.Do(t, "GET", "/api_keys", tok, nil).Expect(t, http.StatusOK)
	// The bot's key creates a key of its own; it defaults to the bot as owner.
	own := s.Do(t, "POST", "/api_keys", tok, map[string]any{}).Expect(t, http.StatusCreated)
	if own["owner_id"] != botID {
		t.Fatalf("bot-created key owner %v, want %s", own["owner_id"], botID)
	}
	// A non-admin may not assign another owner.
	s.Do(t, "POST", "/api_keys", tok, map[string]any{"owner_id": a.UserID}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_630", "owner_id")

	a.Do(t, "PATCH", path+"/"+botID, map[string]any{"active": false}).Expect(t, http.StatusOK)
	s.Do(t, "GET", "/api_keys", tok, nil).ExpectError(t, http.StatusForbidden, "ERR_NGROK_203", "")
	s.Do(t, "POST", "/api_keys", tok, map[string]any{}).ExpectError(t, http.StatusForbidden, "ERR_NGROK_203", "")
	s.Do(t, "GET", "/api_keys", own["token"].(string), nil).ExpectError(t, http.StatusForbidden, "ERR_NGROK_203", "")
	a.Do(t, "PATCH", path+"/"+botID, map[string]any{"active": true}).Expect(t, http.StatusOK)
	s.Do(t, "GET", "/api_keys", tok, nil).Expect(t, http.StatusOK)
	a.Do(t, "DELETE", path+"/"+botID, nil).Expect(t, http.StatusNoContent)
	s.Do(t, "GET", "/api_keys", tok, nil).ExpectError(t, http.StatusForbidden, "ERR_NGROK_203", "")
	// A bot created inactive has refused keys from the start.
	idle := a.Do(t, "POST", path, map[string]any{"name": "idle", "active": false}).Expect(t, http.StatusCreated)
	if idle["active"] != false {
		t.Fatalf("active %v", idle["active"])
	}
	k2 := a.Do(t, "POST", "/api_keys", map[string]any{"owner_id": idle["id"]}).Expect(t, http.StatusCreated)
	s.Do(t, "GET", "/api_keys", k2["token"].(string), nil).ExpectError(t, http.StatusForbidden, "ERR_NGROK_203", "")
}

func TestOwnerMustBeInAccount(t *testing.T) {
	_, a, b := testkit.AppTwoAccounts(t)
	for _, path := range []string{"/api_keys", "/credentials"} {
		before := a.Do(t, "GET", path, nil).Expect(t, 200)
		a.Do(t, "POST", path, map[string]any{"owner_id": b.UserID}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_215", "owner_id")
		a.Do(t, "POST", path, map[string]any{"owner_id": "cr_x"}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_215", "owner_id")
		after := a.Do(t, "GET", path, nil).Expect(t, 200)
		if len(before[listKey(path)].([]any)) != len(after[listKey(path)].([]any)) {
			t.Fatalf("%s: a refused create stored something", path)
		}
		// An admin may assign itself explicitly and another principal of its own account.
		a.Do(t, "POST", path, map[string]any{"owner_id": a.UserID}).Expect(t, 201)
	}
}

func listKey(path string) string {
	if path == "/api_keys" {
		return "keys"
	}
	return strings.TrimPrefix(path, "/")
}

func TestBadInputChangesNothing(t *testing.T) {
	_, a := testkit.AppAccount(t)
	key := a.Do(t, "POST", "/api_keys", map[string]any{"description": "orig", "metadata": "m"}).Expect(t, 201)
	cred := a.Do(t, "POST", "/credentials", map[string]any{"description": "orig", "acl": []string{"bind:a.example.com"}}).Expect(t, 201)
	keyPath, credPath := "/api_keys/"+key["id"].(string), "/credentials/"+cred["id"].(string)
	long255 := strings.Repeat("é", 127) + "a" // 255 bytes
	long256 := strings.Repeat("é", 128)       // 128 characters, 256 bytes
	cases := []struct {
		name, method, path string
		body               any
		code, field        string
	}{
		{"description 256 bytes", "PATCH", keyPath, map[string]any{"description": long256}, "ERR_NGROK_604", "description"},
		{"metadata 4097 bytes", "PATCH", keyPath, map[string]any{"metadata": strings.Repeat("x", 4097)}, "ERR_NGROK_605", "metadata"},
		{"unknown field", "PATCH", keyPath, map[string]any{"descripton": "x"}, "ERR_NGROK_214", "descripton"},
		{"malformed json", "PATCH", keyPath, `{"description":`, "ERR_NGROK_213", "body"},
		{"wrong type", "PATCH", keyPath, map[string]any{"description": 5}, "ERR_NGROK_215", "description"},
		{"empty patch", "PATCH", keyPath, map[string]any{}, "ERR_NGROK_606", ""},
		{"create description 256 bytes", "POST", "/api_keys", map[string]any{"description": long256}, "ERR_NGROK_604", "description"},
		{"cred invalid acl", "PATCH", credPath, map[string]any{"acl": []string{"bind:foo bar"}}, "ERR_NGROK_600", "acl"},
		{"cred acl not bind", "POST", "/credentials", map[string]any{"acl": []string{"connect:x"}}, "ERR_NGROK_600", "acl"},
		{"cred metadata", "PATCH", credPath, map[string]any{"metadata": strings.Repeat("x", 4097)}, "ERR_NGROK_605", "metadata"},
		{"trailing data", "POST", "/api_keys", `{} {}`, "ERR_NGROK_213", "body"},
		{"array body", "POST", "/api_keys", `[]`, "ERR_NGROK_213", "body"},
		{"body too large", "POST", "/api_keys", `{"description":"` + strings.Repeat("x", 1<<20) + `"}`, "ERR_NGROK_215", "body"},
	}
	countKeys := func() int {
		ids, _ := a.WalkPages(t, "/api_keys", "keys")
		return len(ids)
	}
	n := countKeys()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a.Do(t, c.method, c.path, c.body).ExpectError(t, http.StatusBadRequest, c.code, c.field)
		})
	}
	if got := a.Do(t, "GET", keyPath, nil).Expect(t, 200); got["description"] != "orig" || got["metadata"] != "m" {
		t.Fatalf("key changed by refused input: %v", got)
	}
	if got := a.Do(t, "GET", credPath, nil).Expect(t, 200); len(got["acl"].([]any)) != 1 {
		t.Fatalf("credential changed by refused input: %v", got)
	}
	if countKeys() != n {
		t.Fatal("a refused create stored a key")
	}
	// 255 bytes is accepted.
	a.Do(t, "PATCH", keyPath, map[string]any{"description": long255}).Expect(t, 200)
	// Wrong content type.
	if res := a.DoWith(t, "POST", "/api_keys", http.Header{"Content-Type": {"text/plain"}}, `{}`); res.Status != 400 {
		t.Fatalf("text/plain body: %d", res.Status)
	}
}

func TestPatchSemantics(t *testing.T) {
	_, a := testkit.AppAccount(t)
	k := a.Do(t, "POST", "/api_keys", map[string]any{"description": "d", "metadata": "m"}).Expect(t, 201)
	p := "/api_keys/" + k["id"].(string)
	got := a.Do(t, "PATCH", p, map[string]any{"metadata": ""}).Expect(t, 200)
	if _, has := got["metadata"]; has || got["description"] != "d" {
		t.Fatalf("empty string is a real value (stored, so omitted like any empty metadata); absent is unchanged: %v", got)
	}
	c := a.Do(t, "POST", "/credentials", map[string]any{"acl": []string{"bind:x.example.com"}}).Expect(t, 201)
	cp := "/credentials/" + c["id"].(string)
	got = a.Do(t, "PATCH", cp, map[string]any{"acl": []string{"*", "bind:k=*"}}).Expect(t, 200)
	if len(got["acl"].([]any)) != 2 {
		t.Fatalf("a supplied list replaces the stored one: %v", got)
	}
	got = a.Do(t, "PATCH", cp, map[string]any{"description": "x"}).Expect(t, 200)
	if len(got["acl"].([]any)) != 2 {
		t.Fatalf("an absent list is unchanged: %v", got)
	}
}

func TestConcurrentPatchesBothSurvive(t *testing.T) {
	_, a := testkit.AppAccount(t)
	for round := 0; round < 5; round++ {
		k := a.Do(t, "POST", "/api_keys", map[string]any{}).Expect(t, 201)
		p := "/api_keys/" + k["id"].(string)
		for _, res := range testkit.AtOnce(2, func(i int) *testkit.Response {
			return a.Do(t, "PATCH", p, map[string]any{[]string{"description", "metadata"}[i]: []string{"desc", "meta"}[i]})
		}) {
			res.Expect(t, 200)
		}
		got := a.Do(t, "GET", p, nil).Expect(t, 200)
		if got["description"] != "desc" || got["metadata"] != "meta" {
			t.Fatalf("round %d lost an update: %v", round, got)
		}
	}
}

func TestPagingWalk(t *testing.T) {
	_, a := testkit.AppAccount(t)
	var want []string
	for i := 0; i < 249; i++ { // plus the bootstrap key: 250
		k := a.Do(t, "POST", "/api_keys", map[string]any{}).Expect(t, 201)
		want = append(want, k["id"].(string))
	}
	want = append(want, a.APIKeyID)
	got, pages := a.WalkPages(t, "/api_keys?limit=100", "keys")
	if pages != 3 {
		t.Fatalf("%d pages, want 3", pages)
	}
	seen := map[string]bool{}
	for i, id := range got {
		if seen[id] {
			t.Fatalf("duplicate %s", id)
		}
		seen[id] = true
		if i > 0 && got[i-1] <= id {
			t.Fatalf("not newest first at %d: %s then %s", i, got[i-1], id)
		}
	}
	for _, id := range want {
		if !seen[id] {
			t.Fatalf("gap: %s missing", id)
		}
	}
	// A concurrent writer during the walk: every key that existed before appears exactly once.
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				a.Do(t, "POST", "/api_keys", map[string]any{"description": "during walk"}).Expect(t, 201)
			}
		}
	}()
	got2, _ := a.WalkPages(t, "/api_keys?limit=100", "keys")
	close(stop)
	<-done
	count := map[string]int{}
	for _, id := range got2 {
		count[id]++
	}
	for _, id := range want {
		if count[id] != 1 {
			t.Fatalf("%s appeared %d times during a concurrent walk", id, count[id])
		}
	}
}

func TestRoundTrips(t *testing.T) {
	_, a := testkit.AppAccount(t)
	k := a.Do(t, "POST", "/api_keys", map[string]any{}).Expect(t, 201) // warms the token hint
	p := "/api_keys/" + k["id"].(string)
	a.WithinCalls(t,
		testkit.Trip("get", "GET", p, nil, 1),
		testkit.Trip("list", "GET", "/api_keys", nil, 2), // the query and the auth read, in parallel
		testkit.Trip("create", "POST", "/api_keys", map[string]any{}, 1),
		testkit.Trip("update", "PATCH", p, map[string]any{"description": "x"}, 2),
		testkit.Trip("delete", "DELETE", p, nil, 2),
	)
}

func TestListFilter(t *testing.T) {
	_, a := testkit.AppAccount(t)
	var tagged []string
	for i := 0; i < 30; i++ {
		desc := "plain"
		if i%3 == 0 {
			desc = "tagged"
		}
		k := a.Do(t, "POST", "/api_keys", map[string]any{"description": desc}).Expect(t, 201)
		if desc == "tagged" {
			tagged = append(tagged, k["id"].(string))
		}
	}
	got, pages := a.WalkPages(t, "/api_keys?limit=4&filter="+url.QueryEscape(`obj.description == "tagged"`), "keys")
	if len(got) != len(tagged) || pages != 3 {
		t.Fatalf("filtered walk: %d items in %d pages, want %d in 3", len(got), pages, len(tagged))
	}
	sort.Sort(sort.Reverse(sort.StringSlice(tagged))) // newest first is descending id order
	for i, id := range got {
		if id != tagged[i] {
			t.Fatalf("item %d = %s, want %s (descending ids)", i, id, tagged[i])
		}
	}
	page := a.Do(t, "GET", "/api_keys?limit=4&filter="+url.QueryEscape(`obj.description == "tagged"`), nil).Expect(t, 200)
	if next, _ := page["next_page_uri"].(string); !strings.Contains(next, "filter=") {
		t.Fatalf("next_page_uri %q does not carry the filter", next)
	}
	c := a.Do(t, "POST", "/credentials", map[string]any{"acl": []string{"bind:x.example.com"}}).Expect(t, 201)
	list := a.Do(t, "GET", "/credentials?filter="+url.QueryEscape(`"bind:x.example.com" in obj.acl && obj.created_at > timestamp(time.now).subtract("1h")`), nil).Expect(t, 200)
	if items := list["credentials"].([]any); len(items) != 1 || items[0].(map[string]any)["id"] != c["id"] {
		t.Fatalf("credential filter: %v", list)
	}
	a.Do(t, "GET", "/api_keys?filter="+url.QueryEscape(`obj.acl[0] == "x"`), nil).ExpectError(t, 400, "ERR_NGROK_250", "filter")
	for _, bad := range []string{`obj.description == "\q"`, "obj.description == \"\xff\"", `size(obj.acl) == 1.2.3`} {
		a.Do(t, "GET", "/api_keys?filter="+url.QueryEscape(bad), nil).ExpectError(t, 400, "ERR_NGROK_250", "filter")
	}
	a.Do(t, "GET", "/bot_users?filter=x", nil).ExpectError(t, 400, "ERR_NGROK_231", "filter")

	// Empty text is omitted from the JSON, and still "" to a filter, as the platform's filters
	// see it: the key without a description or metadata matches, the others do not.
	bare := a.Do(t, "POST", "/api_keys", map[string]any{}).Expect(t, 201)
	if _, has := bare["description"]; has {
		t.Fatalf("an empty description is rendered: %v", bare)
	}
	for _, expr := range []string{`obj.description == ""`, `obj.metadata == "" && size(obj.description) == 0`} {
		got, _ := a.WalkPages(t, "/api_keys?filter="+url.QueryEscape(expr), "keys")
		if !slices.Contains(got, bare["id"].(string)) || slices.Contains(got, tagged[0]) {
			t.Fatalf("%s: %v, want %s and no key with a description", expr, got, bare["id"])
		}
	}
	emptyCreds := a.Do(t, "GET", "/credentials?filter="+url.QueryEscape(`obj.description == ""`), nil).Expect(t, 200)["credentials"].([]any)
	if len(emptyCreds) != 1 || emptyCreds[0].(map[string]any)["id"] != c["id"] {
		t.Fatalf("credentials without a description: %v", emptyCreds)
	}
}

// A key or credential for another owner copies what its token needs of the owner (a bot's name,
// a user's email and admin flag) from what the process knows of it, asserted by its one
// transaction: warm, it is one TransactWriteItems; a renamed, deleted or re-created owner is
// never copied stale.
func TestOwnerFactsOneCallAndNeverStale(t *testing.T) {
	s, a := testkit.AppAccount(t)
	subject := func(res map[string]any) string {
		var tok auth.TokenItem
		if err := s.DB.Get(t.Context(), store.TokenKey(store.TokenHash(res["token"].(string))), &tok); err != nil {
			t.Fatal(err)
		}
		return tok.Subject
	}
	one := map[string]int{"TransactWriteItems": 1}
	for i, path := range []string{"/api_keys", "/credentials"} {
		owners := []string{"/bot_users", "/service_users"}[i] // either path's principals
		bot := a.Do(t, "POST", owners, map[string]any{"name": "first"}).Expect(t, http.StatusCreated)["id"].(string)
		body := map[string]any{"owner_id": bot}
		a.Do(t, "POST", path, body).Expect(t, http.StatusCreated) // the process learns the bot
		var res map[string]any
		if got := s.RoundTripsOf(t, func() { res = a.Do(t, "POST", path, body).Expect(t, http.StatusCreated) }); !maps.Equal(got, one) {
			t.Errorf("%s for a known owner made DynamoDB calls %v, want %v", path, got, one)
		}
		if res["owner_id"] != bot || subject(res) != "first" {
			t.Fatalf("%s: owner %v subject %q", path, res["owner_id"], subject(res))
		}
		// Renamed: the known name fails the commit and the token carries the new one.
		a.Do(t, "PATCH", owners+"/"+bot, map[string]any{"name": "second"}).Expect(t, http.StatusOK)
		if got := subject(a.Do(t, "POST", path, body).Expect(t, http.StatusCreated)); got != "second" {
			t.Fatalf("%s after a rename: token subject %q, want second", path, got)
		}
		// Deleted: refused as an unknown owner would be, storing nothing.
		a.Do(t, "DELETE", owners+"/"+bot, nil).Expect(t, http.StatusNoContent)
		a.Do(t, "POST", path, body).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_215", "owner_id")
	}
	// A user of the account: its email and admin flag are copied as they are.
	if got := subject(a.Do(t, "POST", "/api_keys", map[string]any{"owner_id": a.UserID}).Expect(t, http.StatusCreated)); got == "" {
		t.Fatalf("a key for the admin user has no subject")
	}
}

func TestServiceUsersConformance(t *testing.T) {
	s := testkit.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: principals.ServiceUsersDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			return map[string]any{"name": "ci-service"}
		},
		Update:      map[string]any{"name": "deploy-service", "active": true},
		UpdateWants: map[string]any{"name": "deploy-service", "active": true},
	})
}

// Service users and bot users are one kind of principal seen through two paths, each with its
// own ids, list and events: an id of either works wherever owner_id is accepted, and each path
// serves only its own ids. Service users list with filter; bot users do not (as the OpenAPI).
func TestServiceUsersBesideBotUsers(t *testing.T) {
	_, a, b := testkit.AppTwoAccounts(t)
	svc := a.Do(t, "POST", "/service_users", map[string]any{"name": "deployer", "active": false}).Expect(t, http.StatusCreated)
	bot := a.Do(t, "POST", "/bot_users", map[string]any{"name": "ci"}).Expect(t, http.StatusCreated)
	svcID, botID := svc["id"].(string), bot["id"].(string)
	if !ids.Is(svcID, ids.ServiceUser) || svc["active"] != false || svc["uri"] != a.URL("/service_users/"+svcID) {
		t.Fatalf("service user %v", svc)
	}
	a.Do(t, "GET", "/bot_users/"+svcID, nil).ExpectError(t, http.StatusNotFound, "", "")
	a.Do(t, "GET", "/service_users/"+botID, nil).ExpectError(t, http.StatusNotFound, "", "")
	svcs, _ := a.WalkPages(t, "/service_users", "service_users")
	bots, _ := a.WalkPages(t, "/bot_users", "bot_users")
	if !slices.Equal(svcs, []string{svcID}) || !slices.Equal(bots, []string{botID}) {
		t.Fatalf("service users %v, bot users %v", svcs, bots)
	}
	for _, owner := range []string{svcID, botID} {
		for _, path := range []string{"/api_keys", "/credentials"} {
			if got := a.Do(t, "POST", path, map[string]any{"owner_id": owner}).Expect(t, http.StatusCreated); got["owner_id"] != owner {
				t.Fatalf("%s owner_id %v, want %s", path, got["owner_id"], owner)
			}
		}
		b.Do(t, "POST", "/api_keys", map[string]any{"owner_id": owner}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_215", "owner_id")
	}
	active := a.Do(t, "GET", "/service_users?filter="+url.QueryEscape(`obj.active == false && obj.name == "deployer"`), nil).Expect(t, http.StatusOK)
	if items := active["service_users"].([]any); len(items) != 1 || items[0].(map[string]any)["id"] != svcID {
		t.Fatalf("filtered service users: %v", active)
	}
	a.Do(t, "GET", "/service_users?filter="+url.QueryEscape(`obj.name[0] == "d"`), nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_250", "filter")
	// Refused input names its field and changes nothing.
	before := a.Snapshot(t)
	for _, c := range []struct {
		method, path string
		body         any
		code, field  string
	}{
		{"POST", "/service_users", map[string]any{}, "ERR_NGROK_215", "name"},
		{"POST", "/service_users", map[string]any{"name": strings.Repeat("n", 256)}, "ERR_NGROK_215", "name"},
		{"POST", "/service_users", map[string]any{"name": "x", "active": "yes"}, "ERR_NGROK_215", "active"},
		{"POST", "/service_users", map[string]any{"name": "x", "owner_id": botID}, "ERR_NGROK_214", "owner_id"},
		{"PATCH", "/service_users/" + svcID, map[string]any{"name": ""}, "ERR_NGROK_215", "name"},
		{"PATCH", "/service_users/" + svcID, map[string]any{}, "ERR_NGROK_606", "body"},
		{"PATCH", "/service_users/" + svcID, map[string]any{"id": botID, "name": "y"}, "ERR_NGROK_215", "id"},
	} {
		a.Do(t, c.method, c.path, c.body).ExpectError(t, http.StatusBadRequest, c.code, c.field)
	}
	a.Unchanged(t, before, "refused service user requests")
	// Events carry the service user's own kind.
	a.Do(t, "DELETE", "/service_users/"+svcID, nil).Expect(t, http.StatusNoContent)
	kinds := map[string]bool{}
	for _, ev := range a.AuditLog(t) {
		kinds[ev.EventType] = true
	}
	for _, want := range []string{"service_user_created.v0", "service_user_deleted.v0", "bot_user_created.v0"} {
		if !kinds[want] {
			t.Errorf("no %s in the audit log: %v", want, kinds)
		}
	}
}
