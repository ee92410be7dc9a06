package audit_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/fakedb"
)

func request() *api.Request {
	return api.RequestAs(httptest.NewRequest("POST", "https://api.test/widgets", nil),
		api.Caller{AccountID: "ac_1", PrincipalID: "usr_1", CredentialID: "ak_1", Subject: "someone@example.com"})
}

func TestType(t *testing.T) {
	if got := audit.Type("api_key", "created"); got != "api_key_created.v0" {
		t.Errorf("Type = %q", got)
	}
}

// TestRecord: a mutation's event is one outbox item and one audit-log item in its transaction,
// both carrying the envelope as delivered.
func TestRecord(t *testing.T) {
	ctx := context.Background()
	f := fakedb.New()
	db := store.New(f, "t")
	tx := &store.Tx{}
	object := map[string]string{"id": "w_1"}
	start := time.Now().UTC()
	env, err := audit.Record(tx, request(), "widget_created.v0", object)
	if err != nil {
		t.Fatal(err)
	}
	if tx.Len() != 2 {
		t.Fatalf("Record added %d writes, want 2", tx.Len())
	}
	if err := db.Commit(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if !ids.Is(env.EventID, ids.Event) || env.EventType != "widget_created.v0" || env.AccountID != "ac_1" || string(env.Object) != `{"id":"w_1"}` {
		t.Errorf("envelope = %+v", env)
	}
	ts, err := time.Parse("2006-01-02T15:04:05Z", env.EventTimestamp)
	if err != nil || ts.Before(start.Truncate(time.Second)) || ts.After(time.Now().Add(time.Second)) {
		t.Errorf("event_timestamp = %q (%v)", env.EventTimestamp, err)
	}
	want := audit.Principal{ID: "usr_1", Subject: "someone@example.com", Source: "API",
		Credential: api.Ref{ID: "ak_1", URI: "https://api.test/api_keys/ak_1"}}
	if env.Principal != want {
		t.Errorf("principal = %+v, want %+v", env.Principal, want)
	}

	var ob audit.OutboxItem
	ok := store.OutboxKey(env.EventID)
	if err := store.Unmarshal(f.Item(ok.PK, ok.SK), &ob); err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(env)
	if ob.EventID != env.EventID || ob.EventType != env.EventType || ob.AccountID != "ac_1" || ob.Payload != string(payload) || ob.Created < start.Unix() {
		t.Errorf("outbox item = %+v", ob)
	}
	// It expires by TTL OutboxRetention after the commit (7 days unless configured).
	if exp := time.Unix(ob.TTL, 0); exp.Before(start.Add(audit.OutboxRetention-time.Second)) || exp.After(time.Now().Add(audit.OutboxRetention)) {
		t.Errorf("outbox item expires at %v", exp)
	}
	// The payload's members are in the wire order.
	order := []string{`"event_id"`, `"event_type"`, `"event_timestamp"`, `"account_id"`, `"object"`, `"principal"`}
	last := -1
	for _, m := range order {
		i := strings.Index(ob.Payload, m)
		if i < last {
			t.Errorf("payload member %s out of order: %s", m, ob.Payload)
		}
		last = i
	}

	var lg audit.LogItem
	lk := store.EventLogKey("ac_1", env.EventID)
	if err := store.Unmarshal(f.Item(lk.PK, lk.SK), &lg); err != nil {
		t.Fatal(err)
	}
	if lg.Payload != ob.Payload || lg.EventType != env.EventType || lg.TTL < start.Add(audit.LogRetention).Unix()-1 {
		t.Errorf("log item = %+v", lg)
	}
}

func TestRecordErrors(t *testing.T) {
	if _, err := audit.Record(&store.Tx{}, &api.Request{HTTP: httptest.NewRequest("POST", "/", nil)}, "x_created.v0", 1); err == nil {
		t.Error("no caller: no error")
	}
	if _, err := audit.Record(&store.Tx{}, request(), "x_created.v0", make(chan int)); err == nil {
		t.Error("unmarshalable object: no error")
	}
}

// TestRecordLargeEvent: an event too large for a queue message is queued as its Reference
// while the audit log keeps the whole envelope, which Load returns; HTML in the object is not
// escaped (escaping would multiply its size).
func TestRecordLargeEvent(t *testing.T) {
	ctx := context.Background()
	f := fakedb.New()
	db := store.New(f, "t")
	for _, tc := range []struct {
		name     string
		bodySize int
		inline   bool
	}{
		{"small", 1000, true},
		{"just fits", audit.MaxMessageBytes - 400, true},
		{"too large for the queue", audit.MaxMessageBytes, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := strings.Repeat("<b>&amp;</b>", tc.bodySize/12)
			tx := &store.Tx{}
			env, err := audit.Record(tx, request(), "endpoint_created.v0", map[string]string{"body": body})
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Commit(ctx, tx); err != nil {
				t.Fatal(err)
			}
			whole, err := audit.Load(ctx, db, "ac_1", env.EventID)
			if err != nil {
				t.Fatal(err)
			}
			var back struct {
				EventID string            `json:"event_id"`
				Object  map[string]string `json:"object"`
			}
			if err := json.Unmarshal(whole, &back); err != nil || back.EventID != env.EventID || back.Object["body"] != body {
				t.Fatalf("the log holds %.200s (%v)", whole, err)
			}
			if len(whole) > len(body)+1000 {
				t.Errorf("the envelope of a %d-byte object takes %d bytes", len(body), len(whole))
			}
			k := store.OutboxKey(env.EventID)
			var ob audit.OutboxItem
			if err := store.Unmarshal(f.Item(k.PK, k.SK), &ob); err != nil {
				t.Fatal(err)
			}
			if ob.Payload != env.Message() || len(env.Message()) > audit.MaxMessageBytes {
				t.Fatalf("outbox payload of %d bytes, message of %d", len(ob.Payload), len(env.Message()))
			}
			if tc.inline {
				if env.Message() != string(whole) {
					t.Fatal("a small event is not queued whole")
				}
				return
			}
			var ref audit.Reference
			if err := json.Unmarshal([]byte(env.Message()), &ref); err != nil || ref.Stored != audit.StoredInLog ||
				ref.EventID != env.EventID || ref.AccountID != "ac_1" || ref.EventType != "endpoint_created.v0" || ref.EventTimestamp != env.EventTimestamp {
				t.Fatalf("reference %s (%v)", env.Message(), err)
			}
		})
	}
}

