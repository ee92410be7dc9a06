// Package view is an endpoint as the table stores it and as the wire shows it, without the
// endpoint family's rules: families that list endpoints (a Kubernetes operator's bound
// endpoints) render them through it without linking traffic policy validation (cel-go) into
// their functions.
package view

import (
	"context"
	"slices"

	"tunnelapi/shared/families/domains"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// Path is the endpoint family's collection path.
const Path = "/endpoints"

// Bindings of an endpoint.
const (
	BindingPublic     = "public"
	BindingInternal   = "internal"
	BindingKubernetes = "kubernetes"
)

// EndpointItem is a stored endpoint.
type EndpointItem struct {
	store.Meta
	URL           string `dynamodbav:"url"`
	Type          string `dynamodbav:"type"`
	TrafficPolicy string `dynamodbav:"traffic_policy"`
	resource.Described
	Bindings       []string `dynamodbav:"bindings"`
	PoolingEnabled bool     `dynamodbav:"pooling"`
	PrincipalID    string   `dynamodbav:"principal"`
	UpdatedAt      int64    `dynamodbav:"updated"`
	// DomainID is the account's reserved domain the URL's host is on, referenced by the
	// endpoint (so the domain cannot be deleted under it); "" when there is none.
	DomainID string `dynamodbav:"domain_id,omitempty"`
	// AddrID is the account's reserved address a tcp URL's host:port is, referenced by the
	// endpoint like DomainID; "" when there is none.
	AddrID string `dynamodbav:"addr_id,omitempty"`
}

// EndpointJSON is the wire form of a cloud endpoint: the members the platform returns for one, no
// more (agent endpoints' members such as tunnel, upstream_url or principal are absent, not null).
type EndpointJSON struct {
	resource.UpdatedHead
	Type           string   `json:"type"`
	URL            string   `json:"url"`
	PublicURL      string   `json:"public_url"`
	Proto          string   `json:"proto"`
	Hostport       string   `json:"hostport"`
	Bindings       []string `json:"bindings"`
	PoolingEnabled bool     `json:"pooling_enabled"`
	TrafficPolicy  string   `json:"traffic_policy"`
	// Domain is the account's reserved domain the URL is on; omitted when there is none.
	Domain *api.Ref `json:"domain,omitempty"`
	// TCPAddr is the account's reserved address a tcp URL is on; omitted when there is none.
	TCPAddr *api.Ref `json:"tcp_addr,omitempty"`
}

// Render returns an endpoint as GET /endpoints/{id} returns it on r's host.
func Render(r *api.Request, it *EndpointItem) EndpointJSON {
	u, _ := ParseURL(it.URL)
	out := EndpointJSON{UpdatedHead: resource.NewHead(r, Path, &it.Meta, it.Described).Updated(it.UpdatedAt),
		Type: it.Type, URL: it.URL, PublicURL: it.URL, Proto: u.Scheme,
		Hostport: u.HostPort(), Bindings: slices.Clone(it.Bindings), PoolingEnabled: it.PoolingEnabled, TrafficPolicy: it.TrafficPolicy,
	}
	if it.DomainID != "" {
		out.Domain = resource.Ref(r, domains.ReservedDomainsPath, it.DomainID)
	}
	if it.AddrID != "" {
		out.TCPAddr = resource.Ref(r, domains.ReservedAddrsPath, it.AddrID)
	}
	return out
}

// URLGuardKey is the key of account's guard of an endpoint URL: the endpoints serving url in
// account hold it together (pooling) or one alone.
func URLGuardKey(account, url string) store.Key {
	return store.GuardKey("endpoint_url", account+"|"+url)
}

// URLRelease frees the account's guard of a stored endpoint's URL (the endpoint family's
// resource.Descriptor.Release). It is here, not in package endpoints, so that the operator's
// erasure, which calls it, does not link traffic policy validation (cel-go).
type URLRelease struct{}

// Release implements resource.Releaser.
func (URLRelease) Release(_ context.Context, _ *store.DB, it store.Item, tx *store.Tx) error {
	a := store.Attrs{Item: it}
	resource.Free(tx, a.String("account"), URLGuardKey(a.String("account"), a.String("url")))
	return a.Err()
}
