package resource

import (
	"context"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/store"
)

// Descriptor is what a family's API is, written once: its path, id prefix, list key, event
// kinds, operations, how it is served and what its resources hold outside their account. The
// routes, the local server, what shared/app/gen writes from it (the Lambda mains, the function
// in template.yaml with its settings, role and routes, audit.AuditKinds), the operator's
// erasure, the template checks, the conformance suite and the sample event tests all read it, so
// adding a family cannot drift between them. How it is deployed (the Lambda serving it, its
// memory and timeout) is shared/app's.
type Descriptor struct {
	// Path is the collection path ("/api_keys").
	Path string
	// Prefix is the id prefix (ids.APIKey), unique among the families: its resources are the
	// account's collection of it (store.Collection), which an erasure deletes.
	Prefix string
	// ListKey is the name of the list response's array ("keys").
	ListKey string
	// EventKind is the audit event kind ("api_key"): its events are <kind>_created.v0,
	// <kind>_updated.v0 and <kind>_deleted.v0, those of the operations it serves.
	EventKind string
	// PartEventKinds are the audit event kinds of the parts kept inside the family's items
	// that routes of its Binding create, update and delete, each recording all three verbs
	// (an HTTPS edge's routes: "https_edge_route"). With EventKind and the operations served
	// they are what shared/app/gen writes into audit.AuditKinds.
	PartEventKinds []string
	// Reported are the verbs of the events recorded for the family's resources by what reports
	// them rather than by the five operations (a tunnel session a tunnel server reported, its
	// state changed by a route, ended by a heartbeat or the sweep); shared/app/gen adds them to
	// audit.AuditKinds with those of the operations served.
	Reported audit.Verbs
	// Filter enables the list's filter parameter.
	Filter bool
	// Reads are the settings the family's answers depend on beyond every function's
	// (config.DomainSettings: the hostnames and addresses it hands out): only a function serving
	// a family that names a section parses it at start, and links its parser.
	Reads []config.Section
	// Operations are the operations of the five that the family serves (OpCreate|OpGet);
	// zero is all five. A request for one it lacks is answered as an unknown route is, and
	// its hooks implement Updater exactly when it serves OpUpdate.
	Operations Operation
	// Binding returns how the family is served: its hooks and any routes beyond the five
	// operations, as Bind declares them (func() resource.Binding { return resource.Bind(…) }),
	// built when the family is registered rather than when its package is initialised.
	Binding func() Binding
	// Release, for a family whose stored resources hold items outside their account's
	// partitions (uniqueness guards, tokens, certificate due entries and jobs), adds to tx the
	// writes that free what a stored item holds, so that erasing the account (package operator)
	// deletes them with it (Free); nil when they hold none. Only the operator's function calls
	// it.
	Release Releaser
}

// Operation is one of the five operations a family may serve, as a set of flags.
type Operation uint8

// The five operations.
const (
	OpCreate Operation = 1 << iota
	OpList
	OpGet
	OpUpdate
	OpDelete
	// AllOperations is the five: what a Descriptor whose Operations is zero serves.
	AllOperations = OpCreate | OpList | OpGet | OpUpdate | OpDelete
)

// Offers reports whether the family serves op.
func (d *Descriptor) Offers(op Operation) bool {
	if d.Operations == 0 {
		return true
	}
	return d.Operations&op != 0
}

// URI is the absolute URL on r's host of the resource id of the family whose Path is path.
func URI(r *api.Request, path, id string) string { return r.URI(path + "/" + id) }

// Secrets are what a family's hooks do with secrets, as a set of flags: its Binding declares
// them (Binding.Keeping). The family's kit seals and opens only what they say; shared/app/gen
// derives its function's KMS grants and KMS client from them.
type Secrets uint8

// What a family's hooks may do with secrets.
const (
	// Seals is sealing secrets: a token shown once, a private key.
	Seals Secrets = 1 << iota
	// Opens is opening sealed ones: a CA key to sign with, a response to replay.
	Opens
)

// Secrets reports what the family's hooks seal and open.
func (d *Descriptor) Secrets() Secrets { return d.Binding().secrets }

// Ref is the wire reference to the resource id of the family whose Path is path, as other
// resources show it.
func Ref(r *api.Request, path, id string) *api.Ref {
	return &api.Ref{ID: id, URI: URI(r, path, id)}
}

// Hooks are a family's own rules on top of the generic operations. A family is a named type
// implementing them (usually embedding *Family for its descriptor and kit); each method can be
// called in a unit test without a table.
type Hooks[P store.Resource] interface {
	// Render returns the item as GET returns it.
	Render(r *api.Request, it P) any
	// Create fills a new item (its Meta already set) from the request body and adds the writes
	// it implies; it runs once per transaction attempt. It may return the create response when
	// that differs from Render (a secret shown once); nil means Render.
	Create(ctx context.Context, r *api.Request, it P, m *Mutation) (any, error)
}

// Updater is implemented by the hooks of every family that serves OpUpdate, and only by them.
type Updater[P store.Resource] interface {
	// Update applies the PATCH body to the current item.
	Update(ctx context.Context, r *api.Request, it P, m *Mutation) error
}

