package operator

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"tunnelapi/shared/platform/api"
)

// Service is the SigV4 service operator requests are signed for: API Gateway's.
const Service = "execute-api"

// MaxSkew bounds how far a request's signing time may be from the verifier's clock, as AWS
// bounds it.
const MaxSkew = 5 * time.Minute

// amzDate is the layout of the X-Amz-Date header.
const amzDate = "20060102T150405Z"

// ErrNotSigned is the 403 for an operator request not signed by the operator's credentials: no
// signature, a tenant's bearer token, another key, a stale or a wrong signature.
var ErrNotSigned = api.Forbidden(api.CodeUnknownKey,
	"operator routes take only requests signed (AWS Signature Version 4) with the operator's AWS credentials")

// Sign signs r, whose payload is body, with creds for region at the given time, as API
// Gateway's IAM authorization checks it.
func Sign(ctx context.Context, r *http.Request, body []byte, creds aws.Credentials, region string, at time.Time) error {
	sum := sha256.Sum256(body)
	return v4.NewSigner().SignHTTP(ctx, creds, r, hex.EncodeToString(sum[:]), Service, region, at)
}

// Verifier checks SigV4 signatures against one set of credentials: the local server's stand-in
// for API Gateway's IAM authorization (in AWS, the operator's IAM policy decides instead).
type Verifier struct {
	Credentials aws.Credentials
	Region      string
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Verify reports whether r, whose payload is body, is signed by v's credentials: it signs the
// same canonical request again (the headers the request names as signed, its time) and compares
// the two signatures.
func (v *Verifier) Verify(r *http.Request, body []byte) error {
	h := r.Header.Get("Authorization")
	scheme, rest, _ := strings.Cut(h, " ")
	if scheme != "AWS4-HMAC-SHA256" || len(r.Header.Values("Authorization")) != 1 {
		return ErrNotSigned
	}
	fields := map[string]string{}
	for _, f := range strings.Split(rest, ",") {
		k, val, _ := strings.Cut(strings.TrimSpace(f), "=")
		fields[k] = val
	}
	scope := strings.Split(fields["Credential"], "/")
	if len(scope) != 5 || scope[0] != v.Credentials.AccessKeyID || scope[2] != v.Region || scope[3] != Service {
		return ErrNotSigned
	}
	at, err := time.Parse(amzDate, r.Header.Get("X-Amz-Date"))
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	if err != nil || at.Sub(now()).Abs() > MaxSkew {
		return ErrNotSigned
	}
	signed := strings.Split(fields["SignedHeaders"], ";")
	if !slices.Contains(signed, "host") || !slices.Contains(signed, "x-amz-date") {
		return ErrNotSigned
	}
	u := *r.URL
	u.Scheme, u.Host = "http", r.Host
	again, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), nil)
	if err != nil {
		return ErrNotSigned
	}
	again.Host = r.Host
	for _, name := range signed {
		switch name {
		case "host":
		case "content-length":
			again.ContentLength = r.ContentLength
		default:
			again.Header[http.CanonicalHeaderKey(name)] = r.Header.Values(name)
		}
	}
	sum := sha256.Sum256(body)
	payload := hex.EncodeToString(sum[:])
	if got := r.Header.Get("X-Amz-Content-Sha256"); got != "" && got != payload {
		return ErrNotSigned
	}
	if err := v4.NewSigner().SignHTTP(r.Context(), v.Credentials, again, payload, Service, v.Region, at); err != nil {
		return ErrNotSigned
	}
	if subtle.ConstantTimeCompare([]byte(again.Header.Get("Authorization")), []byte(h)) != 1 {
		return ErrNotSigned
	}
	return nil
}
