package edges

import (
	"context"
	"slices"

	"tunnelapi/shared/families/domains"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// EdgeBase is the part of an edge item every edge family shares; an edge family's item embeds it
// and adds one pointer per module (nil when absent).
type EdgeBase struct {
	store.Meta
	resource.Described
	Hostports []string `dynamodbav:"hostports"`
	// Reservations maps each hostport to the reserved domain or address it is on; the edge
	// references each while it holds the hostport.
	Reservations map[string]string `dynamodbav:"reservations"`
}

// Common returns the shared part, so that the generic hooks reach it in any edge item.
func (e *EdgeBase) Common() *EdgeBase { return e }

// EdgeJSON is the wire form of the shared part, embedded in an edge family's wire type before
// its modules.
type EdgeJSON struct {
	ID string `json:"id"`
	resource.DescribedJSON
	CreatedAt string   `json:"created_at"`
	URI       string   `json:"uri"`
	Hostports []string `json:"hostports"`
}

// PolicyJSON is the member `policy` of TLS and TCP edges and HTTPS edge routes, embedded in their
// wire forms: the platform's retired policy module, which it still sends, always null.
type PolicyJSON struct {
	Policy *struct{} `json:"policy"`
}

// Item is the constraint on an edge family's item type T: *T embeds Edge.
type Item[T any] interface {
	*T
	store.Resource
	Common() *EdgeBase
}

// Codes of every edge family: description over 255 bytes 7073, metadata over 4096 bytes 7074
// (a PATCH supplying nothing is the platform's 606).
var textCodes = api.TextCodes{Description: "ERR_NGROK_7073", Metadata: "ERR_NGROK_7074"}

// Spec declares an edge family: what differs between TLS, TCP and HTTPS edges. Its descriptor's
// Binding is Spec.Binding, which makes Edges, the hooks every edge family shares, from the
// Spec. The item embeds EdgeBase (id, description, metadata, hostports and the reservation each
// is on).
type Spec[T any, P Item[T]] struct {
	// Hostports is what the family's hostports must be.
	Hostports HostportRule
	// NullWithoutHostports renders an edge without hostports with `"hostports": null`, as the
	// platform does for TLS and TCP edges (HTTPS edges send []).
	NullWithoutHostports bool
	// Modules are the modules an edge of the family holds.
	Modules *Set[T]
	// Render returns the family's wire form of it, given the shared part and each module's
	// response form (Module.Render).
	Render func(r *api.Request, it P, common EdgeJSON) any
	// Delete, when set, adds the further writes of an edge's deletion (an HTTPS edge's routes)
	// or refuses it.
	Delete func(ctx context.Context, r *api.Request, it P, m *resource.Mutation) error
}

// Binding is how an edge family of spec is served: its hooks (Edges) and, beyond the five
// operations, the sub-routes of each of its modules (ModuleRoutes) and the extra routes given.
func (spec *Spec[T, P]) Binding(extra ...resource.Route[*Edges[T, P]]) resource.Binding {
	modules := ModuleRoutes(spec.Modules, "/{id}", func(f *Edges[T, P]) Holder[T] { return f })
	return resource.Bind(spec.newEdges, append(modules, extra...)...)
}

// newEdges makes the hooks of spec's family, with its hostport rule and the configuration.
func (spec *Spec[T, P]) newEdges(f *resource.Family[T, P]) *Edges[T, P] {
	return &Edges[T, P]{Family: f, spec: spec,
		hostports: hostports{HostportRule: spec.Hostports, config: domains.ConfigOf(f.Kit)}}
}

// Edges is the hooks every edge family shares (resource.Hooks of its item type), and the
// Holder of its modules.
type Edges[T any, P Item[T]] struct {
	*resource.Family[T, P]
	spec      *Spec[T, P]
	hostports hostports
}

// edgeBody is the create and update body of every edge family: its modules are the members
// Supplied collects.
type edgeBody struct {
	api.Text
	Hostports *[]string `json:"hostports"`
	Modules   Supplied  `json:",embed"`
}

// Render returns an edge as GET returns it.
func (f *Edges[T, P]) Render(r *api.Request, it P) any {
	e := it.Common()
	hostports := slices.Clone(api.Slice(e.Hostports))
	if len(hostports) == 0 && f.spec.NullWithoutHostports {
		hostports = nil
	}
	return f.spec.Render(r, it, EdgeJSON{ID: e.ID, DescribedJSON: e.Described.Rendered(),
		CreatedAt: api.Timestamp(e.CreatedAt), URI: resource.URI(r, f.Path, e.ID), Hostports: hostports})
}

// Prepare checks the create body once per request, modules and the form of its hostports
// included, and fills the item; who holds the hostports is the Create's to find out.
func (f *Edges[T, P]) Prepare(ctx context.Context, r *api.Request, it P) error {
	var in edgeBody
	if err := api.Decode(r, &in); err != nil {
		return err
	}
	e := it.Common()
	e.Hostports, e.Reservations = []string{}, map[string]string{}
	return f.apply(ctx, r, it, in, nil)
}

// UpdateReads returns the guards a PATCH's hostports are read from, so that they are read with
// the edge and the caller's items in one round trip (resource.UpdateReader).
func (f *Edges[T, P]) UpdateReads(r *api.Request, account string) []store.Key {
	var in edgeBody
	if api.Decode(r, &in) != nil || in.Hostports == nil {
		return nil
	}
	hps, err := f.hostports.normalise(*in.Hostports)
	if err != nil {
		return nil
	}
	return domains.HolderKeys(hps)
}

// Create claims the edge's hostports and references what its hostports and modules are on. Who
// holds each hostport is what the process knows of the reservations' guards, which the
// transaction asserts (domains.Known): warm, the create is one DynamoDB call, and a hostport
// refused is refused on a read of its guards.
func (f *Edges[T, P]) Create(ctx context.Context, r *api.Request, it P, m *resource.Mutation) (any, error) {
	e := it.Common()
	reservations, err := f.hostports.reserved(ctx, domains.Known(m), e.AccountID, e.Hostports)
	if err != nil {
		return nil, err
	}
	e.Reservations = reservations
	// The rules between modules (an HTTPS edge's budget) count the references to reservations
	// too, known only now.
	if err := f.spec.Modules.Check((*T)(it)); err != nil {
		return nil, err
	}
	moveHostports(m, e, nil, e.Hostports)
	Transition(m, Claim{}, f.Claim((*T)(it)))
	return nil, nil
}

// Update applies a PATCH body: supplied members replace, modules included; omitted ones stay.
func (f *Edges[T, P]) Update(ctx context.Context, r *api.Request, it P, m *resource.Mutation) error {
	var in edgeBody
	if err := api.Decode(r, &in); err != nil {
		return err
	}
	if in.Description == nil && in.Metadata == nil && in.Hostports == nil && len(in.Modules) == 0 {
		names := []string{"description", "metadata", "hostports"}
		for _, mod := range f.spec.Modules.modules {
			names = append(names, mod.Name())
		}
		return api.EmptyUpdate(names...)
	}
	before := f.Claim((*T)(it))
	hostportsBefore := slices.Clone(it.Common().Hostports)
	if err := f.apply(ctx, r, it, in, m); err != nil {
		return err
	}
	moveHostports(m, it.Common(), hostportsBefore, it.Common().Hostports)
	Transition(m, before, f.Claim((*T)(it)))
	return nil
}

// apply checks a create or update body and applies it to it, reading who holds its hostports
// through db (nil: only their form is checked, the create's transaction finds who holds them).
func (f *Edges[T, P]) apply(ctx context.Context, r *api.Request, it P, in edgeBody, db domains.DB) error {
	e := it.Common()
	if err := e.SetText(textCodes, in.Text); err != nil {
		return err
	}
	change, err := f.spec.Modules.Parse(ctx, in.Modules)
	if err != nil {
		return err
	}
	switch {
	case in.Hostports != nil && db == nil:
		if e.Hostports, err = f.hostports.normalise(*in.Hostports); err != nil {
			return err
		}
	case in.Hostports != nil:
		if e.Hostports, e.Reservations, err = f.hostports.resolve(ctx, db, r.Caller().AccountID, *in.Hostports); err != nil {
			return err
		}
	}
	return change.Apply((*T)(it))
}

// Delete releases the edge's hostports and its references, with the family's own writes.
func (f *Edges[T, P]) Delete(ctx context.Context, r *api.Request, it P, m *resource.Mutation) error {
	if f.spec.Delete != nil {
		if err := f.spec.Delete(ctx, r, it, m); err != nil {
			return err
		}
	}
	moveHostports(m, it.Common(), it.Common().Hostports, nil)
	Transition(m, f.Claim((*T)(it)), Claim{})
	return nil
}

// Claim is everything the edge h holds on others: the reservations its hostports are on and
// what its modules reference.
func (f *Edges[T, P]) Claim(h *T) Claim {
	var c Claim
	e := P(h).Common()
	for _, hp := range e.Hostports {
		if id := e.Reservations[hp]; id != "" {
			c.Reference(id, f.hostports.notReserved(hp))
		}
	}
	f.spec.Modules.Claim(&c, h)
	return c
}

// Load reads the edge named by the request's path.
func (f *Edges[T, P]) Load(ctx context.Context, r *api.Request) (*T, error) {
	it, err := f.Family.Load(ctx, r, r.PathValue("id"), nil)
	return (*T)(it), err
}

// Modify changes the edge named by the request's path in one transaction, recording its
// updated event.
func (f *Edges[T, P]) Modify(ctx context.Context, r *api.Request, change func(h *T, m *resource.Mutation) error) (*T, error) {
	it, err := f.Family.Modify(ctx, r, r.PathValue("id"), nil, func(it P, m *resource.Mutation) error {
		return change((*T)(it), m)
	})
	return (*T)(it), err
}
