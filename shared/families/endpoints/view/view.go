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

// Endpoint types: cloud endpoints are the API's own; an ephemeral endpoint is a live tunnel,
// written and deleted with it (package tunnels), never through the endpoint family's routes.
const (
	TypeCloud     = "cloud"
	TypeEphemeral = "ephemeral"
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
	// TunnelID, SessionID and Region are an ephemeral endpoint's tunnel, its tunnel session and
	// the region of the tunnel server serving it.
	TunnelID  string `dynamodbav:"tunnel,omitempty"`
	SessionID string `dynamodbav:"tunnel_session,omitempty"`
	Region    string `dynamodbav:"region,omitempty"`
}

// EndpointJSON is the wire form of an endpoint: for a cloud endpoint the members the platform
// returns for one, no more (agent endpoints' members such as tunnel, upstream_url or principal
// are absent, not null); an ephemeral endpoint has no traffic policy and adds its region, tunnel
// and tunnel session.
type EndpointJSON struct {
	resource.UpdatedHead
	Type           string   `json:"type"`
	URL            string   `json:"url"`
	PublicURL      string   `json:"public_url"`
	Proto          string   `json:"proto"`
	Hostport       string   `json:"hostport"`
	Region         string   `json:"region,omitempty"`
	Bindings       []string `json:"bindings"`
	PoolingEnabled bool     `json:"pooling_enabled"`
	// TrafficPolicy is a cloud endpoint's policy; nil (absent) for an ephemeral one.
	TrafficPolicy *string `json:"traffic_policy,omitempty"`
	// Domain is the account's reserved domain the URL is on; omitted when there is none.
	Domain *api.Ref `json:"domain,omitempty"`
	// TCPAddr is the account's reserved address a tcp URL is on; omitted when there is none.
	TCPAddr *api.Ref `json:"tcp_addr,omitempty"`
	// Tunnel and TunnelSession are an ephemeral endpoint's tunnel and its session.
	Tunnel        *api.Ref `json:"tunnel,omitempty"`
	TunnelSession *api.Ref `json:"tunnel_session,omitempty"`
}

// Render returns an endpoint as GET /endpoints/{id} returns it on r's host.
func Render(r *api.Request, it *EndpointItem) EndpointJSON {
	u, _ := ParseURL(it.URL)
	out := EndpointJSON{UpdatedHead: resource.NewHead(r, Path, &it.Meta, it.Described).Updated(it.UpdatedAt),
		Type: it.Type, URL: it.URL, PublicURL: it.URL, Proto: u.Scheme,
		Hostport: u.HostPort(), Region: it.Region, Bindings: slices.Clone(it.Bindings), PoolingEnabled: it.PoolingEnabled,
	}
	if it.Type == TypeEphemeral {
		out.Tunnel = resource.Ref(r, "/tunnels", it.TunnelID)
		out.TunnelSession = resource.Ref(r, "/tunnel_sessions", it.SessionID)
	} else {
		out.TrafficPolicy = &it.TrafficPolicy
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

// URLRelease frees the account's guard of a stored cloud endpoint's URL (the endpoint family's
// resource.Descriptor.Release); an ephemeral endpoint holds none. It is here, not in package endpoints, so that the operator's
// erasure, which calls it, does not link traffic policy validation (cel-go).
type URLRelease struct{}

// Release implements resource.Releaser.
func (URLRelease) Release(_ context.Context, _ *store.DB, it store.Item, tx *store.Tx) error {
	a := store.Attrs{Item: it}
	if a.String("type") != TypeEphemeral {
		resource.Free(tx, a.String("account"), URLGuardKey(a.String("account"), a.String("url")))
	}
	return a.Err()
}
