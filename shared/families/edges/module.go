package edges

import (
	"bytes"
	"context"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/resource"
)

// Kind is one module kind, written once and attached to every item type that has it (TLS and
// TCP edges, HTTPS edges, HTTPS edge routes). M is its request (mutate) form, decoded strictly;
// S its stored form, one attribute of the item holding it (nil when absent); J its response form.
// Its functions check a supplied module (Check, once per request, before any transaction), list
// the ids the stored module references (Refs, with Missing the refusal for one that does not
// exist) and render it (Render). The kinds here are BackendModule, IPRestrictionModule,
// MutualTLSModule, TLSTerminationModule and TrafficPolicyModule.
//
// Modules are a machinery of their own beside package resource's, not a second way to build a
// family: resource's unit is a family (an item kind with its five operations), a module's is a
// member inside an item of several kinds (TLS, TCP and HTTPS edges, HTTPS edge routes), with its
// own sub-routes, references and rules, which a family's hooks apply in their Create, Update and
// Delete.
type Kind[M, S, J any] struct {
	// Name is the module's member in create and update bodies and in responses, and the last
	// segment of its sub-route.
	Name string
	// Check validates a supplied module and returns its stored form. Errors name fields under
	// field (Field(field, "backend_id")). It runs once per request, before any transaction.
	Check func(ctx context.Context, field string, in *M) (*S, error)
	// Refs lists the resources the stored module references, when it references any: each is
	// counted on the referenced item while the module is stored (resource.Mutation.Reference),
	// so it cannot be deleted under the module, and a module cannot be stored pointing at one
	// being deleted.
	Refs func(s *S) []string
	// Missing is the refusal for a referenced id that does not exist in the account, naming the
	// member under field that holds it.
	Missing func(field, id string) error
	// Render returns the response form.
	Render func(r *api.Request, s *S) *J
	// NeedsTermination marks modules that work on the decrypted traffic: an item whose TLS is
	// terminated upstream refuses them (TerminationRule).
	NeedsTermination bool
}

// Field is the path of member name under field ("" for a top-level member).
func Field(field, name string) string {
	if field == "" {
		return name
	}
	return field + "." + name
}

// Module is a Kind attached to the item type H that holds it (Attach). Its methods are the
// machinery's; families only list modules in a Set.
type Module[H any] interface {
	// Name is the module kind's name.
	Name() string
	// Present reports whether h holds the module.
	Present(h *H) bool
	// Render returns h's module in response form, a nil pointer (JSON null) when absent.
	Render(r *api.Request, h *H) any

	needsTermination() bool
	// parse decodes body strictly as the member wrap of an object ("" for the whole body) and
	// checks it; the result is the stored form for set.
	parse(ctx context.Context, r *api.Request, wrap string, body []byte) (any, error)
	set(h *H, stored any)
	refs(h *H) []string
	missing(field, id string) error
}

// Attach binds kind to the item type H; at returns where H stores the module.
func Attach[H, M, S, J any](kind *Kind[M, S, J], at func(h *H) **S) Module[H] {
	return &attached[H, M, S, J]{kind: kind, at: at}
}

type attached[H, M, S, J any] struct {
	kind *Kind[M, S, J]
	at   func(h *H) **S
}

func (a *attached[H, M, S, J]) Name() string           { return a.kind.Name }
func (a *attached[H, M, S, J]) Present(h *H) bool      { return *a.at(h) != nil }
func (a *attached[H, M, S, J]) needsTermination() bool { return a.kind.NeedsTermination }

func (a *attached[H, M, S, J]) Render(r *api.Request, h *H) any {
	s := *a.at(h)
	if s == nil {
		return (*J)(nil)
	}
	return a.kind.Render(r, s)
}

func (a *attached[H, M, S, J]) parse(ctx context.Context, r *api.Request, wrap string, body []byte) (any, error) {
	in, err := decodeAs[M](r, wrap, body)
	if err != nil {
		return nil, err
	}
	if in == nil {
		return nil, api.Invalid(wrap, "%s must be an object", wrap)
	}
	return a.kind.Check(ctx, wrap, in)
}

