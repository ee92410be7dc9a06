// Package standin runs local HTTP servers that stand in for the event sinks (Kinesis, Firehose,
// CloudWatch Logs, STS, Datadog's log intake, Azure's token and Logs Ingestion endpoints) and
// for Route 53 (the certificate worker's DNS provider in AWS) in tests and benchmarks. Each checks what the real service checks before accepting a request:
// the operation and content type, the request shape and limits, and authentication (a SigV4
// signature verified against the issued secret, an API key, a bearer token), and records what
// it accepted.
package standin

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Credentials is the set of AWS keys the AWS stand-ins accept: long-term keys registered by the
// test, and the temporary ones the STS stand-in issues.
type Credentials struct {
	mu   sync.Mutex
	keys map[string]awsKey
}

type awsKey struct {
	secret, token string
	expires       time.Time
}

// Add accepts an access key with its secret (and session token, "" for a long-term key).
func (c *Credentials) Add(akid, secret, token string, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys == nil {
		c.keys = map[string]awsKey{}
	}
	c.keys[akid] = awsKey{secret, token, expires}
}

func (c *Credentials) get(akid string) (awsKey, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.keys[akid]
	return k, ok
}

// SigV4 is a verified signature: who signed, and for which region and service.
type SigV4 struct {
	AccessKeyID, Region, Service string
}

// Verify checks r's AWS Signature Version 4 as AWS does: the Authorization header's form, the
// credential scope (service), the request time (within 15 minutes), the session token of
// temporary keys, and the signature itself recomputed over the signed headers and body.
func (c *Credentials) Verify(r *http.Request, body []byte, service string) (SigV4, error) {
	authz := r.Header.Get("Authorization")
	const algo = "AWS4-HMAC-SHA256 "
	if !strings.HasPrefix(authz, algo) {
		return SigV4{}, errors.New("missing AWS4-HMAC-SHA256 Authorization header")
	}
	parts := map[string]string{}
	for _, p := range strings.Split(strings.TrimPrefix(authz, algo), ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		parts[k] = v
	}
	scope := strings.Split(parts["Credential"], "/")
	if len(scope) != 5 || scope[4] != "aws4_request" || parts["SignedHeaders"] == "" || parts["Signature"] == "" {
		return SigV4{}, fmt.Errorf("malformed Authorization header %q", authz)
	}
	sig := SigV4{AccessKeyID: scope[0], Region: scope[2], Service: scope[3]}
	if sig.Service != service {
		return sig, fmt.Errorf("credential scope is for %s, not %s", sig.Service, service)
	}
	amzDate := r.Header.Get("X-Amz-Date")
	t, err := time.Parse("20060102T150405Z", amzDate)
	if err != nil || scope[1] != amzDate[:8] {
		return sig, fmt.Errorf("bad X-Amz-Date %q", amzDate)
	}
	if d := time.Since(t); d > 15*time.Minute || d < -15*time.Minute {
		return sig, errors.New("request time too skewed")
	}
	key, ok := c.get(sig.AccessKeyID)
	if !ok {
		return sig, fmt.Errorf("unknown access key %s", sig.AccessKeyID)
	}
	if !key.expires.IsZero() && time.Now().After(key.expires) {
		return sig, errors.New("the security token included in the request is expired")
	}
	if r.Header.Get("X-Amz-Security-Token") != key.token {
		return sig, errors.New("missing or wrong X-Amz-Security-Token")
	}
	signed := strings.Split(parts["SignedHeaders"], ";")
	if !sort.StringsAreSorted(signed) || !contains(signed, "host") || !contains(signed, "x-amz-date") {
		return sig, errors.New("SignedHeaders must be sorted and include host and x-amz-date")
	}
	var canon strings.Builder
	canon.WriteString(r.Method + "\n")
	path := r.URL.EscapedPath()
	if path == "" {
		path = "/"
	}
	canon.WriteString(path + "\n")
	canon.WriteString(canonicalQuery(r.URL.Query()) + "\n")
	for _, h := range signed {
		var v string
		switch h {
		case "host":
			v = r.Host
		case "content-length":
			v = strconv.FormatInt(r.ContentLength, 10)
		default:
			v = strings.Join(r.Header.Values(h), ",")
		}
		canon.WriteString(h + ":" + strings.Join(strings.Fields(v), " ") + "\n")
	}
	canon.WriteString("\n" + parts["SignedHeaders"] + "\n")
	sum := sha256.Sum256(body)
	payload := hex.EncodeToString(sum[:])
	if h := r.Header.Get("X-Amz-Content-Sha256"); h != "" && h != payload {
		return sig, errors.New("X-Amz-Content-Sha256 does not match the body")
	}
	canon.WriteString(payload)
	creq := sha256.Sum256([]byte(canon.String()))
	sts := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + strings.Join(scope[1:], "/") + "\n" + hex.EncodeToString(creq[:])
	k := hmacSHA256([]byte("AWS4"+key.secret), scope[1])
	k = hmacSHA256(k, scope[2])
	k = hmacSHA256(k, scope[3])
	k = hmacSHA256(k, "aws4_request")
	want := hex.EncodeToString(hmacSHA256(k, sts))
	if !hmac.Equal([]byte(want), []byte(parts["Signature"])) {
		return sig, errors.New("the request signature does not match")
	}
	return sig, nil
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

func canonicalQuery(q url.Values) string {
	var pairs []string
	for k, vs := range q {
		for _, v := range vs {
			pairs = append(pairs, awsEscape(k)+"="+awsEscape(v))
		}
	}
	sort.Strings(pairs)
	return strings.Join(pairs, "&")
}

func awsEscape(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}
