package edges_test

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m, checkEdges) }

// checkEdges is the edges' invariant over the whole table after the package's tests: every id an
// edge references (its modules', its hostports' reservations) exists in the edge's account with
// a reference count at least the number of edges referencing it, and every hostport of an edge
// has its guard naming that edge, and every guard an edge holding its hostport.
func checkEdges(s *testkit.Stack) error {
	items, err := s.Items(context.Background())
	if err != nil {
		return err
	}
	type ref struct{ account, id string }
	byKey := map[store.Key]map[string]any{}
	for _, it := range items {
		var m map[string]any
		if err := attributevalue.UnmarshalMap(it, &m); err != nil {
			return err
		}
		pk, _ := m[store.AttrPK].(string)
		sk, _ := m[store.AttrSK].(string)
		byKey[store.Key{PK: pk, SK: sk}] = m
	}
	referrers := map[ref]int{}
	var problems []string
	edges := 0
	for k, m := range byKey {
		if strings.HasPrefix(k.PK, "U#edge_hostport#") {
			hp := strings.TrimPrefix(k.PK, "U#edge_hostport#")
			edge := byKey[store.ResourceKey(fmt.Sprint(m["account"]), fmt.Sprint(m["edge_id"]))]
			held, _ := edge["hostports"].([]any)
			if !slices.Contains(held, any(hp)) {
				problems = append(problems, fmt.Sprintf("guard of %s names %v, which does not hold it", hp, m["edge_id"]))
			}
			continue
		}
		if !strings.Contains(k.PK, "#edgtls") && !strings.Contains(k.PK, "#edgtcp") {
			continue
		}
		edges++
		account := fmt.Sprint(m["account"])
		var ids []string
		for _, mod := range []string{"backend", "ip_restriction", "mutual_tls"} {
			v, _ := m[mod].(map[string]any)
			for _, attr := range []string{"backend_id", "ip_policy_ids", "certificate_authority_ids"} {
				switch x := v[attr].(type) {
				case string:
					ids = append(ids, x)
				case []any:
					for _, id := range x {
						ids = append(ids, fmt.Sprint(id))
					}
				}
			}
		}
		res, _ := m["reservations"].(map[string]any)
		for _, id := range res {
			ids = append(ids, fmt.Sprint(id))
		}
		hps, _ := m["hostports"].([]any)
		for _, hp := range hps {
			g := byKey[store.GuardKey("edge_hostport", fmt.Sprint(hp))]
			if g == nil || g["edge_id"] != m["id"] {
				problems = append(problems, fmt.Sprintf("edge %v holds %v without its guard", m["id"], hp))
			}
		}
		for _, id := range ids {
			referrers[ref{account, id}]++
		}
	}
	for r, n := range referrers {
		it := byKey[store.ResourceKey(r.account, r.id)]
		if it == nil {
			problems = append(problems, fmt.Sprintf("%d edges reference %s, which does not exist", n, r.id))
			continue
		}
		if refs, _ := it["refs"].(float64); refs < float64(n) {
			problems = append(problems, fmt.Sprintf("%s is referenced by %d edges but counts %v references", r.id, n, it["refs"]))
		}
	}
	if edges == 0 {
		problems = append(problems, "no edge in the table to check")
	}
	if len(problems) > 0 {
		return fmt.Errorf("edge invariants violated:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

func newBackend(t testing.TB, a *testkit.Account) string {
	t.Helper()
	return a.Do(t, "POST", "/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "web"}}).Expect(t, http.StatusCreated)["id"].(string)
}

func newPolicy(t testing.TB, a *testkit.Account) string {
	t.Helper()
	return a.Do(t, "POST", "/ip_policies", map[string]any{"description": "office"}).Expect(t, http.StatusCreated)["id"].(string)
}

func newCA(t testing.TB, a *testkit.Account) string {
	t.Helper()
	caPEM := testkit.CertPEM(t, &x509.Certificate{Subject: pkix.Name{CommonName: "edge test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(1, 0, 0),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: true}, testkit.NewKey(t))
	return a.Do(t, "POST", "/certificate_authorities", map[string]any{"ca_pem": caPEM}).Expect(t, http.StatusCreated)["id"].(string)
}

const tcpPolicy = "on_tcp_connect:\n  - actions:\n      - type: restrict-ips\n        config:\n          allow:\n            - 203.0.113.0/24\n"

// raw returns the members of a JSON object response undecoded, to compare them byte for byte.
func raw(t testing.TB, res *testkit.Response) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(res.Body, &m); err != nil {
		t.Fatalf("%v: %s", err, res.Body)
	}
	return m
}

// refsOf reads the reference count of the resource id of a.
func refsOf(t testing.TB, s *testkit.Stack, a *testkit.Account, id string) int64 {
	t.Helper()
	var m store.Meta
	if err := s.DB.Get(context.Background(), store.ResourceKey(a.AccountID, id), &m); err != nil {
		if store.IsNotFound(err) {
			return -1
		}
		t.Fatal(err)
	}
	return m.Refs
}
