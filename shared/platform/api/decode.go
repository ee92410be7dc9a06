package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Decode reads the request body into dst strictly: unknown fields are 214, malformed JSON 213,
// a value of the wrong type 215 naming the field. An empty body decodes as {}.
func Decode(r *Request, dst any) error {
	return DecodeBytes(r.Body, dst)
}

// DecodeBytes is Decode over raw bytes.
func DecodeBytes(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	if !utf8.Valid(body) {
		return BadRequest(CodeUnparseableBody, "body", "the request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return BadRequest(CodeUnparseableBody, "body", "the request body has data after its JSON value")
	}
	return nil
}

func decodeError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			return BadRequest(CodeUnparseableBody, "body", "the request body must be a JSON object")
		}
		return Invalid(field, "field %q must be of type %s, not %s", field, jsonType(typeErr.Type.Kind().String()), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return BadRequest(CodeUnparseableBody, "body", "the request body is not valid JSON: %s at byte %d", syntaxErr.Error(), syntaxErr.Offset)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		named := field
		if named == "" {
			named = "body"
		}
		return BadRequest(CodeUnknownField, named, "unknown field %q in the request body", field)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return BadRequest(CodeUnparseableBody, "body", "the request body is truncated JSON")
	default:
		var fe *FieldError
		if errors.As(err, &fe) {
			return Invalid(fe.Field, "%s", fe.Msg)
		}
		return BadRequest(CodeUnparseableBody, "body", "the request body could not be parsed: %s", err.Error())
	}
}

// FieldError lets a custom UnmarshalJSON name the field it rejects.
type FieldError struct{ Field, Msg string }

// Error implements error.
func (e *FieldError) Error() string { return e.Msg }

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "map", "struct", "ptr":
		return "object"
	default:
		return "number"
	}
}

// Limits on the free-text fields every family shares, counted in bytes (WIRE.md).
const (
	MaxDescriptionBytes = 255
	MaxMetadataBytes    = 4096
)

// TextCodes are a family's error codes for an over-long description and metadata.
type TextCodes struct{ Description, Metadata string }

// CheckText validates optional description and metadata values against their byte limits.
func CheckText(codes TextCodes, description, metadata *string) error {
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

// UpdateText applies a PATCH body that may change only description and metadata (the shape of
// many families' updates): 606 when it supplies neither, the family's codes when too long.
func UpdateText(r *Request, codes TextCodes, description, metadata *string) error {
	var in struct {
		Description *string `json:"description"`
		Metadata    *string `json:"metadata"`
	}
	if err := Decode(r, &in); err != nil {
		return err
	}
	if in.Description == nil && in.Metadata == nil {
		return EmptyUpdate("description", "metadata")
	}
	if err := CheckText(codes, in.Description, in.Metadata); err != nil {
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
