package api

import (
	"bytes"
	"encoding/json"
	"fmt"

	"tunnelapi/shared/platform/derrors"
)

// marshalWithKey writes {"key": items, …rest's fields}.
func marshalWithKey(key string, items any, rest any) (_ []byte, err error) {
	defer derrors.Wrap(&err, "api.marshalWithKey(%s)", key)
	ib, err := json.Marshal(items)
	if err != nil {
		return nil, fmt.Errorf("marshal the items: %w", err)
	}
	if bytes.Equal(ib, []byte("null")) {
		ib = []byte("[]")
	}
	rb, err := json.Marshal(rest)
	if err != nil {
		return nil, fmt.Errorf("marshal the other members: %w", err)
	}
	kb, _ := json.Marshal(key)
	var b bytes.Buffer
	b.WriteByte('{')
	b.Write(kb)
	b.WriteByte(':')
	b.Write(ib)
	if len(rb) > 2 {
		b.WriteByte(',')
		b.Write(rb[1:])
	} else {
		b.WriteByte('}')
	}
	return b.Bytes(), nil
}

// Ref is the response form of a reference to another resource.
type Ref struct {
	ID  string `json:"id"`
	URI string `json:"uri"`
}

// Timestamp formats t as the wire wants it: RFC 3339, UTC, whole seconds.
func Timestamp(unix int64) string {
	return timeFromUnix(unix).Format("2006-01-02T15:04:05Z")
}

// Map returns m, or an empty map when m is nil: the wire renders a map member with no entries
// as {}, never null.
func Map[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}

// Slice returns s, or an empty slice when s is nil: the wire renders a list member with no
// elements as [], never null.
func Slice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// MarshalUnescaped encodes v as JSON without escaping <, > and & (json.Marshal writes each as
// a six-byte \u escape, which triples the size of an HTML page). For JSON that is stored or
// queued, never embedded in HTML.
func MarshalUnescaped(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
