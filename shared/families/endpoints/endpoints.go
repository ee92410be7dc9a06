package endpoints

import (
	"context"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/families/domains"
	"tunnelapi/shared/families/endpoints/view"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/rules/trafficpolicy"
)

// CodeCloudOnly is the code for creating, updating or deleting an endpoint that is not a cloud
// endpoint.
const CodeCloudOnly = "ERR_NGROK_248"

// TypeCloud is the only endpoint type the API manages; TypeEphemeral is a live tunnel's
// endpoint, which package tunnels writes and deletes with its tunnel.
const (
	TypeCloud     = view.TypeCloud
	TypeEphemeral = view.TypeEphemeral
)

// Bindings of an endpoint.
const (
	BindingPublic     = view.BindingPublic
	BindingInternal   = view.BindingInternal
	BindingKubernetes = view.BindingKubernetes
)

var bindings = []string{BindingPublic, BindingInternal, BindingKubernetes}

// EndpointItem is a stored endpoint (package view, which renders it without the family's rules).
type EndpointItem = view.EndpointItem

// EndpointJSON is the wire form of a cloud endpoint (package view): the members the platform
// returns for one, id, uri, created_at, updated_at, type, url, public_url, proto, hostport,
// bindings, pooling_enabled, traffic_policy, domain (when the URL's host is on a reserved
// domain), tcp_addr (when it is a reserved address) and description/metadata when set. Agent
// endpoints' members (tunnel, upstream_url, principal, …) are absent rather than null.
type EndpointJSON = view.EndpointJSON

// URL is a validated, normalised endpoint URL (package view).
type URL = view.URL

// CodeInvalidURL is the endpoint family's code for an invalid URL.
const CodeInvalidURL = view.CodeInvalidURL

// ParseURL validates an endpoint URL (view.ParseURL).
func ParseURL(s string) (URL, error) { return view.ParseURL(s) }

type createBody struct {
	URL           *string `json:"url"`
	Type          *string `json:"type"`
	TrafficPolicy *string `json:"traffic_policy"`
	api.Text
	Bindings       *[]string `json:"bindings"`
	PoolingEnabled *bool     `json:"pooling_enabled"`
}

type updateBody struct {
	URL           *string `json:"url"`
	TrafficPolicy *string `json:"traffic_policy"`
	api.Text
	Bindings       *[]string `json:"bindings"`
	PoolingEnabled *bool     `json:"pooling_enabled"`
}

var textCodes = api.TextCodes{Description: api.CodeBadFieldValue, Metadata: api.CodeBadFieldValue}

// EndpointsDescriptor is the /endpoints family.
var EndpointsDescriptor = &resource.Descriptor{
	Path: view.Path, Prefix: ids.Endpoint, ListKey: "endpoints", EventKind: "endpoint", Filter: true,
	Binding: func() resource.Binding { return resource.Bind(newEndpoints) },
	Release: view.URLRelease{},
}

// Endpoints is the endpoint family's rules.
type Endpoints struct {
	*resource.Family[EndpointItem, *EndpointItem]
}

func newEndpoints(f *resource.Family[EndpointItem, *EndpointItem]) Endpoints { return Endpoints{f} }

// Render returns an endpoint as GET returns it.
func (f Endpoints) Render(r *api.Request, it *EndpointItem) any {
	return view.Render(r, it)
}

