package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/families/tunnels"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// ledger records what the API said it committed, so the table can be checked against it.
type ledger struct {
	mu        sync.Mutex
	mutations int      // 2xx responses to POST, PATCH, PUT and DELETE
	shown     [][]byte // the bodies of those that name a token, decoded by secrets
}

// observe wraps the server's handler to record committed mutations and the secrets shown.
func (l *ledger) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			// Never recorded (see record): served as the server serves it, without a copy of
			// the body, so that benchmarks of GET measure the server and not this wrapper.
			next.ServeHTTP(w, r)
			return
		}
		rec := &recorder{ResponseWriter: w, status: 200}
		next.ServeHTTP(rec, r)
		if w.Header().Get(resource.ReplayedHeader) != "" {
			return // a repeated create answered from its record: nothing committed
		}
		l.record(r.Method, rec.status, rec.body)
	})
}

// record notes a response: a 2xx to anything but GET is a committed mutation. It runs while
// the request is answered, so it only keeps the body of one that names a token (body is the
// ledger's from then on); secrets decodes them when the table is checked.
func (l *ledger) record(method string, status int, body []byte) {
	if method == http.MethodGet || status >= 300 {
		return
	}
	named := bytes.Contains(body, []byte(`"token"`))
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mutations++
	if named {
		l.shown = append(l.shown, body)
	}
}

// secrets returns every token shown in a response recorded so far.
func (l *ledger) secrets() []string {
	l.mu.Lock()
	shown := l.shown[:len(l.shown):len(l.shown)]
	l.mu.Unlock()
	var out []string
	for _, body := range shown {
		var m map[string]any
		if json.Unmarshal(body, &m) == nil {
			if tok, ok := m["token"].(string); ok && tok != "" {
				out = append(out, tok)
			}
		}
	}
	return out
}

type recorder struct {
	http.ResponseWriter
	status int
	body   []byte
}

// WriteHeader implements http.ResponseWriter.
func (r *recorder) WriteHeader(s int) { r.status = s; r.ResponseWriter.WriteHeader(s) }

// Write implements http.ResponseWriter.
func (r *recorder) Write(b []byte) (int, error) {
	r.body = append(r.body, b...)
	return r.ResponseWriter.Write(b)
}

