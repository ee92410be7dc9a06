package resource

import (
	"context"
	"fmt"
	"net/http"
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

// Binding is how a Descriptor's family is served: its hooks and the routes it adds to the five
// operations. Only Bind makes one.
type Binding struct {
	extra []endpoint
	// handlers builds the hooks for d on kit k and returns the handlers of the five operations
	// and then of the extra routes, in the order of Descriptor.allEndpoints.
	handlers func(d *Descriptor, k *Kit) []api.Handler
}

// endpoint is a route without its handler: its method, pattern under the family's path and
// status of a success.
type endpoint struct {
	method, pattern string
	status          int
	// op is the operation of the five it is; zero for a route a family's Binding declares.
	op Operation
}

// operations are the five operations a family may serve, in the order of core.handlers.
var operations = []endpoint{
	{http.MethodPost, "", http.StatusCreated, OpCreate},
	{http.MethodGet, "", http.StatusOK, OpList},
	{http.MethodGet, "/{id}", http.StatusOK, OpGet},
	{http.MethodPatch, "/{id}", http.StatusOK, OpUpdate},
	{http.MethodDelete, "/{id}", http.StatusNoContent, OpDelete},
}

// handlers are the five operations' handlers, in the order of operations.
func (c *core) handlers() []api.Handler {
	return []api.Handler{c.createOp, c.list, c.get, c.updateOp, c.deleteOp}
}

// Bind declares how a family is served: by its hooks type H (resource.Hooks of its item type,
// a type embedding *Family, which Wrap builds once the descriptor and kit are known), with
// routes, the routes it serves beyond the five operations. A Descriptor holds the result as its
// Binding; Register is what adds the routes to a mux.
func Bind[H Hooks[P], T any, P interface {
	*T
	store.Resource
}](routes ...Route[H]) Binding {
	extra := make([]endpoint, len(routes))
	for i, rt := range routes {
		if rt.Method == "" || !strings.HasPrefix(rt.Pattern, "/") || rt.Status == 0 || rt.Handle == nil {
			panic(fmt.Sprintf("resource: route %q %q needs a method, a pattern starting with /, a status and a handler", rt.Method, rt.Pattern))
		}
		extra[i] = endpoint{method: rt.Method, pattern: rt.Pattern, status: rt.Status}
	}
	return Binding{extra: extra, handlers: func(d *Descriptor, k *Kit) []api.Handler {
		h, c := bind[H](d, k)
		if serves := d.Offers(OpUpdate); serves != c.hooks.has(updater) {
			panic(fmt.Sprintf("resource: %s serves update %v, but its hooks implement Updater %v", d.Path, serves, c.hooks.has(updater)))
		}
		out := c.handlers()
		for _, rt := range routes {
			serve := rt.Handle
			out = append(out, func(ctx context.Context, r *api.Request) (any, error) { return serve(h, ctx, r) })
		}
		return out
	}}
}

// bind builds the family d on kit k with its hooks H (Wrap), and its operations.
func bind[H Hooks[P], T any, P interface {
	*T
	store.Resource
}](d *Descriptor, k *Kit) (H, *core) {
	f := &Family[T, P]{Descriptor: d, Kit: k}
	h := Wrap[H](f)
	f.Hooks = h
	return h, f.core()
}

// Routes lists every route of the family as "METHOD pattern" (the pattern from the root): the
// operations it serves of the five, then the routes its Binding declares, in the order Register
// adds them.
func (d *Descriptor) Routes() []string {
	var out []string
	for _, e := range d.allEndpoints(d.Binding()) {
		if d.serves(e) {
			out = append(out, e.method+" "+d.Path+e.pattern)
		}
	}
	return out
}

// allEndpoints are the five operations and the routes sv (d's Binding) declares, in the order of
// Binding.handlers.
func (d *Descriptor) allEndpoints(sv Binding) []endpoint {
	return append(append([]endpoint{}, operations...), sv.extra...)
}

// serves reports whether d serves the endpoint e: a declared route always, an operation when
// d's Operations include it.
func (d *Descriptor) serves(e endpoint) bool { return e.op == 0 || d.Offers(e.op) }

// Register adds every route of the family d (Routes) to mux, served with kit k: the one place a route is
// added to a mux. A family's kit seals only if its descriptor declares Seals and opens only if
// it declares Opens, so one that seals or opens without saying so fails its tests instead of
// its function in AWS (whose role holds only the KMS actions declared). Every request
// runs under the family's Budget (its function's timeout) unless s sets its own (Server.Budget).
func (d *Descriptor) Register(k *Kit, mux api.Mux, s *api.Server) {
	if d.Binding == nil {
		panic("resource: the descriptor of " + d.Path + " has no Binding")
	}
	sv := d.Binding()
	if k != nil && !(d.Seals && d.Opens) {
		declared := *k
		declared.Seal = seal.Restrict(k.Seal, d.Seals, d.Opens, fmt.Sprintf("%s declares Seals %v, Opens %v (its Descriptor)", d.Path, d.Seals, d.Opens))
		k = &declared
	}
	handlers := sv.handlers(d, k)
	for i, e := range d.allEndpoints(sv) {
		if d.serves(e) {
			mux.Handle(e.method+" "+d.Path+e.pattern, s.HandleWithin(d.Path, d.Budget(), e.status, handlers[i]))
		}
	}
}

// Status is the status a success of the family's route answers with ("POST
// /tunnel_sessions/{id}/stop", as Routes lists it); 0 for a route the family does not serve.
func (d *Descriptor) Status(route string) int {
	for _, e := range d.allEndpoints(d.Binding()) {
		if d.serves(e) && e.method+" "+d.Path+e.pattern == route {
			return e.status
		}
	}
	return 0
}
