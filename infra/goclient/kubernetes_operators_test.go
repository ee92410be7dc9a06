package goclient_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ngrok/ngrok-api-go/v8"
	"github.com/ngrok/ngrok-api-go/v8/endpoints"
	"github.com/ngrok/ngrok-api-go/v8/kubernetes_operators"
)

// clientConfig is the official client's configuration for the deployment under test.
func clientConfig(t *testing.T) *ngrok.ClientConfig {
	base, key := os.Getenv("NGROK_API_BASE_URL"), os.Getenv("NGROK_API_KEY")
	if base == "" || key == "" {
		t.Skip("NGROK_API_BASE_URL and NGROK_API_KEY are unset: shared/platform/api's TestOfficialGoClient runs these tests against the local stack")
	}
	return ngrok.NewClientConfig(key, ngrok.WithBaseURL(base))
}

// csrPEM is a fresh PEM CSR of a P-256 key, as the Kubernetes operator sends.
func csrPEM(t *testing.T) string {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "ngrok-operator"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

// collect drains an iterator.
func collect[T any](ctx context.Context, t *testing.T, it ngrok.Iter[T]) []T {
	t.Helper()
	var out []T
	for it.Next(ctx) {
		out = append(out, it.Item())
	}
	if err := it.Err(); err != nil {
		t.Fatalf("iterating: %v", err)
	}
	return out
}

func str(s string) *string { return &s }

// The kubernetes_operators package works as the Kubernetes operator uses it: it registers with
// a CSR and gets a certificate for it, reads and lists itself, updates its deployment and
// binding, lists its bound endpoints, and deletes itself; a bad CSR is a 400 naming
// binding.csr.
func TestKubernetesOperators(t *testing.T) {
	cfg := clientConfig(t)
	ctx := t.Context()
	ops := kubernetes_operators.NewClient(cfg)

	created, err := ops.Create(ctx, &ngrok.KubernetesOperatorCreate{
		Description: "from the Go client", Metadata: `{"cluster":"ci"}`, EnabledFeatures: []string{"Ingress", "bindings"},
		Region:     "global",
		Deployment: ngrok.KubernetesOperatorDeployment{Name: "ngrok-operator", Namespace: "ngrok-operator", Version: "0.19.0", ClusterName: "ci"},
		Binding:    &ngrok.KubernetesOperatorBindingCreate{EndpointSelectors: []string{"true"}, CSR: csrPEM(t), IngressEndpoint: str("connect.example.com:443")},
	})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if !strings.HasPrefix(created.ID, "k8sop_") || !slices.Equal(created.EnabledFeatures, []string{"ingress", "bindings"}) ||
		created.Region != "global" || created.Deployment.ClusterName != "ci" || created.Principal.ID == "" {
		t.Errorf("created %#v", created)
	}
	b := created.Binding
	if b == nil || !slices.Equal(b.EndpointSelectors, []string{"true"}) || b.IngressEndpoint != "connect.example.com:443" {
		t.Fatalf("created binding %#v", b)
	}
	block, _ := pem.Decode([]byte(b.Cert.Cert))
	if block == nil {
		t.Fatalf("binding cert %q is not PEM", b.Cert.Cert)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil || cert.Subject.CommonName != created.ID || !slices.Contains(cert.ExtKeyUsage, x509.ExtKeyUsageClientAuth) {
		t.Fatalf("binding certificate %v: %v", cert, err)
	}
	if nb, _ := time.Parse(time.RFC3339, b.Cert.NotBefore); !nb.Equal(cert.NotBefore) {
		t.Errorf("not_before %s, the certificate's %s", b.Cert.NotBefore, cert.NotBefore)
	}
	if na, _ := time.Parse(time.RFC3339, b.Cert.NotAfter); !na.Equal(cert.NotAfter) {
		t.Errorf("not_after %s, the certificate's %s", b.Cert.NotAfter, cert.NotAfter)
	}

	got, err := ops.Get(ctx, created.ID)
	if err != nil || got.GoString() != created.GoString() || got.Binding.Cert.Cert != b.Cert.Cert {
		t.Fatalf("get: %v\n%s\nwant\n%s", err, got.GoString(), created.GoString())
	}
	second, err := ops.Create(ctx, &ngrok.KubernetesOperatorCreate{Description: "second"})
	if err != nil {
		t.Fatalf("create a second: %v", err)
	}
	var listed []string
	for _, op := range collect(ctx, t, ops.List(&ngrok.Paging{Limit: str("1")})) {
		listed = append(listed, op.ID)
	}
	if !slices.Contains(listed, created.ID) || !slices.Contains(listed, second.ID) {
		t.Errorf("list in pages of one: %v, want %s and %s", listed, created.ID, second.ID)
	}

	updated, err := ops.Update(ctx, &ngrok.KubernetesOperatorUpdate{ID: created.ID, Metadata: str(`{"cluster":"prod"}`),
		EnabledFeatures: []string{"bindings", "gateway"}, Region: str("eu"),
		Deployment: &ngrok.KubernetesOperatorDeploymentUpdate{Version: str("0.19.1")},
		Binding:    &ngrok.KubernetesOperatorBindingUpdate{EndpointSelectors: []string{`obj.url.startsWith("x")`, "true"}}})
	if err == nil {
		t.Fatal("an update with a selector outside the filter dialect succeeded")
	}
	updated, err = ops.Update(ctx, &ngrok.KubernetesOperatorUpdate{ID: created.ID, Metadata: str(`{"cluster":"prod"}`),
		EnabledFeatures: []string{"bindings", "gateway"}, Region: str("eu"),
		Deployment: &ngrok.KubernetesOperatorDeploymentUpdate{Version: str("0.19.1")},
		Binding:    &ngrok.KubernetesOperatorBindingUpdate{EndpointSelectors: []string{`obj.metadata == "bound"`}}})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if updated.Metadata != `{"cluster":"prod"}` || !slices.Equal(updated.EnabledFeatures, []string{"bindings", "gateway"}) ||
		updated.Region != "eu" || updated.Deployment.Version != "0.19.1" || updated.Deployment.Name != "ngrok-operator" ||
		updated.Binding.Cert.Cert != b.Cert.Cert || updated.Description != "from the Go client" {
		t.Errorf("updated %s", updated.GoString())
	}

	// Bound endpoints: the kubernetes endpoints its selector matches.
	eps := endpoints.NewClient(cfg)
	if n := len(collect(ctx, t, ops.GetBoundEndpoints(created.ID, nil))); n != 0 {
		t.Errorf("%d bound endpoints before any endpoint", n)
	}
	policy := "on_http_request:\n  - actions:\n      - type: deny\n"
	var made []string
	for i, md := range []string{"bound", "other"} {
		e, err := eps.Create(ctx, &ngrok.EndpointCreate{URL: fmt.Sprintf("https://svc%d-%d.goclient.example.com", i, time.Now().UnixNano()),
			Bindings: []string{"kubernetes"}, TrafficPolicy: policy, Metadata: str(md)})
		if err != nil {
			t.Fatalf("create an endpoint: %v", err)
		}
		made = append(made, e.ID)
		defer eps.Delete(ctx, e.ID)
	}
	bound := collect(ctx, t, ops.GetBoundEndpoints(created.ID, &ngrok.Paging{Limit: str("1")}))
	if len(bound) != 1 || bound[0].ID != made[0] || bound[0].Metadata != "bound" || !slices.Equal(bound[0].Bindings, []string{"kubernetes"}) {
		t.Errorf("bound endpoints %v, want %s", bound, made[0])
	}

	_, err = ops.Create(ctx, &ngrok.KubernetesOperatorCreate{Binding: &ngrok.KubernetesOperatorBindingCreate{CSR: "not a CSR"}})
	var apiErr *ngrok.Error
	if e, ok := err.(*ngrok.Error); ok {
		apiErr = e
	}
	if apiErr == nil || apiErr.StatusCode != 400 || apiErr.Details["field"] != "binding.csr" {
		t.Errorf("a bad CSR: %v, want a 400 naming binding.csr", err)
	}

	for _, id := range []string{created.ID, second.ID} {
		if err := ops.Delete(ctx, id); err != nil {
			t.Fatalf("delete %s: %v", id, err)
		}
	}
	if _, err := ops.Get(ctx, created.ID); !ngrok.IsNotFound(err) {
		t.Errorf("get after delete: %v, want not found", err)
	}
}
