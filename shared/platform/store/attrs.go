package store

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/platform/derrors"
)

// Attrs reads single attributes of a raw item without reflection, for the few items every
// request reads (the caller's token and account items), where Unmarshal's reflection costs more
// than the rest of the request's own work. Each reader decodes as Unmarshal does into a field of
// its type: an absent or NULL attribute is the zero value; an attribute of another type is an
// error, kept for Err (the first one), and reads as the zero value.
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

func (a *Attrs) fail(name string, v types.AttributeValue, want string) {
	if a.err == nil {
		a.err = fmt.Errorf("attribute %s is a %T, not %s", name, v, want)
	}
}

// member returns the attribute name as the member type M; ok is false when it is absent, NULL
// or of another type (an error, kept for Err).
func member[M types.AttributeValue](a *Attrs, name, want string) (m M, ok bool) {
	switch v := a.Item[name].(type) {
	case nil, *types.AttributeValueMemberNULL:
	case M:
		return v, true
	default:
		a.fail(name, v, want)
	}
	return m, false
}

// Key returns the item's key attributes.
func (a *Attrs) Key() Key { return Key{PK: a.String(AttrPK), SK: a.String(AttrSK)} }

// String returns the string attribute name.
func (a *Attrs) String(name string) string {
	if v, ok := member[*types.AttributeValueMemberS](a, name, "a string"); ok {
		return v.Value
	}
	return ""
}

// Int returns the number attribute name as an int64.
func (a *Attrs) Int(name string) int64 {
	v, ok := member[*types.AttributeValueMemberN](a, name, "a number")
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil && a.err == nil {
		a.err = fmt.Errorf("attribute %s: %w", name, err)
	}
	return n
}

// Bool returns the boolean attribute name.
func (a *Attrs) Bool(name string) bool {
	v, ok := member[*types.AttributeValueMemberBOOL](a, name, "a boolean")
	return ok && v.Value
}

// Strings returns the string set (or list of strings) attribute name.
func (a *Attrs) Strings(name string) []string {
	if l, ok := a.Item[name].(*types.AttributeValueMemberL); ok {
		out := make([]string, 0, len(l.Value))
		for _, e := range l.Value {
			s, ok := e.(*types.AttributeValueMemberS)
			if !ok {
				a.fail(name, e, "a list of strings")
				return nil
			}
			out = append(out, s.Value)
		}
		return out
	}
	if v, ok := member[*types.AttributeValueMemberSS](a, name, "a set of strings"); ok {
		return v.Value
	}
	return nil
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
// over its type, as Unmarshal would into a zero value of it. Family items' decoders are
// generated from their types (shared/app/gen), and Decode uses them. Only a concrete item
// type implements it, never a part that other items embed, which would promote it to items
// with fields it does not read.
type Decoder interface{ DecodeAttrs(a *Attrs) }

// Decode is Unmarshal into out, a zero value, through its DecodeAttrs when it is a Decoder.
func Decode(it Item, out any) error {
	d, ok := out.(Decoder)
	if !ok {
		return Unmarshal(it, out)
	}
	a := Attrs{Item: it}
	d.DecodeAttrs(&a)
	return a.Err()
}
