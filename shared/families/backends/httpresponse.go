package backends

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// HTTPResponseItem is a stored HTTP response backend.
type HTTPResponseItem struct {
	store.Meta
	text
	leaf
	Body       string            `dynamodbav:"body"`
	Headers    map[string]string `dynamodbav:"headers"`
	StatusCode int               `dynamodbav:"status_code"`
}

// HTTPResponseJSON is the wire form of an HTTP response backend.
type HTTPResponseJSON struct {
	resource.Head
	Body       string            `json:"body"`
	Headers    map[string]string `json:"headers"`
	StatusCode int               `json:"status_code"`
}

type httpResponseBody struct {
	api.Text
	Body       *string            `json:"body"`
	Headers    *map[string]string `json:"headers"`
	StatusCode *int               `json:"status_code"`
}

// Limits of an HTTP response backend, so that it, its audit event and its outbox copy fit in one
// transaction with room to spare.
const (
	MaxResponseBodyBytes = 16 << 10
	MaxHeaders           = 64
	MaxHeaderNameBytes   = 255
	MaxHeaderValueBytes  = 4096
	// DefaultStatusCode is the status of a backend created without one.
	DefaultStatusCode = http.StatusOK
)

// HTTPResponseBackendsDescriptor is the /backends/http_response family.
var HTTPResponseBackendsDescriptor = &resource.Descriptor{
	Path: "/backends/http_response", Prefix: ids.HTTPResponseBackend, ListKey: "backends", EventKind: "http_response_backend",
	Binding: func() resource.Binding {
		return resource.Bind(newBackends[HTTPResponseItem, *HTTPResponseItem, httpResponseBody])
	},
}

// HTTPResponseBackends is the HTTP response backend family's rules.
type HTTPResponseBackends = Backends[HTTPResponseItem, *HTTPResponseItem, httpResponseBody]

func (it *HTTPResponseItem) wire(r *api.Request, h resource.Head) any {
	return HTTPResponseJSON{Head: h, Body: it.Body, Headers: api.Map(it.Headers), StatusCode: it.StatusCode}
}

// apply sets the body (6516), the headers (6522, 6523; names lower-cased) and the status code
// (6517; 200 unless given on create).
func (it *HTTPResponseItem) apply(ctx context.Context, k *resource.Kit, r *api.Request, in *httpResponseBody, m *resource.Mutation, create bool) error {
	if create {
		it.StatusCode = DefaultStatusCode
	}
	if in.Body != nil {
		if n := len(*in.Body); n > MaxResponseBodyBytes {
			return api.BadRequest(CodeBodyTooLarge, "body", "body is %d bytes long; the limit is %d bytes", n, MaxResponseBodyBytes)
		}
		it.Body = *in.Body
	}
	if in.Headers != nil {
		if err := checkHeaders(*in.Headers); err != nil {
			return err
		}
		// Header names are case-insensitive; stored, and returned, lower-cased as the platform
		// returns them.
		it.Headers = make(map[string]string, len(*in.Headers))
		for name, value := range *in.Headers {
			it.Headers[strings.ToLower(name)] = value
		}
	}
	if in.StatusCode != nil {
		if c := *in.StatusCode; c < 100 || c > 599 {
			return api.BadRequest(CodeStatusCode, "status_code", "status_code %d is not an HTTP status code (100 to 599)", c)
		}
		it.StatusCode = *in.StatusCode
	}
	return nil
}

// checkHeaders validates response headers: at most MaxHeaders, names HTTP tokens of at most
// MaxHeaderNameBytes (6522), each name once whatever its case, values of at most
// MaxHeaderValueBytes (6523) that HTTP can carry.
func checkHeaders(headers map[string]string) error {
	if len(headers) > MaxHeaders {
		return api.Invalid("headers", "headers has %d entries; the limit is %d", len(headers), MaxHeaders)
	}
	seen := make(map[string]string, len(headers))
	for _, name := range slices.Sorted(maps.Keys(headers)) {
		value := headers[name]
		switch {
		case len(name) > MaxHeaderNameBytes:
			return api.BadRequest(CodeHeaderName, "headers", "header name %s is %d bytes long; the limit is %d", api.Describe(name), len(name), MaxHeaderNameBytes)
		case len(value) > MaxHeaderValueBytes:
			return api.BadRequest(CodeHeaderValue, "headers", "the value of header %s is %d bytes long; the limit is %d", api.Describe(name), len(value), MaxHeaderValueBytes)
		case !httpguts.ValidHeaderFieldName(name):
			return api.Invalid("headers", "header name %s is not a valid HTTP header name", api.Describe(name))
		case !httpguts.ValidHeaderFieldValue(value):
			return api.Invalid("headers", "the value of header %s holds characters HTTP headers cannot carry", api.Describe(name))
		}
		if other, dup := seen[strings.ToLower(name)]; dup {
			return api.Invalid("headers", "headers %s and %s are the same header", api.Describe(other), api.Describe(name))
		}
		seen[strings.ToLower(name)] = name
	}
	return nil
}
