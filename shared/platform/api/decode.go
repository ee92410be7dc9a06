package api

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"tunnelapi/shared/platform/derrors"
)

// Decode reads the request body into dst strictly, each refusal naming the member at fault as
// a path ("target.firehose.delivery_stream_arn", "sources[0].type", "labels[\"a b\"]"). An
// empty body decodes as {}.
//   - member names match a field's JSON name exactly (no case-insensitive or Unicode-folded
//     match: "DESCRIPTION" and "de\u017fcription" are unknown members, 214);
//   - a member given twice in one object, invalid UTF-8 and an escaped lone surrogate are
//     refused (213) naming the member they occur in; any other malformed JSON is 213 too;
//   - a NUL character (U+0000) in any string, member names included, is refused (215) naming the
//     member: no stored value or name ever carries one;
//   - a value of the wrong JSON type is 215 naming the member; an unknown member is 214.
//
// Some clients send their whole argument as the body, path ids included (`{"id":"ak_…",
// "description":"…"}` on PATCH /api_keys/{id}). Decode accepts a top-level member named like a
// wildcard of the route's pattern when it is a string equal to the path's value (or null) and
// drops it before decoding; any other value is 215 naming the member. Families therefore never
// see path ids in their bodies, on every PATCH, PUT and sub-resource POST alike.
func Decode(r *Request, dst any) error {
	return decode(r.Body, pathValues(r.HTTP), dst)
}

// DecodeBytes is Decode over raw bytes, for bodies that belong to no route.
func DecodeBytes(body []byte, dst any) error {
	return decode(body, nil, dst)
}

// decode uses github.com/go-json-experiment/json, the module that mirrors encoding/json/v2. In
// Go 1.26 encoding/json/v2 exists only behind GOEXPERIMENT=jsonv2, which a build must not depend
// on; the module has the same API and aliases the standard library once v2 is stable, so moving
// to it later is an import change. It was chosen over encoding/json (v1) because v2 is strict
// where v1 is not: v1 matches names case-insensitively and with Unicode folding, keeps the last
// of duplicate members and replaces invalid UTF-8 and lone surrogates with U+FFFD, none of which
// can be switched off. v2 refuses all of these by default and reports the JSON Pointer of the
// offending member, from which the field named in the error comes. A token pre-pass over the
// body (scan) adds what v2 accepts but the API does not: NUL characters.
func decode(body []byte, path map[string]string, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	repeated, err := scan(body, path)
	if err != nil {
		return err
	}
	if repeated {
		if body, err = withoutPathIDs(body, path); err != nil {
			return err
		}
	}
	if err := json.Unmarshal(body, dst, json.RejectUnknownMembers(true)); err != nil {
		return decodeError(err)
	}
	return nil
}

// pathValues maps each wildcard of the route pattern that matched hr to its value.
func pathValues(hr *http.Request) map[string]string {
	if hr == nil {
		return nil
	}
	var out map[string]string
	rest := hr.Pattern
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return out
		}
		name := strings.TrimSuffix(rest[i+1:i+j], "...")
		rest = rest[i+j+1:]
		if name == "$" || name == "" {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[name] = hr.PathValue(name)
	}
}

// scan tokenizes the whole body once, refusing what the decoder would accept but the API does
// not (NUL characters) and reporting syntax errors with the member they occur in. It reports
// whether the top-level object repeats a path wildcard as a member.
func scan(body []byte, path map[string]string) (repeated bool, err error) {
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.ReadToken()
		if err == io.EOF {
			return repeated, nil
		}
		if err != nil {
			return false, syntaxError(err)
		}
		if tok.Kind() != '"' {
			continue
		}
		s := tok.String()
		if strings.IndexByte(s, 0) >= 0 {
			field := fieldName(dec.StackPointer())
			return false, Invalid(field, "%s must not contain a NUL character (U+0000)", field)
		}
		if dec.StackDepth() == 1 && path != nil {
			// At depth 1 a string token is either a member name or a member's value; the
			// pointer names the member in both cases, so a name is recognised by the pointer
			// having just changed to it.
			if _, ok := path[s]; ok && dec.StackPointer().LastToken() == s {
				repeated = true
			}
		}
	}
}

