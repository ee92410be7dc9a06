package api

import (
	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Nullable is a request member that tells absent from null: Set reports that the body had the
// member, Value is nil when it was null. PATCH bodies use it where null means "remove" (a
// nullable object such as a certificate management policy), which a plain pointer cannot tell
// from "not supplied".
type Nullable[T any] struct {
	Set   bool
	Value *T
}

// Supplied reports whether the body had the member, null or not.
func (n Nullable[T]) Supplied() bool { return n.Set }

// Null reports whether the member was supplied as null.
func (n Nullable[T]) Null() bool { return n.Set && n.Value == nil }

// UnmarshalJSONFrom decodes the member with the decoder's options (strictness, unknown members
// refused), so errors inside the value name their member as any other's do.
func (n *Nullable[T]) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	n.Set, n.Value = true, nil
	if dec.PeekKind() == 'n' {
		_, err := dec.ReadToken()
		return err
	}
	var v T
	if err := json.UnmarshalDecode(dec, &v); err != nil {
		return err
	}
	n.Value = &v
	return nil
}