func (a *attached[H, M, S, J]) set(h *H, stored any) {
	s, _ := stored.(*S)
	*a.at(h) = s
}

func (a *attached[H, M, S, J]) refs(h *H) []string {
	s := *a.at(h)
	if s == nil || a.kind.Refs == nil {
		return nil
	}
	return a.kind.Refs(s)
}

func (a *attached[H, M, S, J]) missing(field, id string) error { return a.kind.Missing(field, id) }

// decodeAs decodes body strictly into a new M: the whole body when wrap is "", else the
// member wrap of the object body, through a struct type {<wrap>: *M} so that errors name nested
// members with their full path ("backend.backend_id"). With r, the body is the
// request's own and path ids repeated in it are dropped (api.Decode).
func decodeAs[M any](r *api.Request, wrap string, body []byte) (*M, error) {
	if wrap == "" {
		in := new(M)
		if err := decodeBody(r, body, in); err != nil {
			return nil, err
		}
		return in, nil
	}
	t := reflect.StructOf([]reflect.StructField{{
		Name: "V", Type: reflect.TypeFor[*M](), Tag: reflect.StructTag(`json:"` + wrap + `"`),
	}})
	v := reflect.New(t)
	if err := decodeBody(r, body, v.Interface()); err != nil {
		return nil, err
	}
	return v.Elem().Field(0).Interface().(*M), nil
}

func decodeBody(r *api.Request, body []byte, dst any) error {
	if r != nil {
		return api.Decode(r, dst)
	}
	return api.DecodeBytes(body, dst)
}

// Supplied collects the members of a create or update body that the family's own body struct
// does not name: a body struct embeds it as `json:",embed"`, and Set.Parse reads the modules
// from it (any other name is an unknown field, 214); Change.Apply stores them and runs the set's
// rules. A module supplied in a create or update body replaces the stored one entirely; an
// omitted (or null) module is unchanged; a module is removed only by its own DELETE
// (ModuleRoutes).
type Supplied map[string]jsontext.Value

// Set is the modules of one item type, in the order they are rendered and checked.
//
// An item type holds modules as pointer members, one per kind (nil: absent), stored as
// attributes of the item itself: reading the item reads every module, so a GET with all its
// modules is the one consistent BatchGetItem that also verifies the caller. Attach binds a kind
// to the member that holds it; NewSet lists an item type's modules in response order, and
// Set.Rule adds rules between them (TerminationRule: with TLS terminated upstream, modules that
// need it terminated at the edge, such as mutual TLS, are refused with 7032). To declare a
// module on a new item type:
//
//	backend := edges.Attach(edges.BackendModule, func(it *RouteItem) **edges.Backend { return &it.Backend })
//	modules := edges.NewSet(backend, …)
//	// among the family's resource.Bind routes: PUT/GET/DELETE /{edge_id}/routes/{id}/<name>
//	edges.ModuleRoutes(modules, "/{edge_id}/routes/{id}", func(f F) edges.Holder[RouteItem] { … })
//	// in the wire form: Backend: backend.Render(r, it) (a nil *BackendJSON, JSON null, when absent)
type Set[H any] struct {
	modules []Module[H]
	// rules run on the state about to be stored after every change of the modules (create,
	// update, module PUT), for rules between modules.
	rules []func(s *Set[H], h *H) error
}

// NewSet lists the modules an item type holds.
func NewSet[H any](modules ...Module[H]) *Set[H] { return &Set[H]{modules: modules} }

// Rule adds a rule between the set's modules, checked on the state about to be stored after
// every change (TerminationRule is one).
func (s *Set[H]) Rule(rule func(s *Set[H], h *H) error) *Set[H] {
	s.rules = append(s.rules, rule)
	return s
}

// Modules returns the set's modules in order.
func (s *Set[H]) Modules() []Module[H] { return slices.Clone(s.modules) }

// Change is the modules a body supplies, checked and ready to be stored.
type Change[H any] struct {
	set    *Set[H]
	values map[string]any
}

