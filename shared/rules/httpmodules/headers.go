package httpmodules

import (
	"slices"
	"sort"
	"strings"

	"golang.org/x/net/http/httpguts"

	"tunnelapi/shared/platform/api"
)

// Headers is a stored request_headers or response_headers module.
type Headers struct {
	Enabled bool              `dynamodbav:"enabled"`
	Add     map[string]string `dynamodbav:"add"`
	Remove  []string          `dynamodbav:"remove"`
}

// HeadersIn is the request form of Headers.
type HeadersIn struct {
	Enabled *bool             `json:"enabled"`
	Add     map[string]string `json:"add"`
	Remove  []string          `json:"remove"`
}

// HeadersJSON is the response form of Headers.
type HeadersJSON struct {
	Enabled bool              `json:"enabled"`
	Add     map[string]string `json:"add"`
	Remove  []string          `json:"remove"`
}

// Check validates a request_headers (request true) or response_headers module: names are HTTP
// tokens (7023) of at most MaxHeaderNameBytes (7105); added values are valid field values (7024)
// of at most MaxHeaderValueBytes (7106); at most MaxHeaders added and MaxHeaders removed (7015);
// one name added twice with different casing is 7069; removing Host from a request needs a
// replacement in add (7164).
func (in HeadersIn) Check(field string, request bool) (Headers, error) {
	h := Headers{Enabled: enabled(in.Enabled), Add: map[string]string{}, Remove: []string{}}
	add := path(field, "add")
	if len(in.Add) > MaxHeaders {
		return h, api.BadRequest(CodeTooManyHeaders, add, "%s has %d headers; the limit is %d", add, len(in.Add), MaxHeaders)
	}
	names := make([]string, 0, len(in.Add))
	for name := range in.Add {
		names = append(names, name)
	}
	sort.Strings(names) // a deterministic first offender
	folded := make(map[string]string, len(names))
	for _, name := range names {
		f := add + "." + name
		if err := checkHeaderName(f, name); err != nil {
			return h, err
		}
		if other, dup := folded[strings.ToLower(name)]; dup {
			return h, api.BadRequest(CodeHeaderTwice, f, "%s adds header %s twice with different casing (also %s)", add, api.Describe(name), api.Describe(other))
		}
		folded[strings.ToLower(name)] = name
		v := in.Add[name]
		if len(v) > MaxHeaderValueBytes {
			return h, api.BadRequest(CodeHeaderValueLong, f, "the value of %s is %d bytes long; the limit is %d", f, len(v), MaxHeaderValueBytes)
		}
		if !httpguts.ValidHeaderFieldValue(v) {
			return h, api.BadRequest(CodeHeaderValue, f, "the value of %s is not a valid HTTP header value (control characters are not allowed)", f)
		}
		h.Add[name] = v
	}
	rm := path(field, "remove")
	if len(in.Remove) > MaxHeaders {
		return h, api.BadRequest(CodeTooManyHeaders, rm, "%s has %d headers; the limit is %d", rm, len(in.Remove), MaxHeaders)
	}
	for i, name := range in.Remove {
		if err := checkHeaderName(index(rm, i), name); err != nil {
			return h, err
		}
		if request && strings.EqualFold(name, "host") && folded["host"] == "" {
			return h, api.BadRequest(CodeHostNeedsReplacement, index(rm, i), "removing the Host header of a request needs a replacement Host in %s", add)
		}
	}
	if in.Remove != nil {
		h.Remove = slices.Clone(in.Remove)
	}
	return h, nil
}

func checkHeaderName(field, name string) error {
	if len(name) > MaxHeaderNameBytes {
		return api.BadRequest(CodeHeaderNameLong, field, "header name %s is %d bytes long; the limit is %d", api.Describe(name), len(name), MaxHeaderNameBytes)
	}
	if !httpguts.ValidHeaderFieldName(name) {
		return api.BadRequest(CodeHeaderName, field, "%s is not a valid HTTP header name", api.Describe(name))
	}
	return nil
}

// JSON returns h's response form.
func (h Headers) JSON() *HeadersJSON {
	return &HeadersJSON{Enabled: h.Enabled, Add: api.Map(h.Add), Remove: api.Slice(h.Remove)}
}
