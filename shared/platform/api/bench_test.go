package api

import (
	"encoding/json"
	"strings"
	"testing"
)

// BenchmarkDecode compares the strict decoding of a typical create body (and of the same body
// repeating the path's id, which is removed before decoding) with encoding/json's lax Decoder,
// the bare operation of the same shape.
func BenchmarkDecode(b *testing.B) {
	const in = `{"description":"deploy key for ci","acl":["bind:*.example.com","bind:app=web"],"active":true,` +
		`"labels":{"app":"web","dc":"eu-west"},"target":{"kinesis":{"stream_arn":"arn:aws:kinesis:us-east-1:123456789012:stream/x"}}}`
	withID := `{"id":"ak_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc",` + strings.TrimPrefix(in, "{")
	path := map[string]string{"id": "ak_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc"}
	b.Run("encoding-json-v1", func(b *testing.B) {
		for b.Loop() {
			var v body
			dec := json.NewDecoder(strings.NewReader(in))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("strict", func(b *testing.B) {
		for b.Loop() {
			var v body
			if err := decode([]byte(in), path, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("strict-with-path-id", func(b *testing.B) {
		for b.Loop() {
			var v body
			if err := decode([]byte(withID), path, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
