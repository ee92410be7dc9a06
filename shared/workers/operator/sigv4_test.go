package operator

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// A request signed by the SDK's signer with the verifier's credentials passes; any change to
// what was signed (method, path, query, a signed header, the body), another key, another
// region, or a time outside MaxSkew is refused.
func TestVerifierChecksTheSignature(t *testing.T) {
	creds := aws.Credentials{AccessKeyID: "AKIDOPERATOR", SecretAccessKey: "secret"}
	v := &Verifier{Credentials: creds, Region: "eu-west-1"}
	now := time.Now()
	signed := func(body string, c aws.Credentials, region string, at time.Time, change func(*http.Request)) (*http.Request, []byte) {
		r := httptest.NewRequest("POST", "http://api.test/operator/tenants/ac_1/suspend?x=1", bytes.NewReader([]byte(body)))
		r.Header.Set("Content-Type", "application/json")
		if err := Sign(t.Context(), r, []byte(body), c, region, at); err != nil {
			t.Fatal(err)
		}
		if change != nil {
			change(r)
		}
		return r, []byte(body)
	}
	if r, b := signed(`{}`, creds, "eu-west-1", now, nil); v.Verify(r, b) != nil {
		t.Fatalf("a good signature is refused: %v", v.Verify(r, b))
	}
	bad := map[string]func() (*http.Request, []byte){
		"method": func() (*http.Request, []byte) {
			return signed(`{}`, creds, "eu-west-1", now, func(r *http.Request) { r.Method = "DELETE" })
		},
		"path": func() (*http.Request, []byte) {
			return signed(`{}`, creds, "eu-west-1", now, func(r *http.Request) { r.URL.Path = "/operator/tenants/ac_2/suspend" })
		},
		"query": func() (*http.Request, []byte) {
			return signed(`{}`, creds, "eu-west-1", now, func(r *http.Request) { r.URL.RawQuery = "x=2" })
		},
		"header": func() (*http.Request, []byte) {
			return signed(`{}`, creds, "eu-west-1", now, func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") })
		},
		"body": func() (*http.Request, []byte) {
			r, _ := signed(`{}`, creds, "eu-west-1", now, nil)
			return r, []byte(`{"a":1}`)
		},
		"secret": func() (*http.Request, []byte) {
			return signed(`{}`, aws.Credentials{AccessKeyID: "AKIDOPERATOR", SecretAccessKey: "guess"}, "eu-west-1", now, nil)
		},
		"key": func() (*http.Request, []byte) {
			return signed(`{}`, aws.Credentials{AccessKeyID: "AKIDOTHER", SecretAccessKey: "secret"}, "eu-west-1", now, nil)
		},
		"region": func() (*http.Request, []byte) { return signed(`{}`, creds, "us-east-1", now, nil) },
		"stale": func() (*http.Request, []byte) {
			return signed(`{}`, creds, "eu-west-1", now.Add(-MaxSkew-time.Minute), nil)
		},
		"unsigned": func() (*http.Request, []byte) {
			return signed(`{}`, creds, "eu-west-1", now, func(r *http.Request) { r.Header.Del("Authorization") })
		},
		"bearer token": func() (*http.Request, []byte) {
			return signed(`{}`, creds, "eu-west-1", now, func(r *http.Request) { r.Header.Set("Authorization", "Bearer x") })
		},
	}
	for name, make := range bad {
		if r, b := make(); v.Verify(r, b) == nil {
			t.Errorf("a request with another %s is admitted", name)
		}
	}
}