// TestOnBehalf: a change recorded later on behalf of a request's caller has that caller's
// principal and URIs on the host the request came to; without one (nil), no principal and URIs
// on a host that is never served.
func TestOnBehalf(t *testing.T) {
	for _, tc := range []struct {
		name, url, proto, base string
	}{
		{"https", "https://api.example.com/reserved_domains", "", "https://api.example.com"},
		{"behind a proxy", "http://api.example.com/reserved_domains", "https", "https://api.example.com"},
		{"loopback", "http://127.0.0.1:8080/agent_ingresses", "", "http://127.0.0.1:8080"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hr := httptest.NewRequest("PATCH", tc.url, nil)
			if tc.proto != "" {
				hr.Header.Set("X-Forwarded-Proto", tc.proto)
			}
			r := api.RequestAs(hr, api.Caller{AccountID: "ac_1", PrincipalID: "usr_1", CredentialID: "ak_1", Subject: "someone@example.com"})
			o := audit.OnBehalfOf(r)
			later := o.Request("ac_1")
			env, err := audit.Record(&store.Tx{}, later, "domain_updated.v0", map[string]string{"uri": later.URI("/reserved_domains/rd_1")})
			if err != nil {
				t.Fatal(err)
			}
			want := audit.Principal{ID: "usr_1", Subject: "someone@example.com", Source: "API", Credential: api.Ref{ID: "ak_1", URI: tc.base + "/api_keys/ak_1"}}
			if env.Principal != want || env.AccountID != "ac_1" || string(env.Object) != `{"uri":"`+tc.base+`/reserved_domains/rd_1"}` {
				t.Errorf("recorded later: %+v %s, want %+v on %s", env.Principal, env.Object, want, tc.base)
			}
		})
	}
	if audit.OnBehalfOf(&api.Request{HTTP: httptest.NewRequest("GET", "/", nil)}) != nil {
		t.Error("a request without a caller gives an OnBehalf")
	}
	var none *audit.OnBehalf
	r := none.Request("ac_2")
	if c := r.Caller(); c == nil || c.AccountID != "ac_2" || c.PrincipalID != "" || r.BaseURL() != "https://api.invalid" {
		t.Errorf("nil OnBehalf: caller %+v on %s", c, r.BaseURL())
	}
}