// Create fills a new cloud endpoint from the request body and claims its URL.
func (f Endpoints) Create(ctx context.Context, r *api.Request, it *EndpointItem, m *resource.Mutation) (any, error) {
	var in createBody
	if err := api.Decode(r, &in); err != nil {
		return nil, err
	}
	if in.Type != nil && *in.Type != TypeCloud {
		return nil, api.BadRequest(CodeCloudOnly, "type", "only cloud endpoints can be created through the API, not type %s", api.Describe(*in.Type))
	}
	if in.URL == nil {
		return nil, api.BadRequest(CodeInvalidURL, "url", "url is required, such as https://example.ngrok.app")
	}
	u, err := ParseURL(*in.URL)
	if err != nil {
		return nil, err
	}
	if in.TrafficPolicy == nil {
		return nil, api.Invalid("traffic_policy", "traffic_policy is required: a traffic policy document in YAML or JSON")
	}
	if err := trafficpolicy.Validate(ctx, "traffic_policy", *in.TrafficPolicy); err != nil {
		return nil, err
	}
	// A refused create discards the item, so setting the text before the checks that follow
	// changes nothing stored.
	if err := it.SetText(textCodes, in.Text); err != nil {
		return nil, err
	}
	b, err := checkBindings(u, in.Bindings)
	if err != nil {
		return nil, err
	}
	it.URL, it.Type, it.TrafficPolicy, it.Bindings = u.String(), TypeCloud, *in.TrafficPolicy, b
	api.Set(&it.PoolingEnabled, in.PoolingEnabled)
	it.PrincipalID = r.Caller().PrincipalID
	it.UpdatedAt = it.CreatedAt
	claim(m, it)
	// The reservations are looked up in what the process knows of them, which the transaction
	// asserts: warm, the create is one DynamoDB call.
	return nil, reference(ctx, domains.Known(m), m, it, u, "url")
}

// UpdateReads are the reservation guards a new URL is looked up in (its host's reserved
// domains, a tcp URL's reserved address), read with the endpoint (resource.UpdateReader).
func (Endpoints) UpdateReads(r *api.Request, _ string) []store.Key {
	var in updateBody
	if api.Decode(r, &in) == nil && in.URL != nil {
		if u, err := ParseURL(*in.URL); err == nil {
			return domains.LookupKeys(u.Host, reservedAddr(u))
		}
	}
	return nil
}

// Update applies a PATCH body to a cloud endpoint; a new URL or pooling setting moves or
// changes its URL guard.
func (f Endpoints) Update(ctx context.Context, r *api.Request, it *EndpointItem, m *resource.Mutation) error {
	if it.Type != TypeCloud {
		return api.BadRequest(CodeCloudOnly, "id", "only cloud endpoints can be updated through the API")
	}
	var in updateBody
	if err := api.DecodePatch(r, &in); err != nil {
		return err
	}
	u, err := ParseURL(it.URL)
	if err != nil {
		return err
	}
	if in.URL != nil {
		if u, err = ParseURL(*in.URL); err != nil {
			return err
		}
	}
	if in.TrafficPolicy != nil {
		if err := trafficpolicy.Validate(ctx, "traffic_policy", *in.TrafficPolicy); err != nil {
			return err
		}
	}
	// A refused update writes nothing, so setting the text before the checks that follow
	// changes nothing stored.
	if err := it.SetText(textCodes, in.Text); err != nil {
		return err
	}
	supplied := in.Bindings
	if supplied == nil && in.URL != nil {
		// A new URL keeps the binding the endpoint had, and must suit it.
		supplied = &it.Bindings
	}
	b := it.Bindings
	if supplied != nil {
		if b, err = checkBindings(u, supplied); err != nil {
			return err
		}
	}
	pooling := it.PoolingEnabled
	api.Set(&pooling, in.PoolingEnabled)
	it.Bindings = b
	moved := u.String() != it.URL
	switch {
	case moved:
		release(m, it)
		it.URL, it.PoolingEnabled = u.String(), pooling
		claim(m, it)
		if err := reference(ctx, m, m, it, u, "url"); err != nil {
			return err
		}
	case pooling != it.PoolingEnabled:
		repool(m, it, pooling)
		it.PoolingEnabled = pooling
	}
	if !moved && in.Bindings != nil && checkPublic(it, u, domains.Reservations{}, "bindings") != nil {
		// An endpoint staying on its URL comes to need a reservation only through new bindings.
		// One reserved since it was created counts: it is looked up in what the process knows,
		// which a refusal confirms with a read before it is answered.
		if err := reference(ctx, domains.Known(m), m, it, u, "bindings"); err != nil {
			return err
		}
	}
	api.Set(&it.TrafficPolicy, in.TrafficPolicy)
	it.UpdatedAt = time.Now().Unix()
	return nil
}

