package store

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/platform/derrors"
)

// Attrs reads single attributes of a raw item without reflection, for items that requests read
// (the caller's token and account items; family items through their generated Decoder), where
// Unmarshal's reflection costs more than the rest of the request's own work. Each reader decodes
// as Unmarshal does into a field of its type: an absent or NULL attribute is the zero value; the
// attribute type that the field's type is written as is read directly, and any other is handed
// to attributevalue.Unmarshal (a number into a string, as Unmarshal takes it), whose error, if
// any, is kept for Err (the first one) while the reader returns the zero value.
//
//	a := store.Attrs{Item: it}
//	t := Thing{Name: a.String("name"), Count: a.Int("count")}
//	if err := a.Err(); err != nil { … }
type Attrs struct {
	Item Item
	err  error
}

// Err returns the first attribute that could not be read, if any. The readers keep it for
// later, naming the attribute; Err names the operation.
func (a *Attrs) Err() (err error) {
	defer derrors.Wrap(&err, "store.Attrs")
	return a.err
}

// other decodes v, the attribute name of a type its reader does not read directly, as a T with
// attributevalue.Unmarshal, keeping its error (the zero value then). A function of its own, so
// that only this path moves a reader's value to the heap.
func other[T any](a *Attrs, name string, v types.AttributeValue) T {
	var out T
	if err := attributevalue.Unmarshal(v, &out); err != nil {
		if a.err == nil {
			a.err = fmt.Errorf("attribute %s: %w", name, err)
		}
		var zero T
		return zero
	}
	return out
}

// Key returns the item's key attributes.
func (a *Attrs) Key() Key { return Key{PK: a.String(AttrPK), SK: a.String(AttrSK)} }

// String returns the string attribute name.
func (a *Attrs) String(name string) (s string) {
	switch v := a.Item[name].(type) {
	case nil, *types.AttributeValueMemberNULL:
	case *types.AttributeValueMemberS:
		s = v.Value
	default:
		s = other[string](a, name, v)
	}
	return s
}

// Int returns the number attribute name as an int64.
func (a *Attrs) Int(name string) (n int64) {
	switch v := a.Item[name].(type) {
	case nil, *types.AttributeValueMemberNULL:
	case *types.AttributeValueMemberN:
		var err error
		if n, err = strconv.ParseInt(v.Value, 10, 64); err != nil {
			n = other[int64](a, name, v) // Unmarshal's error
		}
	default:
		n = other[int64](a, name, v)
	}
	return n
}

// Bool returns the boolean attribute name.
func (a *Attrs) Bool(name string) (b bool) {
	switch v := a.Item[name].(type) {
	case nil, *types.AttributeValueMemberNULL:
	case *types.AttributeValueMemberBOOL:
		b = v.Value
	default:
		b = other[bool](a, name, v)
	}
	return b
}

// Strings returns the list of strings (or string set) attribute name.
func (a *Attrs) Strings(name string) (out []string) {
	switch v := a.Item[name].(type) {
	case nil, *types.AttributeValueMemberNULL:
	case *types.AttributeValueMemberL:
		out = make([]string, 0, len(v.Value))
		for _, e := range v.Value {
			s, ok := e.(*types.AttributeValueMemberS)
			if !ok {
				return other[[]string](a, name, v)
			}
			out = append(out, s.Value)
		}
	case *types.AttributeValueMemberSS:
		out = v.Value
	default:
		out = other[[]string](a, name, v)
	}
	return out
}

// Value decodes the attribute name, when present, into out (a pointer to a field) with
// attributevalue.Unmarshal: for the fields of a Decoder that the readers above do not read.
func (a *Attrs) Value(name string, out any) {
	v, ok := a.Item[name]
	if !ok {
		return
	}
	if err := attributevalue.Unmarshal(v, out); err != nil && a.err == nil {
		a.err = fmt.Errorf("attribute %s: %w", name, err)
	}
}

// Decoder is an item type that reads itself from a raw item with Attrs, without reflection
// over its type, as Unmarshal would into a zero value of it, returning Attrs.Err. Family
// items' decoders are generated from their types (shared/app/gen), and Decode uses them. Only
// a concrete item type implements it, never a part that other items embed, which would
// promote it to items with fields it does not read.
type Decoder interface{ DecodeAttrs(it Item) error }

// Decode is Unmarshal into out, a zero value, through its DecodeAttrs when it is a Decoder.
func Decode(it Item, out any) error {
	if d, ok := out.(Decoder); ok {
		return d.DecodeAttrs(it)
	}
	return Unmarshal(it, out)
}
