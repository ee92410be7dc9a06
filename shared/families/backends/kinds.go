package backends

import (
	"context"
	"strings"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// Error codes of the backend families: 6501 a referenced backend does not exist in the account;
// 6502 a referenced backend cannot be deleted; 6503/6504 description/metadata too long; 6505 a
// static address not of the form host:port; 6506 a static address whose port or host is
// invalid; 6507 a static address without a host; 6508 more than MaxLabels tunnel group labels;
// 6509/6510 a label name/value empty or longer than MaxLabelBytes; 6531 '=' in a label; 6511 more
// than MaxWeightedBackends children of a weighted backend; 6512 a weight outside 0–10000; 6513
// more than MaxFailoverBackends children of a failover backend; 6516 an HTTP response body
// longer than MaxResponseBodyBytes; 6517 a status code outside 100–599; 6522/6523 a response
// header name/value longer than MaxHeaderNameBytes/MaxHeaderValueBytes; 6524/6525 a
// weighted/failover backend naming a child it may not reference (a backend of its own kind,
// itself, or one whose children lead back to it); 6526 a referenced id that is no backend id at
// all; 6527 one with a backend kind's prefix that is not a well-formed id of that kind. A
// well-formed id of another backend kind in a path (GET /backends/static/bkdtg_…) is a 404 like
// any id of another kind. 6514 (no such backend) is left to the edges' backend modules. 6500,
// 6529 (plans), 6515 and 6528 (online tunnels) and 6530 (header removal modules) name nothing
// this API decides.
const (
	CodeMissing         = "ERR_NGROK_6501"
	CodeInUse           = "ERR_NGROK_6502"
	CodeDescription     = "ERR_NGROK_6503"
	CodeMetadata        = "ERR_NGROK_6504"
	CodeNotHostPort     = "ERR_NGROK_6505"
	CodeBadAddress      = "ERR_NGROK_6506"
	CodeNoHost          = "ERR_NGROK_6507"
	CodeTooManyLabels   = "ERR_NGROK_6508"
	CodeLabelName       = "ERR_NGROK_6509"
	CodeLabelValue      = "ERR_NGROK_6510"
	CodeTooManyWeighted = "ERR_NGROK_6511"
	CodeWeight          = "ERR_NGROK_6512"
	CodeTooManyFailover = "ERR_NGROK_6513"
	CodeNoSuchBackend   = "ERR_NGROK_6514"
	CodeBodyTooLarge    = "ERR_NGROK_6516"
	CodeStatusCode      = "ERR_NGROK_6517"
	CodeHeaderName      = "ERR_NGROK_6522"
	CodeHeaderValue     = "ERR_NGROK_6523"
	CodeWeightedChild   = "ERR_NGROK_6524"
	CodeFailoverChild   = "ERR_NGROK_6525"
	CodeNotABackend     = "ERR_NGROK_6526"
	CodeMalformedID     = "ERR_NGROK_6527"
	CodeLabelEquals     = "ERR_NGROK_6531"
)

var textCodes = api.TextCodes{Description: CodeDescription, Metadata: CodeMetadata}

// kind is what identifies a backend kind, as plain data so that lookups by id need no
// descriptor: its id prefix, its name in messages, and its name in snake and camel case, from
// which its path, event kind, folder and Lambda function are formed alike for every kind. The
// shared hooks read a kind's bodies with resource.Described.DecodeCreate and DecodePatch (a
// PATCH supplies at least one of the body's pointer members) and open every wire form with
// resource.Head.
type kind struct {
	prefix, name, snake, camel string
	path                       string
}

func newKind(prefix, name, snake, camel string) kind {
	return kind{prefix: prefix, name: name, snake: snake, camel: camel, path: "/backends/" + snake}
}

var (
	tunnelGroup  = newKind(ids.TunnelGroupBackend, "tunnel group", "tunnel_group", "TunnelGroup")
	static       = newKind(ids.StaticBackend, "static", "static", "Static")
	httpResponse = newKind(ids.HTTPResponseBackend, "HTTP response", "http_response", "HTTPResponse")
	failover     = newKind(ids.FailoverBackend, "failover", "failover", "Failover")
	weighted     = newKind(ids.WeightedBackend, "weighted", "weighted", "Weighted")
	kinds        = []kind{tunnelGroup, static, httpResponse, failover, weighted}
)

// kindOf returns the kind whose prefix id carries (ok false when it is no backend prefix) and
// whether id is well formed.
func kindOf(id string) (k kind, wellFormed, ok bool) {
	prefix, _, _ := strings.Cut(id, "_")
	for _, k := range kinds {
		if k.prefix == prefix {
			return k, ids.Is(id, prefix), true
		}
	}
	return kind{}, false, false
}

// composite reports whether backends of kind k reference other backends.
func (k kind) composite() bool { return k == failover || k == weighted }

// CheckID checks that id, the value of field, is a well-formed id of a backend of any kind:
// 6526 when it is no backend id, 6527 when it has a backend's prefix but is malformed.
func CheckID(field, id string) error {
	k, wellFormed, ok := kindOf(id)
	switch {
	case !ok:
		return api.BadRequest(CodeNotABackend, field, "the id %s is not a backend id", api.Describe(id))
	case !wellFormed:
		return api.BadRequest(CodeMalformedID, field, "the id %s is invalid; expected an id of a %s backend", api.Describe(id), k.name)
	}
	return nil
}

// Ref is the response form of a reference to the backend id, of any kind, on r's host.
func Ref(r *api.Request, id string) api.Ref {
	k, _, _ := kindOf(id)
	return api.Ref{ID: id, URI: r.URI(k.path + "/" + id)}
}

// missing is the refusal of a reference to a backend that does not exist in the account.
func missing(field, id string) *api.Error {
	return api.BadRequest(CodeMissing, field, "cannot reference backend %s: it does not exist", api.Describe(id))
}

// Reference adds to m a reference to the backend id (the value of field) of the caller's
// account, of any kind: its reference count goes up in m's transaction, so the backend cannot
// be deleted while the referrer exists (6502), and a backend deleted first makes the commit
// fail with 6501. It checks the id first (CheckID).
func Reference(m *resource.Mutation, field, id string) error {
	if err := CheckID(field, id); err != nil {
		return err
	}
	m.Reference(id, 1, missing(field, id))
	return nil
}

// Release adds to m the end of a reference to the backend id made with Reference.
func Release(m *resource.Mutation, id string) {
	m.Reference(id, -1, nil)
}

// errInUse is the refusal to delete a backend that something references.
var errInUse = api.BadRequest(CodeInUse, "id", "the backend is still referenced by another backend, an edge or a route; remove those references first")

// item is what a backend kind's stored item (the pointer type P of T) supplies to the hooks the
// kinds share: its free text, how a body's own members apply to it and its wire form.
type item[T any, B api.Body] interface {
	*T
	store.Resource
	described() *resource.Described
	// apply sets the members of in the client supplied (all of them when create is set, the
	// kind's defaults for those missing) and adds the writes they imply to m.
	apply(ctx context.Context, k *resource.Kit, r *api.Request, in *B, m *resource.Mutation, create bool) error
	// wire is the item's response form, starting with h.
	wire(r *api.Request, h resource.Head) any
	// children are the backends the item references, released when it is deleted.
	children() []string
}

// text is embedded by every backend item: the free text all resources carry, reachable through
// the item interface.
type text struct {
	resource.Described
}

func (t *text) described() *resource.Described { return &t.Described }

// leaf is embedded by the items of kinds that reference no other backend.
type leaf struct{}

func (leaf) children() []string { return nil }

// Backends is the rules every backend kind shares; the kind's item type P supplies the rest.
// A kind's body type B embeds api.Text: its other pointer members are the kind's own, which a
// PATCH must supply one of when it supplies neither description nor metadata.
type Backends[T any, P item[T, B], B api.Body] struct {
	*resource.Family[T, P]
}

// newBackends makes the hooks of a backend kind.
func newBackends[T any, P item[T, B], B api.Body](f *resource.Family[T, P]) Backends[T, P, B] {
	return Backends[T, P, B]{f}
}

// Render returns a backend as GET returns it.
func (f Backends[T, P, B]) Render(r *api.Request, it P) any {
	return it.wire(r, resource.NewHead(r, f.Path, it.Base(), *it.described()))
}

// Create fills a new backend from the request body.
func (f Backends[T, P, B]) Create(ctx context.Context, r *api.Request, it P, m *resource.Mutation) (any, error) {
	var in B
	if err := it.described().DecodeCreate(r, textCodes, bodyOf(&in)); err != nil {
		return nil, err
	}
	return nil, it.apply(ctx, f.Kit, r, &in, m, true)
}

// Update applies a PATCH body; at least one member must be given.
func (f Backends[T, P, B]) Update(ctx context.Context, r *api.Request, it P, m *resource.Mutation) error {
	var in B
	if err := it.described().DecodePatch(r, textCodes, bodyOf(&in)); err != nil {
		return err
	}
	return it.apply(ctx, f.Kit, r, &in, m, false)
}

// bodyOf is in as a request body: B embeds api.Text (its constraint), whose methods a pointer
// to a type parameter does not carry in Go's type system, though every *B has them.
func bodyOf[B api.Body](in *B) api.Body { return any(in).(api.Body) }

// Delete releases the backends the deleted one references.
func (f Backends[T, P, B]) Delete(ctx context.Context, r *api.Request, it P, m *resource.Mutation) error {
	for _, id := range it.children() {
		Release(m, id)
	}
	return nil
}

// InUse is the refusal to delete a backend something still references.
func (Backends[T, P, B]) InUse() *api.Error { return errInUse }
