package httpmodules

import (
	"testing"

	"tunnelapi/shared/platform/api"
)

// Any body given to any module is accepted or refused with a 400; nothing panics.
func FuzzModuleBodies(f *testing.F) {
	for _, s := range []string{`{}`, `{"add":{"a":"b"},"remove":["c"]}`, `{"provider":"github","secret":"x"}`,
		`{"provider":{"github":{"client_id":"a","client_secret":"b","teams":["a/b"]}}}`,
		`{"issuer":"https://x","client_id":"a","client_secret":"b"}`, `{"idp_metadata":"<EntityDescriptor/>"}`,
		`{"allow":["a+"],"deny":["(b"]}`, `{"num_buckets":3,"error_threshold_percentage":0.2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checks := []func() error{
			func() error {
				return fuzzCheck(body, func(in HeadersIn) error { _, err := in.Check("m", true); return err })
			},
			func() error {
				return fuzzCheck(body, func(in CircuitBreakerIn) error { _, err := in.Check("m"); return err })
			},
			func() error {
				return fuzzCheck(body, func(in WebhookVerificationIn) error { _, err := in.Check("m"); return err })
			},
			func() error { return fuzzCheck(body, func(in OAuthIn) error { _, err := in.Check("m"); return err }) },
			func() error { return fuzzCheck(body, func(in OIDCIn) error { _, err := in.Check("m"); return err }) },
			func() error { return fuzzCheck(body, func(in SAMLIn) error { _, err := in.Check("m"); return err }) },
			func() error {
				return fuzzCheck(body, func(in UserAgentFilterIn) error { _, err := in.Check("m"); return err })
			},
		}
		for _, c := range checks {
			if err := c(); err != nil {
				if e, ok := api.AsError(err); !ok || e.Status != 400 {
					t.Fatalf("%s: %v", body, err)
				}
			}
		}
	})
}

func fuzzCheck[T any](body []byte, check func(T) error) error {
	var in T
	if err := api.DecodeBytes(body, &in); err != nil {
		return err
	}
	return check(in)
}
