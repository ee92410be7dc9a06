package resource

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/platform/store"
)

// Route is one route of a family beyond its five operations (an action on an item, a
// sub-resource kept inside the item), declared as data: Register adds it with the rest, so no
// family touches a mux.
type Route[H any] struct {
	// Method is the request's HTTP method (http.MethodDelete).
	Method string
	// Pattern is the path under the family's Path, with its wildcards ("/{id}/certificate").
	Pattern string
	// Status is the status of a success (http.StatusNoContent).
	Status int
	// Handle answers the request with the family's hooks h; usually a method expression of the
	// hooks type (ReservedDomains.detachCertificate).
	Handle func(h H, ctx context.Context, r *api.Request) (any, error)
}

// Binding is how a Descriptor's family is served: its hooks, the routes it adds to the five
// operations and what its hooks do with secrets. Only Bind makes one.
type Binding struct {
	extra   []endpoint
	secrets Secrets
	item    reflect.Type
	// build makes the family's hooks for d on kit k and its handlers.
	build func(d *Descriptor, k *Kit, s Secrets) handlers
}

// Keeping returns b for hooks that seal or open secrets (Seals|Opens): only then does the
// family's kit seal and open, and only what s says, so hooks that seal or open without saying
// so fail their tests rather than their function in AWS, whose role holds only the KMS actions
// declared. A create of such a family prepares (Preparer) only for a verified caller.
func (b Binding) Keeping(s Secrets) Binding {
	b.secrets = s
	return b
}

// ItemType is the family's stored item type (Bind's T), whose decoder (store.Decoder) the
// generator writes from it (shared/app/gen).
func (b Binding) ItemType() reflect.Type { return b.item }

// handlers are a family's hooks and what answers each of its routes.
type handlers struct {
	hooks any
	core  *core
	extra []routeHandler
}

// routeHandler is a route a family's Binding declares, with its handler.
type routeHandler struct {
	endpoint
	handle api.Handler
}

// endpoint is a route without its handler: its method, pattern under the family's path and
// status of a success.
type endpoint struct {
	method, pattern string
	status          int
	// op is the operation of the five it is; zero for a route a family's Binding declares.
	op Operation
}

// operations are the five operations a family may serve.
var operations = []endpoint{
	{http.MethodPost, "", http.StatusCreated, OpCreate},
	{http.MethodGet, "", http.StatusOK, OpList},
	{http.MethodGet, "/{id}", http.StatusOK, OpGet},
	{http.MethodPatch, "/{id}", http.StatusOK, OpUpdate},
	{http.MethodDelete, "/{id}", http.StatusNoContent, OpDelete},
}

// handler returns the handler of the operation op.
func (c *core) handler(op Operation) api.Handler {
	switch op {
	case OpCreate:
		return c.createOp
	case OpList:
		return c.list
	case OpGet:
		return c.get
	case OpUpdate:
		return c.updateOp
	case OpDelete:
		return c.deleteOp
	}
	panic(fmt.Sprintf("resource: no operation %d", op))
}

// Bind declares how a family is served: by the hooks newHooks makes from the family (its
// Descriptor and Kit set; a hooks type holding more, such as the configuration or a cache,
// derives it there), with routes, the routes it serves beyond the five operations. A Descriptor
// holds the result as its Binding; Register is what adds the routes to a mux.
func Bind[H Hooks[P], T any, P interface {
	*T
	store.Resource
}](newHooks func(*Family[T, P]) H, routes ...Route[H]) Binding {
	extra := make([]endpoint, len(routes))
	for i, rt := range routes {
		if rt.Method == "" || !strings.HasPrefix(rt.Pattern, "/") || rt.Status == 0 || rt.Handle == nil {
			panic(fmt.Sprintf("resource: route %q %q needs a method, a pattern starting with /, a status and a handler", rt.Method, rt.Pattern))
		}
		extra[i] = endpoint{method: rt.Method, pattern: rt.Pattern, status: rt.Status}
	}
	return Binding{extra: extra, item: reflect.TypeFor[T](), build: func(d *Descriptor, k *Kit, s Secrets) handlers {
		f := &Family[T, P]{Descriptor: d, Kit: k}
		h := newHooks(f)
		f.Hooks = h
		c := f.core()
		c.secrets = s
		if serves := d.Offers(OpUpdate); serves != c.hooks.has(updater) {
			panic(fmt.Sprintf("resource: %s serves update %v, but its hooks implement Updater %v", d.Path, serves, c.hooks.has(updater)))
		}
		out := handlers{hooks: h, core: c}
		for _, rt := range routes {
			serve := rt.Handle
			out.extra = append(out.extra, routeHandler{
				endpoint: endpoint{method: rt.Method, pattern: rt.Pattern, status: rt.Status},
				handle:   func(ctx context.Context, r *api.Request) (any, error) { return serve(h, ctx, r) },
			})
		}
		return out
	}}
}

// HooksOf returns the hooks H of the family d served with kit k (nil in a unit test of the hooks
// that needs no table), as its Binding makes them.
func HooksOf[H any](d *Descriptor, k *Kit) H {
	b := d.Binding()
	h, ok := b.build(d, k, b.secrets).hooks.(H)
	if !ok {
		panic(fmt.Sprintf("resource: the hooks of %s are not a %T", d.Path, h))
	}
	return h
}

// Routes lists every route of the family as "METHOD pattern" (the pattern from the root): the
// operations it serves of the five, then the routes its Binding declares, in the order Register
// adds them.
func (d *Descriptor) Routes() []string {
	var out []string
	for _, e := range operations {
		if d.Offers(e.op) {
			out = append(out, e.method+" "+d.Path+e.pattern)
		}
	}
	for _, e := range d.Binding().extra {
		out = append(out, e.method+" "+d.Path+e.pattern)
	}
	return out
}

// Register adds every route of the family d (Routes) to mux, served with kit k: the one place a route is
// added to a mux. The family's kit seals and opens only what its Binding declares (Keeping).
// Every request runs under the budget s gives the family (api.Server.Budgets), if any.
func (d *Descriptor) Register(k *Kit, mux api.Mux, s *api.Server) {
	if d.Binding == nil {
		panic("resource: the descriptor of " + d.Path + " has no Binding")
	}
	b := d.Binding()
	if seals, opens := b.secrets&Seals != 0, b.secrets&Opens != 0; k != nil && !(seals && opens) {
		declared := *k
		declared.Seal = seal.Restrict(k.Seal, seals, opens, fmt.Sprintf("%s declares Seals %v, Opens %v (its Binding's Keeping)", d.Path, seals, opens))
		k = &declared
	}
	h := b.build(d, k, b.secrets)
	handle := func(e endpoint, serve api.Handler) {
		mux.Handle(e.method+" "+d.Path+e.pattern, s.HandleWithin(d.Path, s.Budgets[d.Path], e.status, serve))
	}
	for _, e := range operations {
		if d.Offers(e.op) {
			handle(e, h.core.handler(e.op))
		}
	}
	for _, rt := range h.extra {
		handle(rt.endpoint, rt.handle)
	}
}

// Status is the status a success of the family's route answers with ("POST
// /tunnel_sessions/{id}/stop", as Routes lists it); 0 for a route the family does not serve.
func (d *Descriptor) Status(route string) int {
	for _, e := range append(append([]endpoint{}, operations...), d.Binding().extra...) {
		if (e.op == 0 || d.Offers(e.op)) && e.method+" "+d.Path+e.pattern == route {
			return e.status
		}
	}
	return 0
}