func str(it store.Item, name string) string {
	if v, ok := it[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// CheckInvariants scans the table and reports any violation of the stored-state invariants for
// what the tests did through the server: every token hash has its key or credential and every
// key or credential its token hash; every account's IP restriction version has its item and
// every other version's item is retired (expiring); exactly one audit event per committed mutation
// besides those of managed certificates it deleted; no secret shown by the API appears anywhere
// in the table.
func (s *Stack) CheckInvariants(ctx context.Context) error {
	items, err := s.Items(ctx)
	if err != nil {
		return err
	}
	byKey := map[store.Key]store.Item{}
	for _, it := range items {
		byKey[store.Key{PK: str(it, store.AttrPK), SK: str(it, store.AttrSK)}] = it
	}
	var problems []string
	// logEvents counts each mutation's own event; allEvents adds the events of the managed
	// certificates a mutation deleted with its domain or ingress.
	logEvents, allEvents, outbox := 0, 0, 0
	for k, it := range byKey {
		switch {
		case strings.HasPrefix(k.PK, "T#"):
			owner := store.ResourceKey(str(it, "account"), str(it, "rid"))
			if str(it, "kind") == tunnels.KindTunnelServer {
				owner = store.TunnelServerKey(str(it, "rid"))
			}
			res, ok := byKey[owner]
			if !ok {
				problems = append(problems, fmt.Sprintf("token hash %s without its resource %s", k.PK, owner.SK))
			} else if "T#"+str(res, "token_hash") != k.PK {
				problems = append(problems, fmt.Sprintf("token hash %s does not match resource %s", k.PK, owner.SK))
			}
		case strings.HasPrefix(k.PK, "E#"):
			allEvents++
			if !managedCertificateEvent(str(it, "event_type"), str(it, "payload")) && !reportedEvent[str(it, "event_type")] {
				logEvents++
			}
		case strings.HasPrefix(k.PK, "O#"):
			outbox++
		}
		if k.SK == "ACCOUNT" {
			if v, ok := it["ipx_v"].(*types.AttributeValueMemberN); ok {
				if _, ok := byKey[store.Key{PK: k.PK, SK: "IPX#" + v.Value}]; !ok {
					problems = append(problems, fmt.Sprintf("%s names IP restriction version %s, which has no item", k.PK, v.Value))
				}
			}
		}
		if strings.HasPrefix(k.SK, "IPX#") {
			acct, ok := byKey[store.Key{PK: k.PK, SK: "ACCOUNT"}]
			v, _ := acct["ipx_v"].(*types.AttributeValueMemberN)
			_, retired := it[store.AttrTTL]
			if (!ok || v == nil || "IPX#"+v.Value != k.SK) && !retired {
				problems = append(problems, fmt.Sprintf("%s %s is neither the account's current IP restriction version nor retired", k.PK, k.SK))
			}
		}
		if h := str(it, "token_hash"); h != "" {
			if _, ok := byKey[store.TokenKey(h)]; !ok {
				problems = append(problems, fmt.Sprintf("%s has no token hash item", k.SK))
			}
		}
	}
	s.ledger.mu.Lock()
	mutations := s.ledger.mutations
	s.ledger.mu.Unlock()
	secrets := s.ledger.secrets()
	if logEvents != mutations {
		problems = append(problems, fmt.Sprintf("%d audit events for %d committed mutations", logEvents, mutations))
	}
	if outbox > allEvents {
		problems = append(problems, fmt.Sprintf("%d outbox items but only %d audit events", outbox, allEvents))
	}
	raw, err := json.Marshal(items)
	if err != nil {
		return err
	}
	dump := string(raw)
	for _, sec := range secrets {
		if strings.Contains(dump, sec) || strings.Contains(dump, sec[28:]) {
			problems = append(problems, "a token shown once is stored in plaintext")
			break
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("table invariants violated:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

// managedCertificateEvent reports an event of a managed certificate (issued_at set) created or
// deleted: recorded besides the event of the mutation that replaced or deleted it (its domain's
// or ingress's), never as a mutation's own event, since the API neither creates one nor deletes
// one directly (it is in use while it exists).
func managedCertificateEvent(eventType, payload string) bool {
	if eventType != audit.Type("tls_certificate", "created") && eventType != audit.Type("tls_certificate", "deleted") {
		return false
	}
	var env struct {
		Object struct {
			IssuedAt *string `json:"issued_at"`
		} `json:"object"`
	}
	return json.Unmarshal([]byte(payload), &env) == nil && env.Object.IssuedAt != nil
}

// reportedEvent are the event types of what a tunnel server reported (package frpplugin): a
// session started or ended, a tunnel opened or closed, never an API mutation's own event.
var reportedEvent = map[string]bool{
	audit.Type("tunnel_session", "created"): true, audit.Type("tunnel_session", "deleted"): true,
	audit.Type("tunnel", "created"): true, audit.Type("tunnel", "deleted"): true,
}

// Main runs a package's tests on a shared stack and then checks the table's invariants and any
// checks of the package's own (such as a scan for private key material), failing the binary if
// any is violated.
func Main(m *testing.M, checks ...func(*Stack) error) {
	code := m.Run()
	sharedMu.Lock()
	s := sharedStack
	sharedMu.Unlock()
	// Benchmarks write baseline transactions of their own (a floor to compare against) that are
	// not requests, so the table is checked after test runs only.
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		s = nil
	}
	if code == 0 && s != nil {
		checks = append([]func(*Stack) error{func(s *Stack) error { return s.CheckInvariants(context.Background()) }}, checks...)
		for _, check := range checks {
			if err := check(s); err != nil {
				fmt.Fprintln(os.Stderr, err)
				code = 1
			}
		}
		if code == 0 {
			fmt.Printf("table invariants hold (%d committed mutations checked)\n", s.ledger.mutations)
		}
	}
	os.Exit(code)
}

// Outbox returns every outbox item of the table: the committed events the table's stream must
// carry to the events queue.
func (s *Stack) Outbox(t testing.TB) []audit.OutboxItem {
	t.Helper()
	var out []audit.OutboxItem
	for shard := 0; shard < store.OutboxShards; shard++ {
		out = append(out, QueryAll[audit.OutboxItem](t, s.DB, store.OutboxPartition(shard))...)
	}
	return out
}

// AuditLog returns every event in the account's audit log.
func (a *Account) AuditLog(t testing.TB) []audit.LogItem {
	t.Helper()
	return QueryAll[audit.LogItem](t, a.s.DB, store.EventLogKey(a.AccountID, "").PK)
}

// QueryAll returns every item of partition decoded into a T, failing t on any error.
func QueryAll[T any](t testing.TB, db *store.DB, partition string) []T {
	t.Helper()
	items, err := db.QueryAll(context.Background(), partition)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]T, 0, len(items))
	for _, raw := range items {
		var it T
		if err := store.Unmarshal(raw, &it); err != nil {
			t.Fatal(err)
		}
		out = append(out, it)
	}
	return out
}
