package abuse_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"tunnelapi/shared/families/abuse"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/testing/testkit"
)

func TestAbuseReportsConformance(t *testing.T) {
	s := testkit.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: abuse.ReportsDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			return map[string]any{"urls": []string{fmt.Sprintf("https://phish%d.example.com/login", n)}, "metadata": `{"ticket":1}`}
		},
		Text: "metadata",
	})
}

// A report is as the platform records it: its urls as sent, metadata, status PENDING and the
// hostnames of its urls (lower-cased, each once, in the order first named), each PENDING; get
// answers what the create did, byte for byte, and the create records its audit event with the
// same object. Metadata is omitted when not given, as every family omits empty free text.
func TestAbuseReportShape(t *testing.T) {
	_, a := testkit.AppAccount(t)
	urls := []string{"https://Phish.Example.com/login", "http://phish.example.com:8080/pay?x=1", "https://cdn.example.net/a.exe"}
	res := a.Do(t, "POST", "/abuse_reports", map[string]any{"urls": urls, "metadata": `{"reporter":"soc"}`})
	created := res.Expect(t, http.StatusCreated)
	id := created["id"].(string)
	if keys := slices.Sorted(maps.Keys(created)); !slices.Equal(keys, []string{"created_at", "hostnames", "id", "metadata", "status", "uri", "urls"}) {
		t.Fatalf("members %v", keys)
	}
	if fmt.Sprint(created["urls"]) != fmt.Sprint(urls) || created["status"] != abuse.StatusPending || created["metadata"] != `{"reporter":"soc"}` {
		t.Fatalf("report %v", created)
	}
	want := `[{"hostname":"phish.example.com","status":"PENDING"},{"hostname":"cdn.example.net","status":"PENDING"}]`
	if got, _ := json.Marshal(created["hostnames"]); string(got) != want {
		t.Fatalf("hostnames %s, want %s", got, want)
	}
	got := a.Do(t, "GET", "/abuse_reports/"+id, nil)
	got.Expect(t, http.StatusOK)
	if string(got.Body) != string(res.Body) {
		t.Fatalf("get %s differs from create %s", got.Body, res.Body)
	}
	var events []string
	for _, ev := range a.AuditLog(t) {
		events = append(events, ev.EventType)
		var env struct{ Object json.RawMessage }
		if err := json.Unmarshal([]byte(ev.Payload), &env); err != nil {
			t.Fatal(err)
		}
		if ev.EventType == audit.Type("abuse_report", "created") && strings.TrimSpace(string(env.Object)) != strings.TrimSpace(string(res.Body)) {
			t.Fatalf("event object %s, want %s", env.Object, res.Body)
		}
	}
	if !slices.Equal(events, []string{audit.Type("abuse_report", "created")}) {
		t.Fatalf("audit events %v, want one abuse_report_created.v0", events)
	}
	bare := a.Do(t, "POST", "/abuse_reports", map[string]any{"urls": urls[:1]}).Expect(t, http.StatusCreated)
	if _, ok := bare["metadata"]; ok {
		t.Fatalf("metadata present though not given: %v", bare)
	}
}

// Every bad create is a 400 naming its field, and stores nothing; the largest report allowed is
// stored whole.
func TestAbuseReportBadInput(t *testing.T) {
	_, a := testkit.AppAccount(t)
	long := "https://example.com/" + strings.Repeat("a", abuse.MaxURLBytes)
	many := make([]string, abuse.MaxURLs+1)
	for i := range many {
		many[i] = fmt.Sprintf("https://h%d.example.com/", i)
	}
	before := a.Snapshot(t)
	for _, c := range []struct {
		name        string
		body        any
		code, field string
	}{
		{"no urls", map[string]any{"metadata": "m"}, "ERR_NGROK_215", "urls"},
		{"empty urls", map[string]any{"urls": []string{}}, "ERR_NGROK_215", "urls"},
		{"null urls", map[string]any{"urls": nil}, "ERR_NGROK_215", "urls"},
		{"urls a string", map[string]any{"urls": "https://example.com"}, "ERR_NGROK_215", "urls"},
		{"a url a number", map[string]any{"urls": []any{7}}, "ERR_NGROK_215", "urls[0]"},
		{"relative", map[string]any{"urls": []string{"/login"}}, "ERR_NGROK_215", "urls"},
		{"no scheme", map[string]any{"urls": []string{"phish.example.com/login"}}, "ERR_NGROK_215", "urls"},
		{"ftp", map[string]any{"urls": []string{"ftp://phish.example.com/"}}, "ERR_NGROK_215", "urls"},
		{"no host", map[string]any{"urls": []string{"https:///login"}}, "ERR_NGROK_215", "urls"},
		{"unparseable", map[string]any{"urls": []string{"https://exa mple.com/%zz"}}, "ERR_NGROK_215", "urls"},
		{"second bad", map[string]any{"urls": []string{"https://ok.example.com/", ""}}, "ERR_NGROK_215", "urls"},
		{"too long", map[string]any{"urls": []string{long}}, "ERR_NGROK_215", "urls"},
		{"too many", map[string]any{"urls": many}, "ERR_NGROK_215", "urls"},
		{"metadata too long", map[string]any{"urls": many[:1], "metadata": strings.Repeat("m", 4097)}, "ERR_NGROK_215", "metadata"},
		{"description", map[string]any{"urls": many[:1], "description": "d"}, "ERR_NGROK_214", "description"},
		{"status", map[string]any{"urls": many[:1], "status": "PROCESSED"}, "ERR_NGROK_214", "status"},
		{"hostnames", map[string]any{"urls": many[:1], "hostnames": []any{}}, "ERR_NGROK_214", "hostnames"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a.Do(t, "POST", "/abuse_reports", c.body).ExpectError(t, http.StatusBadRequest, c.code, c.field)
		})
	}
	a.Unchanged(t, before, "refused abuse reports")
	largest := make([]string, abuse.MaxURLs)
	for i := range largest {
		largest[i] = fmt.Sprintf("https://h%d.example.com/", i) + strings.Repeat("p", abuse.MaxURLBytes-40)
	}
	created := a.Do(t, "POST", "/abuse_reports", map[string]any{"urls": largest, "metadata": strings.Repeat("m", 4096)}).Expect(t, http.StatusCreated)
	got := a.Do(t, "GET", "/abuse_reports/"+created["id"].(string), nil).Expect(t, http.StatusOK)
	if len(got["urls"].([]any)) != abuse.MaxURLs || len(got["hostnames"].([]any)) != abuse.MaxURLs {
		t.Fatalf("the largest report came back with %d urls and %d hostnames", len(got["urls"].([]any)), len(got["hostnames"].([]any)))
	}
}