// Parse checks the modules supplied in a create or update body (members named like a module;
// null means not supplied) and returns them as a Change. A member no module is named after is
// an unknown field (214).
func (s *Set[H]) Parse(ctx context.Context, supplied Supplied) (Change[H], error) {
	c := Change[H]{set: s, values: map[string]any{}}
	names := make([]string, 0, len(supplied))
	for name := range supplied {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		mod := s.module(name)
		if mod == nil {
			return c, api.BadRequest(api.CodeUnknownField, name, "unknown field %s in the request body", api.Describe(name))
		}
		raw := supplied[name]
		if raw.Kind() == 'n' {
			continue
		}
		var b bytes.Buffer
		b.WriteString(`{` + strconv.Quote(name) + `:`)
		b.Write(raw)
		b.WriteString(`}`)
		v, err := mod.parse(ctx, nil, name, b.Bytes())
		if err != nil {
			return c, err
		}
		c.values[name] = v
	}
	return c, nil
}

// Empty reports whether the change supplies no module.
func (c Change[H]) Empty() bool { return len(c.values) == 0 }

// Apply stores the change's modules on h, replacing those it supplies and leaving the others,
// then checks the set's rules on the result.
func (c Change[H]) Apply(h *H) error {
	for _, mod := range c.set.modules {
		if v, ok := c.values[mod.Name()]; ok {
			mod.set(h, v)
		}
	}
	return c.set.Check(h)
}

// Check runs the set's rules on h.
func (s *Set[H]) Check(h *H) error {
	for _, rule := range s.rules {
		if err := rule(s, h); err != nil {
			return err
		}
	}
	return nil
}

func (s *Set[H]) module(name string) Module[H] {
	for _, m := range s.modules {
		if m.Name() == name {
			return m
		}
	}
	return nil
}

// Claim is what an item holds on other items while it is stored: references counted on them.
// Refs maps each referenced id to the refusal for it being missing.
type Claim struct {
	Refs map[string]error
}

// Reference adds a reference to id; missing is the refusal when it does not exist.
func (c *Claim) Reference(id string, missing error) {
	if c.Refs == nil {
		c.Refs = map[string]error{}
	}
	if _, ok := c.Refs[id]; !ok {
		c.Refs[id] = missing
	}
}

// Claim adds the references of h's modules to c; their refusals name fields as the module's
// members in a create or update body.
func (s *Set[H]) Claim(c *Claim, h *H) {
	for _, mod := range s.modules {
		for _, id := range mod.refs(h) {
			c.Reference(id, mod.missing(mod.Name(), id))
		}
	}
}

