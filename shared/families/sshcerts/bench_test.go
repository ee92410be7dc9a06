package sshcerts_test

import (
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"golang.org/x/crypto/ssh"

	"tunnelapi/shared/families/sshcerts"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
)

// percentile returns the p-th percentile (nearest rank) of d.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(p/100*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkUserCertificateIssuance measures POST /ssh_user_certificates through the HTTP
// server against its floor, interleaved in one run: one consistent GetItem of the CA and the
// bare signing with an already opened key. ratio is issue-p50 / floor-p50; everything above 1
// is overhead this service owns (caller check, the transaction with its audit event, HTTP and
// JSON). ratio-to-txfloor compares with the signing plus one bare transaction of the same shape:
// what is left there is HTTP, JSON and the service's own code. "cold" issues each certificate
// with a CA this process has not signed with yet (the CA read and key unwrap included).
func BenchmarkUserCertificateIssuance(b *testing.B) {
	cases := []struct {
		name string
		ca   map[string]any
		cold bool
	}{
		{"ca=ed25519", map[string]any{}, false},
		{"ca=ecdsa-p256", map[string]any{"private_key_type": "ecdsa"}, false},
		{"ca=rsa-2048", map[string]any{"private_key_type": "rsa", "key_size": 2048}, false},
		{"ca=ed25519,cold", map[string]any{}, true},
	}
	type authority struct {
		id     string
		key    store.Key
		signer ssh.Signer
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ctx := b.Context()
			s, a := suite.AppAccount(b)
			n := 1
			if c.cold {
				n = b.N + 1
			}
			cas := make([]authority, n)
			for i := range cas {
				id := newCA(b, s, a, c.ca)["id"].(string)
				cas[i] = authority{id: id, key: store.ResourceKey(a.AccountID, id)}
				var it sshcerts.AuthorityItem
				if err := s.DB.Get(ctx, cas[i].key, &it); err != nil {
					b.Fatal(err)
				}
				signer, err := it.Signer(ctx, s.Deps.Kit.Seal)
				if err != nil {
					b.Fatal(err)
				}
				cas[i].signer = signer
			}
			key := goKey(b)
			pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(key))
			if err != nil {
				b.Fatal(err)
			}
			body := func(ca authority) map[string]any {
				return map[string]any{"ssh_certificate_authority_id": ca.id, "public_key": key, "principals": []string{"deploy"}}
			}
			// Warms the token hint (and, when not cold, the CA's key).
			a.Do(b, "POST", pathUserCerts, body(cas[n-1])).Expect(b, http.StatusCreated)
			issue := make([]time.Duration, 0, b.N)
			floor := make([]time.Duration, 0, b.N)
			txFloor := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ca := cas[0]
				if c.cold {
					ca = cas[i]
				}
				t0 := time.Now()
				res := a.Do(b, "POST", pathUserCerts, body(ca))
				issue = append(issue, time.Since(t0))
				if res.Status != http.StatusCreated {
					b.Fatalf("issue: %d %s", res.Status, res.Body)
				}

				t0 = time.Now()
				var got sshcerts.AuthorityItem
				if err := s.DB.Get(ctx, ca.key, &got); err != nil {
					b.Fatal(err)
				}
				cert := &sshcerts.CertificateItem{Principals: []string{"deploy"}, Extensions: sshcerts.DefaultExtensions(),
					ValidAfter: time.Now().Unix(), ValidUntil: time.Now().Add(24 * time.Hour).Unix()}
				cert.ID = ids.New(ids.SSHUserCertificate)
				if _, err := sshcerts.NewCertificate(ca.signer, pub, ssh.UserCert, cert); err != nil {
					b.Fatal(err)
				}
				floor = append(floor, time.Since(t0))

				// The least any durable issuance costs here: the signing plus one transaction
				// of the same shape as the real one (certificate, CA count, caller guards and
				// the audit event's two items), with no HTTP, JSON or auth logic.
				t0 = time.Now()
				if _, err := sshcerts.NewCertificate(ca.signer, pub, ssh.UserCert, cert); err != nil {
					b.Fatal(err)
				}
				if err := s.DB.Commit(ctx, shapedTx(a, ca.key, cert)); err != nil {
					b.Fatal(err)
				}
				txFloor = append(txFloor, time.Since(t0))
			}
			b.StopTimer()
			p50i, p50f, p50t := percentile(issue, 50), percentile(floor, 50), percentile(txFloor, 50)
			b.ReportMetric(ms(p50i), "issue-p50-ms")
			b.ReportMetric(ms(percentile(issue, 99)), "issue-p99-ms")
			b.ReportMetric(ms(p50f), "floor-p50-ms")
			b.ReportMetric(float64(p50i)/float64(p50f), "ratio")
			b.ReportMetric(ms(p50t), "txfloor-p50-ms")
			b.ReportMetric(float64(p50i)/float64(p50t), "ratio-to-txfloor")
		})
	}
}

// rsa4096Samples is how many RSA 4096 CAs the creation benchmark makes at least: enough for a
// p99 to mean something, whatever b.N the framework starts with.
const rsa4096Samples = 30

// BenchmarkAuthorityCreateRSA4096 measures POST /ssh_certificate_authorities of an RSA 4096
// CA end to end; key generation dominates and varies a lot, so it reports p50 and p99.
func BenchmarkAuthorityCreateRSA4096(b *testing.B) {
	_, a := suite.AppAccount(b)
	a.Do(b, "GET", pathCAs+"?limit=1", nil).Expect(b, http.StatusOK) // warms the token hint
	n := max(b.N, rsa4096Samples)
	d := make([]time.Duration, 0, n)
	b.ResetTimer()
	for i := 0; i < n; i++ {
		t0 := time.Now()
		res := a.Do(b, "POST", pathCAs, map[string]any{"private_key_type": "rsa", "key_size": 4096})
		d = append(d, time.Since(t0))
		if res.Status != http.StatusCreated {
			b.Fatalf("create: %d %s", res.Status, res.Body)
		}
	}
	b.StopTimer()
	b.ReportMetric(ms(percentile(d, 50)), "p50-ms")
	b.ReportMetric(ms(percentile(d, 99)), "p99-ms")
	b.ReportMetric(float64(n), "samples")
	b.ReportMetric(0, "ns/op") // one b.N iteration may hold many samples; the percentiles are the result
}

// shapedTx is a transaction shaped like an issuance: a new item, the CA's count, the caller's
// token and account checks, and an outbox and an audit-log item.
func shapedTx(a *testkit.Account, caKey store.Key, cert *sshcerts.CertificateItem) *store.Tx {
	type item struct {
		store.Key
		Payload string `dynamodbav:"payload"`
	}
	ev := ids.New(ids.Event)
	tx := &store.Tx{}
	tx.Put("item", item{store.ResourceKey(a.AccountID, ids.New(ids.SSHUserCertificate)), cert.ID}, store.Absent())
	tx.Update("ca", caKey, expression.Add(expression.Name(sshcerts.AttrCertificates), expression.Value(0)), store.Exists())
	tx.Check("token", store.TokenKey(store.TokenHash(a.Token)), store.Exists())
	tx.Check("account", store.AccountKey(a.AccountID), store.Exists())
	tx.Put("outbox", item{store.OutboxKey(ev), cert.ID})
	tx.Put("log", item{store.EventLogKey(a.AccountID, ev), cert.ID})
	return tx
}