// Delete releases the endpoint's URL; only cloud endpoints can be deleted.
func (Endpoints) Delete(ctx context.Context, r *api.Request, it *EndpointItem, m *resource.Mutation) error {
	if it.Type != TypeCloud {
		return api.BadRequest(CodeCloudOnly, "id", "only cloud endpoints can be deleted through the API")
	}
	release(m, it)
	m.Repoint(&it.DomainID, "")
	m.Repoint(&it.AddrID, "")
	return nil
}

// checkBindings validates supplied bindings for u (at most one of public, internal and
// kubernetes; internal exactly for .internal hosts) or derives the default from the host.
func checkBindings(u URL, supplied *[]string) ([]string, error) {
	if supplied == nil || len(*supplied) == 0 {
		if u.Internal() {
			return []string{BindingInternal}, nil
		}
		return []string{BindingPublic}, nil
	}
	b := *supplied
	if len(b) > 1 {
		return nil, api.Invalid("bindings", "an endpoint has at most one binding (public, internal or kubernetes), not %d", len(b))
	}
	if !slices.Contains(bindings, b[0]) {
		return nil, api.Invalid("bindings", "binding %s is not one of public, internal or kubernetes", api.Describe(b[0]))
	}
	switch {
	case b[0] == BindingInternal && !u.Internal():
		return nil, api.BadRequest(CodeInvalidURL, "url", "an internal endpoint's URL must end in .internal, not %s", u.Host)
	case b[0] == BindingPublic && u.Internal():
		return nil, api.BadRequest(CodeInvalidURL, "url", "a .internal URL needs the internal binding, not public")
	}
	return []string{b[0]}, nil
}

// The URL guard: one item per account and URL counting the endpoints serving it (n) and whether
// they pool. A non-pooling endpoint needs the URL unused; a pooling one needs it unused or
// pooled. The guard is written in the endpoint's own transaction, so concurrent creates of the
// same URL serialise on it. It holds nothing else, so it is small (store.Tx.Small): its key
// bounded by a URL's length, a count and a flag (TestURLGuardIsSmall).
const labelURL = "url"

// guardKey is the key of the endpoint's URL guard, declared small in m.
func guardKey(m *resource.Mutation, it *EndpointItem) store.Key {
	k := view.URLGuardKey(it.AccountID, it.URL)
	m.Small(k)
	return k
}

func unused() expression.ConditionBuilder {
	return expression.Or(expression.AttributeNotExists(expression.Name("n")), expression.Name("n").Equal(expression.Value(0)))
}

func claim(m *resource.Mutation, it *EndpointItem) {
	taken := api.Invalid("url", "another endpoint of this account already serves %s; endpoints may share a URL only when every one of them has pooling_enabled", it.URL)
	if it.PoolingEnabled {
		m.Update(labelURL, guardKey(m, it), expression.Set(expression.Name("pooled"), expression.Value(true)).
			Add(expression.Name("n"), expression.Value(1)),
			expression.Or(unused(), expression.Name("pooled").Equal(expression.Value(true))))
	} else {
		m.Update(labelURL, guardKey(m, it), expression.Set(expression.Name("pooled"), expression.Value(false)).
			Set(expression.Name("n"), expression.Value(1)), unused())
	}
	m.Refuse(labelURL, taken)
}

func release(m *resource.Mutation, it *EndpointItem) {
	m.Update("url.release", guardKey(m, it), expression.Add(expression.Name("n"), expression.Value(-1)))
}

// repool switches the endpoint's pooling: off only while it is the URL's only endpoint.
func repool(m *resource.Mutation, it *EndpointItem, pooling bool) {
	if pooling {
		m.Update(labelURL, guardKey(m, it), expression.Set(expression.Name("pooled"), expression.Value(true)))
		return
	}
	m.Update(labelURL, guardKey(m, it), expression.Set(expression.Name("pooled"), expression.Value(false)),
		expression.Name("n").Equal(expression.Value(1)))
	m.Refuse(labelURL, api.Invalid("pooling_enabled", "other endpoints pool on %s; pooling cannot be turned off while they exist", it.URL))
}