// withoutPathIDs removes the top-level members that repeat a path wildcard, after checking that
// each equals the path's value (or is null).
func withoutPathIDs(body []byte, path map[string]string) (_ []byte, err error) {
	defer derrors.Wrap(&err, "api.withoutPathIDs")
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return body, nil // not an object: the decoder reports the mismatch
	}
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return nil, err
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, syntaxError(err)
		}
		name := tok.String() // the token is only valid until the next read
		val, err := dec.ReadValue()
		if err != nil {
			return nil, syntaxError(err)
		}
		if want, ok := path[name]; ok {
			if err := checkPathID(name, val, want); err != nil {
				return nil, err
			}
			continue
		}
		if err := enc.WriteToken(jsontext.String(name)); err != nil {
			return nil, err
		}
		if err := enc.WriteValue(val); err != nil {
			return nil, err
		}
	}
	if err := enc.WriteToken(jsontext.EndObject); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// checkPathID accepts a body member repeating the path's value, or null.
func checkPathID(field string, val jsontext.Value, want string) error {
	switch val.Kind() {
	case 'n':
		return nil
	case '"':
		var got string
		if err := json.Unmarshal(val, &got); err != nil {
			return decodeError(err)
		}
		if got == want {
			return nil
		}
		return Invalid(field, "%s %s in the body does not match the path's %s", field, Describe(got), Describe(want))
	default:
		return Invalid(field, "%s must be a string equal to the path's %s", field, Describe(want))
	}
}

func syntaxError(err error) error {
	var se *jsontext.SyntacticError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return BadRequest(CodeUnparseableBody, "body", "the request body is truncated JSON")
	case errors.As(err, &se):
		if field := fieldName(se.JSONPointer); field != "" {
			return BadRequest(CodeUnparseableBody, field, "the request body is not valid JSON at %s (byte %d): %s", field, se.ByteOffset, errText(se.Err))
		}
		return BadRequest(CodeUnparseableBody, "body", "the request body is not valid JSON (byte %d): %s", se.ByteOffset, errText(se.Err))
	default:
		return BadRequest(CodeUnparseableBody, "body", "the request body could not be parsed")
	}
}

func errText(err error) string {
	if err == nil {
		return "invalid JSON"
	}
	return err.Error()
}

func decodeError(err error) error {
	var semErr *json.SemanticError
	if !errors.As(err, &semErr) {
		return syntaxError(err)
	}
	field := fieldName(semErr.JSONPointer)
	switch {
	case errors.Is(semErr.Err, json.ErrUnknownName):
		return BadRequest(CodeUnknownField, field, "unknown field %s in the request body", Describe(field))
	case field == "":
		return BadRequest(CodeUnparseableBody, "body", "the request body must be a JSON object")
	case semErr.GoType != nil:
		return Invalid(field, "field %q must be of type %s, not %s", field, jsonType(semErr.GoType.Kind()), jsonKind(semErr.JSONKind))
	default:
		return Invalid(field, "field %q has an invalid value", field)
	}
}

// fieldName turns a JSON Pointer into the path the errors name: "sources[0].type",
// "labels[\"a b\"]". All-digit tokens are read as array indexes.
func fieldName(p jsontext.Pointer) string {
	var b strings.Builder
	for tok := range p.Tokens() {
		switch {
		case tok != "" && strings.Trim(tok, "0123456789") == "":
			b.WriteString("[" + tok + "]")
		case plainName(tok):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(tok)
		default:
			b.WriteString("[" + strconv.Quote(tok) + "]")
		}
	}
	return b.String()
}

// plainName reports whether a member name can be written bare in a field path.
func plainName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '-' || unicode.IsLetter(c) || unicode.IsDigit(c)) {
			return false
		}
	}
	return true
}

func jsonType(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct, reflect.Pointer, reflect.Interface:
		return "object"
	default:
		return "number"
	}
}

func jsonKind(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case '[':
		return "array"
	case '{':
		return "object"
	case 'n':
		return "null"
	case '0':
		return "number"
	default:
		return "a value"
	}
}

// Limits on the free-text fields every family shares, counted in bytes.
const (
	MaxDescriptionBytes = 255
	MaxMetadataBytes    = 4096
)

// TextCodes are a family's error codes for an over-long description and metadata, and for an
// update that supplies no changeable field (Empty; ERR_NGROK_606 when unset).
type TextCodes struct{ Description, Metadata, Empty string }

// EmptyUpdate is the family's 400 for a PATCH that supplies none of fields.
func (c TextCodes) EmptyUpdate(fields ...string) *Error {
	e := EmptyUpdate(fields...)
	if c.Empty != "" {
		e.Code = c.Empty
	}
	return e
}

