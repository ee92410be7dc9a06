package resource

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/go-json-experiment/json/jsontext"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/metrics"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/platform/store"
)

// IdempotencyHeader names the request header that makes a create safe to retry: a POST
// repeating an earlier one's key (within IdempotencyWindow, sent with the same API key) gets the
// earlier response instead of creating a second resource.
//
// The platform has no such header; this service adds one. The key is 1–255 visible ASCII
// characters without a comma (a UUID is a good key). A repeat answers with the first response,
// status and body byte for byte (a token shown once included), marked ReplayedHeader; retries
// sent at the same time get the same. The key is bound to the request: method, path and the body
// as canonical JSON (member order and spacing do not matter); the same key with another request
// is a 422 ERR_NGROK_215 naming Idempotency-Key, the status the IETF's Idempotency-Key draft
// gives a reused key. A key belongs to the API key that sent it: the same key sent by another
// API key (of another principal or of the same one) is another request, so a response, and the
// token it may show once, is replayed only to the caller that made it. Only a create that
// succeeded is kept, in its own transaction, so
// a key costs no extra round trip; a kept response that shows a token is sealed like every
// secret.
const IdempotencyHeader = "Idempotency-Key"

// ReplayedHeader is set ("true") on a response replayed for a repeated idempotency key, so a
// client (and a test counting commits) can tell it from the create that committed.
const ReplayedHeader = "Idempotent-Replayed"

// DefaultIdempotencyWindow is how long a create's response is kept for replay.
const DefaultIdempotencyWindow = 24 * time.Hour

// MaxIdempotencyKeyBytes bounds the header's value.
const MaxIdempotencyKeyBytes = 255

// labelIdempotency labels the write of a create's idempotency record.
const labelIdempotency = "idempotency"

// idempotencyRecord is a create's response kept for replay under its key. It is written in the
// create's own transaction, on the condition that no live record holds the key, so at most one
// create per key ever commits. A response carrying a secret shown once is sealed.
type idempotencyRecord struct {
	store.Key
	// Request is the hash of the request the key was first used with (method, path, body).
	Request    string       `dynamodbav:"req"`
	ResourceID string       `dynamodbav:"rid"`
	Body       string       `dynamodbav:"body,omitempty"`
	Sealed     *seal.Sealed `dynamodbav:"sealed,omitempty"`
	// Expires is when the key becomes free again; DynamoDB's TTL removes the item some time
	// later, so every reader and the write condition check it themselves.
	Expires int64 `dynamodbav:"ttl"`
}

// idempotentCreate is a create request that carries an idempotency key. Its record is written
// in the create's transaction, conditioned on no live record holding the key: the normal path
// costs no extra round trip. A create that fails for any reason (its record's condition, a
// conflict, a hook's refusal of what the first create made) then reads the record and, when it
// exists, answers with the stored response instead.
type idempotentCreate struct {
	key     store.Key
	request string
	// aad binds a sealed response to the account, API key and idempotency key it was stored
	// under.
	aad map[string]string
}

// idempotency returns the idempotency key of r (nil when it has none), or a 400 naming the
// header when its value is not 1 to MaxIdempotencyKeyBytes visible ASCII characters other than
// a comma (API Gateway joins repeated headers with commas, so a comma would be ambiguous).
func idempotency(r *api.Request, c *api.Caller) (*idempotentCreate, error) {
	vals := r.HTTP.Header.Values(IdempotencyHeader)
	if len(vals) == 0 {
		return nil, nil
	}
	if len(vals) > 1 {
		return nil, api.Invalid(IdempotencyHeader, "send one %s header, not %d", IdempotencyHeader, len(vals))
	}
	v := vals[0]
	if v == "" || len(v) > MaxIdempotencyKeyBytes {
		return nil, api.Invalid(IdempotencyHeader, "%s must be 1 to %d characters, not %d", IdempotencyHeader, MaxIdempotencyKeyBytes, len(v))
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x21 || c > 0x7e || c == ',' {
			return nil, api.Invalid(IdempotencyHeader, "%s may hold only visible ASCII characters other than a comma", IdempotencyHeader)
		}
	}
	// The key is bound to the request's meaning: its method, path and body in canonical JSON
	// (RFC 8785), so a retry that orders members or spaces differently is still the same
	// request. A body that is not JSON is hashed as sent (its create fails anyway).
	body := jsontext.Value(bytes.Clone(r.Body))
	if body.Canonicalize() != nil {
		body = r.Body
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s %s\n", r.HTTP.Method, r.HTTP.URL.Path)
	h.Write(body)
	k := store.IdempotencyKey(c.AccountID, c.CredentialID, store.TokenHash(v))
	return &idempotentCreate{key: k, request: hex.EncodeToString(h.Sum(nil)),
		aad: map[string]string{"account": c.AccountID, "idempotency": k.PK + "/" + k.SK}}, nil
}

// idempotencyWindow is the kit's window, by default DefaultIdempotencyWindow.
func (k *Kit) idempotencyWindow() time.Duration {
	if k.IdempotencyWindow > 0 {
		return k.IdempotencyWindow
	}
	return DefaultIdempotencyWindow
}

// record adds to m the record of a create answering with body, on the condition that no live
// record holds the key. secret says the body holds a secret shown once: it is stored sealed.
func (ic *idempotentCreate) record(ctx context.Context, k *Kit, m *Mutation, id string, body []byte, secret bool, now time.Time) error {
	// Whole seconds, rounded up: the key is never free before the window has passed.
	expires := now.Add(k.idempotencyWindow() + time.Second - time.Nanosecond).Unix()
	rec := idempotencyRecord{Key: ic.key, Request: ic.request, ResourceID: id, Expires: expires}
	if secret {
		s, err := k.Seal.Seal(ctx, body, ic.aad)
		if err != nil {
			return fmt.Errorf("seal the idempotent response: %w", err)
		}
		rec.Sealed = &s
	} else {
		rec.Body = string(body)
	}
	m.Put(labelIdempotency, rec, expression.Or(store.Absent(),
		expression.Name(store.AttrTTL).LessThanEqual(expression.Value(now.Unix()))))
	return nil
}

// errKeyReused is the 422 for an idempotency key sent again with another request.
var errKeyReused = &api.Error{Status: http.StatusUnprocessableEntity, Code: api.CodeBadFieldValue, Field: IdempotencyHeader,
	Msg: IdempotencyHeader + " was already used with a different request; use a new key for a new request"}

// replay looks up the create that committed with r's key: found with its response when the
// request is the same, errKeyReused when it differs, neither when no live record holds the key.
func (ic *idempotentCreate) replay(ctx context.Context, k *Kit, r *api.Request) (_ json.RawMessage, found bool, err error) {
	items, err := k.Read(ctx, r, ic.key)
	if err != nil {
		return nil, false, err
	}
	var rec idempotencyRecord
	if items[0] == nil {
		return nil, false, nil
	}
	if err := store.Unmarshal(items[0], &rec); err != nil {
		return nil, false, err
	}
	if rec.Expires <= time.Now().Unix() {
		return nil, false, nil
	}
	if rec.Request != ic.request {
		return nil, false, errKeyReused
	}
	body := []byte(rec.Body)
	if rec.Sealed != nil {
		if body, err = k.Seal.Open(ctx, *rec.Sealed, ic.aad); err != nil {
			return nil, false, fmt.Errorf("open the idempotent response: %w", err)
		}
	}
	if h := r.Header(); h != nil {
		h.Set(ReplayedHeader, "true")
	}
	k.Metrics.Emit(metrics.IdempotentReplay, nil, 1)
	return json.RawMessage(body), true, nil
}