// Transition adds to m the reference changes of an item going from the claim before to the
// claim after (either empty for a create or a delete): -1 on each id only before holds, +1 on
// each id only after holds, refused with the id's own error when it does not exist. An id held
// by both is left alone: it is counted already, so it cannot be deleted meanwhile.
//
// Every mutation of an item holding modules adds its Transition: through
// resource.Mutation.Reference, which conditions on the referenced item existing (a missing one
// is refused with the kind's Missing error, naming the field) and bumps its version, so a
// concurrent delete of it retries and sees the reference. Referenced kinds refuse deletion while
// referenced: backends 6502, IP policies 1420, certificate authorities 1966, reserved domains
// and addresses 446. Backends of every kind are referenced by id: the id's prefix names the
// kind's collection (backends.CheckID, backends.Ref), so existence is checked through the item
// key.
func Transition(m *resource.Mutation, before, after Claim) {
	for _, id := range slices.Sorted(maps.Keys(before.Refs)) {
		if _, kept := after.Refs[id]; !kept {
			m.Reference(id, -1, nil)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(after.Refs)) {
		if _, kept := before.Refs[id]; !kept {
			m.Reference(id, 1, after.Refs[id])
		}
	}
}

// Holder reads and changes the item holding a set's modules, named by a request's path: an
// edge at /edges/tls/{id}, a route at /edges/https/{edge_id}/routes/{id}. Edges implements it
// for edges.
type Holder[H any] interface {
	// Load reads the item; api.ErrNotFound (or the holder's own 404) when it does not exist.
	Load(ctx context.Context, r *api.Request) (*H, error)
	// Modify changes the item with change in one read-modify-write transaction that records
	// the item's updated event; change adds its further writes to m.
	Modify(ctx context.Context, r *api.Request, change func(h *H, m *resource.Mutation) error) (*H, error)
	// Claim is everything the item holds on others in the state h (Set.Claim plus its own).
	Claim(h *H) Claim
}

// ModuleRoutes are PUT, GET and DELETE <base>/<name> for each module of the set s, served on the
// holder holder returns for the family's hooks F: base is the holder's item route under the
// family's path ("/{id}"). PUT replaces the module (200 with it), GET returns it and DELETE
// removes it (204), both 404 when it is absent. A PUT body is the module's request form, or
// {"module": …} (the JavaScript client's form, its path ids dropped as everywhere); it is decoded
// and checked once, then stored in one read-modify-write transaction (Holder.Modify) that
// records the item's updated event, so every 204 is one change with its event.
func ModuleRoutes[F, H any](s *Set[H], base string, holder func(F) Holder[H]) []resource.Route[F] {
	var out []resource.Route[F]
	for _, mod := range s.modules {
		path := base + "/" + mod.Name()
		out = append(out,
			resource.Route[F]{Method: http.MethodPut, Pattern: path, Status: http.StatusOK,
				Handle: func(f F, ctx context.Context, r *api.Request) (any, error) { return s.replace(ctx, r, mod, holder(f)) }},
			resource.Route[F]{Method: http.MethodGet, Pattern: path, Status: http.StatusOK,
				Handle: func(f F, ctx context.Context, r *api.Request) (any, error) { return s.get(ctx, r, mod, holder(f)) }},
			resource.Route[F]{Method: http.MethodDelete, Pattern: path, Status: http.StatusNoContent,
				Handle: func(f F, ctx context.Context, r *api.Request) (any, error) {
					return nil, s.remove(ctx, r, mod, holder(f))
				}})
	}
	return out
}

// get serves a module GET: 404 when the module is absent.
func (s *Set[H]) get(ctx context.Context, r *api.Request, mod Module[H], holder Holder[H]) (any, error) {
	h, err := holder.Load(ctx, r)
	if err != nil {
		return nil, err
	}
	if !mod.Present(h) {
		return nil, api.ErrNotFound
	}
	return mod.Render(r, h), nil
}

// replace serves a module PUT. The body is the module's mutate form, or (as the JavaScript
// client sends it) {"module": <mutate form>} beside the path ids. It is decoded and checked
// once; each transaction attempt stores it on the item as read.
func (s *Set[H]) replace(ctx context.Context, r *api.Request, mod Module[H], holder Holder[H]) (any, error) {
	var probe struct {
		Module jsontext.Value `json:"module"`
		Rest   Supplied       `json:",embed"`
	}
	wrap := ""
	if err := api.Decode(r, &probe); err == nil && probe.Module != nil && len(probe.Rest) == 0 {
		wrap = "module"
	}
	stored, err := mod.parse(ctx, r, wrap, r.Body)
	if err != nil {
		return nil, err
	}
	h, err := holder.Modify(ctx, r, func(h *H, m *resource.Mutation) error {
		before := holder.Claim(h)
		mod.set(h, stored)
		if err := s.Check(h); err != nil {
			return err
		}
		after := holder.Claim(h)
		for _, id := range mod.refs(h) {
			after.Refs[id] = mod.missing(wrap, id) // named as this body has it
		}
		Transition(m, before, after)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return mod.Render(r, h), nil
}

// remove serves a module DELETE: a module that is absent (or that a concurrent DELETE removed
// first) is a 404, so every 204 is one committed change with its event.
func (s *Set[H]) remove(ctx context.Context, r *api.Request, mod Module[H], holder Holder[H]) error {
	_, err := holder.Modify(ctx, r, func(h *H, m *resource.Mutation) error {
		if !mod.Present(h) {
			return api.ErrNotFound
		}
		before := holder.Claim(h)
		mod.set(h, nil)
		Transition(m, before, holder.Claim(h))
		return nil
	})
	return err
}