// Preparer is implemented by families with work that must run once per create request, before
// any transaction is built, such as generating a key pair or signing. Each transaction attempt's
// Create starts from a copy of the prepared item. The Prepare of a family that keeps secrets
// (Binding.Keeping) runs only once the caller is verified, checked against the account's IP
// restriction and admitted by the rate limit (one read of the caller's items first): a refused
// caller never spends a key generation, a KMS call or a signature. Any other family's Prepare
// must be cheap, as it runs before the caller is verified.
type Preparer[P store.Resource] interface {
	Prepare(ctx context.Context, r *api.Request, it P) error
}

// Prepared is embedded by the hooks of families whose Prepare builds the whole item: their
// Create adds nothing.
type Prepared[P store.Resource] struct{}

// Create adds nothing to the item Prepare built.
func (Prepared[P]) Create(ctx context.Context, r *api.Request, it P, m *Mutation) (any, error) {
	return nil, nil
}

// Deleter is implemented by families whose deletion adds writes (a token item, a parent's
// counter) or may be refused.
type Deleter[P store.Resource] interface {
	Delete(ctx context.Context, r *api.Request, it P, m *Mutation) error
}

// UpdateReader is implemented by families whose update reads items its request body names
// (the policies a restriction is set to, the reserved domain a new URL is on): a PATCH reads
// them in the same round trip as the item and the caller's items, and the Update hook gets them
// through Mutation.GetMany instead of reading again. UpdateReads returns the keys for a PATCH
// by a caller of account, nothing for a body it cannot read keys from (the Update hook refuses
// such a body itself).
type UpdateReader interface {
	UpdateReads(r *api.Request, account string) []store.Key
}

// Joiner is implemented by families whose wire form shows, beside each item, items of another
// collection of the account that change without it (a tunnel group backend's live tunnels): get
// and list query that collection (only the attributes Joined names) in parallel with their own
// read, once per request, nothing returned unless the caller is verified, and answer with
// RenderJoined. What a mutation renders (its response and event) is Render, without them.
type Joiner[P store.Resource] interface {
	// Joined is the id prefix of the joined collection and the attributes read of its items.
	Joined() (prefix string, attrs []string)
	RenderJoined(r *api.Request, it P, joined []store.Item) any
}

// Referenceable is implemented by kinds that other resources reference (Mutation.Reference):
// deleting an item still referenced is refused with InUse, decided in the delete's transaction.
type Referenceable interface {
	InUse() *api.Error
}

// Head is the members that open most resources' wire form, in the platform's order: id, uri,
// created_at, then description and metadata (omitted when empty). A family's wire type embeds
// it first and fills it with NewHead.
type Head struct {
	ID        string `json:"id"`
	URI       string `json:"uri"`
	CreatedAt string `json:"created_at"`
	DescribedJSON
}

// NewHead returns the wire head of the item with meta m and text t of the family whose Path is
// path, its uri on r's host.
func NewHead(r *api.Request, path string, m *store.Meta, t Described) Head {
	return Head{ID: m.ID, URI: URI(r, path, m.ID), CreatedAt: api.Timestamp(m.CreatedAt), DescribedJSON: t.Rendered()}
}

// UpdatedHead is Head with updated_at after created_at, for the resources whose wire form
// carries it.
type UpdatedHead struct {
	ID        string `json:"id"`
	URI       string `json:"uri"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
	DescribedJSON
}

// Updated returns h with updatedAt (Unix seconds) as its updated_at.
func (h Head) Updated(updatedAt int64) UpdatedHead {
	return UpdatedHead{ID: h.ID, URI: h.URI, CreatedAt: h.CreatedAt, UpdatedAt: api.Timestamp(updatedAt), DescribedJSON: h.DescribedJSON}
}

// Described is the free text every resource carries, stored on its item; its checks live here
// once.
type Described struct {
	Description string `dynamodbav:"description"`
	Metadata    string `dynamodbav:"metadata"`
}

// DescribedJSON is the wire form of Described, embedded in a family's wire type so that every
// family renders it alike: the platform omits description and metadata when they are empty.
type DescribedJSON struct {
	Description string `json:"description,omitempty"`
	Metadata    string `json:"metadata,omitempty"`
}

// Rendered returns d's wire form.
func (d Described) Rendered() DescribedJSON { return DescribedJSON(d) }

// SetText checks optional description and metadata values against their byte limits (codes are
// the family's error codes for each) and sets those given.
func (d *Described) SetText(codes api.TextCodes, t api.Text) error {
	if err := api.CheckText(codes, t); err != nil {
		return err
	}
	api.Set(&d.Description, t.Description)
	api.Set(&d.Metadata, t.Metadata)
	return nil
}

// DecodeCreate decodes a create body into dst and sets the description and metadata it
// carries, checked against their byte limits (codes are the family's error codes).
func (d *Described) DecodeCreate(r *api.Request, codes api.TextCodes, dst api.Body) error {
	if err := api.Decode(r, dst); err != nil {
		return err
	}
	return d.SetText(codes, dst.TextPart())
}

// DecodePatch decodes a PATCH body into dst, refuses one that supplies none of its members
// (codes.DecodePatch), and sets the description and metadata it carries.
func (d *Described) DecodePatch(r *api.Request, codes api.TextCodes, dst api.Body) error {
	if err := codes.DecodePatch(r, dst); err != nil {
		return err
	}
	return d.SetText(codes, dst.TextPart())
}

// UpdateText applies a PATCH body that may change only description and metadata, for families
// with no other mutable member.
func (d *Described) UpdateText(r *api.Request, codes api.TextCodes) error {
	return d.DecodePatch(r, codes, &api.Text{})
}