// Text is the description and metadata members a create or PATCH body may carry: body structs
// embed it, and CheckText takes it whole.
type Text struct {
	Description *string `json:"description"`
	Metadata    *string `json:"metadata"`
}

// CheckText validates optional description and metadata values against their byte limits.
func CheckText(codes TextCodes, t Text) error {
	description, metadata := t.Description, t.Metadata
	if description != nil && len(*description) > MaxDescriptionBytes {
		return BadRequest(codes.Description, "description",
			"description is %d bytes long; the limit is %d bytes", len(*description), MaxDescriptionBytes)
	}
	if metadata != nil && len(*metadata) > MaxMetadataBytes {
		return BadRequest(codes.Metadata, "metadata",
			"metadata is %d bytes long; the limit is %d bytes", len(*metadata), MaxMetadataBytes)
	}
	return nil
}

// EmptyUpdate is the 400 for a PATCH that supplies nothing it could change.
func EmptyUpdate(fields ...string) *Error {
	return BadRequest(CodeEmptyUpdate, "body", "the update supplies none of the changeable fields (%s)", strings.Join(fields, ", "))
}

// DecodePatch decodes a PATCH body into dst (a pointer to a struct of optional members), which
// changes only the members supplied (a supplied empty string or false is a value), and refuses, with the family's empty-update error naming every member of dst in order, a body that
// supplies none of them. A member tagged `patch:"refused"` is one the body may send only to be
// refused by the caller (it cannot change): it counts as supplied, and the error does not name it.
func (c TextCodes) DecodePatch(r *Request, dst any) error {
	if err := Decode(r, dst); err != nil {
		return err
	}
	names, supplied := members(reflect.ValueOf(dst).Elem(), nil)
	if !supplied {
		return c.EmptyUpdate(names...)
	}
	return nil
}

// DecodePatch is TextCodes.DecodePatch with the platform's empty-update code.
func DecodePatch(r *Request, dst any) error { return TextCodes{}.DecodePatch(r, dst) }

// optional is a member type that tells whether the body supplied it: Nullable, whose Set field
// members reads.
type optional interface{ Supplied() bool }

var optionalType = reflect.TypeFor[optional]()

// members appends the JSON names of struct v's optional members (pointers, slices, maps,
// Nullable; embedded structs' in place) but refused ones, and reports whether any is set.
func members(v reflect.Value, names []string) ([]string, bool) {
	supplied := false
	for i := range v.NumField() {
		f, fv := v.Type().Field(i), v.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			var set bool
			names, set = members(fv, names)
			supplied = supplied || set
			continue
		}
		var set bool
		switch {
		case f.Type.Implements(optionalType):
			// Read through the field, not Interface(): members of an unexported embedded
			// body struct cannot be turned into interfaces.
			set = fv.FieldByName("Set").Bool()
		case f.Type.Kind() == reflect.Pointer, f.Type.Kind() == reflect.Slice, f.Type.Kind() == reflect.Map:
			set = !fv.IsNil()
		default:
			continue // not an optional member
		}
		supplied = supplied || set
		if f.Tag.Get("patch") != "refused" {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			names = append(names, name)
		}
	}
	return names, supplied
}

// Body is a request body that embeds Text.
type Body interface{ TextPart() Text }

// TextPart returns the description and metadata of the body that embeds t.
func (t Text) TextPart() Text { return t }

// UpdateText applies a PATCH body that may change only description and metadata (the shape of
// many families' updates): codes.EmptyUpdate when it supplies neither, the family's codes when too long.
func UpdateText(r *Request, codes TextCodes, description, metadata *string) error {
	var in Text
	if err := Decode(r, &in); err != nil {
		return err
	}
	if in.Description == nil && in.Metadata == nil {
		return codes.EmptyUpdate("description", "metadata")
	}
	if err := CheckText(codes, in); err != nil {
		return err
	}
	Set(description, in.Description)
	Set(metadata, in.Metadata)
	return nil
}

// Set copies *src into *dst when the client supplied it; it reports whether it did.
func Set[T any](dst *T, src *T) bool {
	if src == nil {
		return false
	}
	*dst = *src
	return true
}

// Describe formats v for messages without echoing unbounded input back.
func Describe(v string) string {
	if len(v) > 64 {
		return fmt.Sprintf("%q…", v[:64])
	}
	return fmt.Sprintf("%q", v)
}
