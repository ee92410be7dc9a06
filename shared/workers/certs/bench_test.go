package certs_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/mholt/acmez/v3/acme"

	"tunnelapi/shared/testing/benchkit"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/certs"
)

// bareSolver publishes DNS-01 records in challtestsrv at _acme-challenge.<name>, as the worker
// does for delegated names, with nothing around it.
type bareSolver struct{ dns certs.ChallTestSrv }

func (s bareSolver) Present(ctx context.Context, ch acme.Challenge) error {
	return s.dns.SetTXT(ctx, ch.DNS01TXTRecordName(), ch.DNS01KeyAuthorization())
}

func (s bareSolver) CleanUp(ctx context.Context, ch acme.Challenge) error {
	return s.dns.ClearTXT(ctx, ch.DNS01TXTRecordName())
}

// BenchmarkCreateToIssued measures an agent ingress created with a policy until GET shows its
// certificate issued (the API's transaction, the stream reader, the queue, the worker's ACME
// order against the local pebble with no validation delay, the storing transaction, and the
// client's polling every 10 ms), against the bare ACME order for the same names by the same
// client and account, run alternately. It reports both p50s, the pipeline's p99 and the ratio.
// Each run is a real order with one challenge per region, so at most 30 of each are made
// whatever -benchtime says.
func BenchmarkCreateToIssued(b *testing.B) {
	h := newHarness(b, nil)
	ctx := context.Background()
	if _, err := h.w.Issuer.Account(ctx); err != nil {
		b.Fatal(err)
	}
	names := func(domain string) []string {
		body := map[string]any{"region_domains": []any{}}
		for _, r := range []string{"us", "eu", "ap", "au", "sa", "jp", "in"} {
			body["region_domains"] = append(body["region_domains"].([]any), "tunnel."+r+"."+domain)
		}
		return regionDomains(body)
	}
	pipeline := func() {
		created := h.a.Do(b, "POST", "/agent_ingresses", map[string]any{"domain": testkit.UniqueName("bench", "example.com"),
			"certificate_management_policy": map[string]any{"private_key_type": "ecdsa"}}).Expect(b, http.StatusCreated)
		id := created["id"].(string)
		for {
			body := h.a.Do(b, "GET", "/agent_ingresses/"+id, nil).Expect(b, http.StatusOK)
			if issued(body) {
				return
			}
			if j := job(body); j != nil && j["error_code"] != nil {
				b.Fatalf("job failed: %v", j)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	bare := func() {
		key, err := certs.NewKey("ecdsa")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := h.w.Issuer.Obtain(ctx, names(testkit.UniqueName("bare", "example.com")), key, bareSolver{h.chall}); err != nil {
			b.Fatal(err)
		}
	}
	n := min(b.N, 30)
	pipeline()
	bare()
	var got, base benchkit.Samples
	b.ResetTimer()
	for range n {
		got.Time(pipeline)
		base.Time(bare)
	}
	b.StopTimer()
	b.ReportMetric(float64(got.Quantile(0.5).Milliseconds()), "issued-p50-ms")
	b.ReportMetric(float64(got.Quantile(0.99).Milliseconds()), "issued-p99-ms")
	b.ReportMetric(float64(base.Quantile(0.5).Milliseconds()), "bare-order-p50-ms")
	b.ReportMetric(float64(got.Quantile(0.5))/float64(base.Quantile(0.5)), "p50-ratio")
}
