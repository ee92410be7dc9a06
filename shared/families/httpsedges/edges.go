package httpsedges

import (
	"context"

	"tunnelapi/shared/families/edges"
	"tunnelapi/shared/families/edges/hostport"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
)

// edgesPath is the family's collection path.
const edgesPath = "/edges/https"

// CodeTerminateAt refuses terminate_at on an HTTPS edge: it always terminates TLS at the edge.
const CodeTerminateAt = "ERR_NGROK_7109"

// HTTPSEdgeItem is a stored HTTPS edge: its hostports, its two modules and its routes, oldest
// first. The routes live in the edge's item, so that:
//   - GET of an edge, its routes included, is one round trip, and a list page renders every
//     edge's routes with no further read;
//   - a route's match is unique on its edge (7126) by construction: every route write is a
//     read-modify-write of the edge's item under its version;
//   - deleting an edge deletes its routes and their module state in the same single-item
//     delete, in the transaction that releases its hostports and drops its references: there is
//     no moment, and no failure, at which a route outlives its edge.
//
// The cost is bounded size: an edge holds at most MaxRoutes routes and MaxItemBytes of routes
// and modules, renders (as its events carry it) as at most MaxRenderedBytes, and the distinct
// resources it references (hostports' reserved domains, mutual TLS authorities, routes'
// backends and IP policies) plus its hostport guards must fit in the one transaction that
// deletes it. Every write that would cross a limit is refused with ERR_NGROK_7128 and changes
// nothing, so a stored edge can always be deleted atomically. References are counted once per
// edge, whichever of its routes holds them. Routes are served by the edge's function: they are
// parts of its item, read and written by the same code with the same permissions.
type HTTPSEdgeItem struct {
	edges.EdgeBase
	MutualTLS      *edges.MutualTLS      `dynamodbav:"mutual_tls,omitempty"`
	TLSTermination *edges.TLSTermination `dynamodbav:"tls_termination,omitempty"`
	Routes         []*Route              `dynamodbav:"routes"`
}

// HTTPSEdgeJSON is the wire form of an HTTPS edge.
type HTTPSEdgeJSON struct {
	edges.EdgeJSON
	MutualTLS      any         `json:"mutual_tls"`
	TLSTermination any         `json:"tls_termination"`
	Routes         []RouteJSON `json:"routes"`
}

// tlsTerminationAtEdge is the request form of an HTTPS edge's tls_termination: terminate_at is
// read only to refuse it.
type tlsTerminationAtEdge struct {
	Enabled     *bool   `json:"enabled"`
	TerminateAt *string `json:"terminate_at"`
	MinVersion  *string `json:"min_version"`
}

// TLSTerminationAtEdgeModule is an HTTPS edge's tls_termination: min_version only (219), and
// terminate_at refused (7109); it reports terminate_at edge.
var TLSTerminationAtEdgeModule = &edges.Kind[tlsTerminationAtEdge, edges.TLSTermination, edges.TLSTerminationJSON]{
	Name: "tls_termination",
	Check: func(ctx context.Context, field string, in *tlsTerminationAtEdge) (*edges.TLSTermination, error) {
		if in.TerminateAt != nil {
			f := edges.Field(field, "terminate_at")
			return nil, api.BadRequest(CodeTerminateAt, f, "%s is not configurable on an HTTPS edge: it always terminates TLS at the edge", f)
		}
		return edges.TLSTerminationModule.Check(ctx, field, &edges.TLSTermination{Enabled: in.Enabled, MinVersion: in.MinVersion})
	},
	Render: edges.TLSTerminationModule.Render,
}

var (
	edgeMutualTLS      = edges.Attach(edges.MutualTLSModule, func(it *HTTPSEdgeItem) **edges.MutualTLS { return &it.MutualTLS })
	edgeTLSTermination = edges.Attach(TLSTerminationAtEdgeModule, func(it *HTTPSEdgeItem) **edges.TLSTermination { return &it.TLSTermination })
	// The edge's own writes (create, PATCH, module PUT) must leave it within its limits too.
	edgeModules = edges.NewSet(edgeMutualTLS, edgeTLSTermination).Rule(
		func(s *edges.Set[HTTPSEdgeItem], it *HTTPSEdgeItem) error { return checkBudget(s, it, "hostports") })
)

// HTTPSEdgesDescriptor is the /edges/https family: edges on reserved domains of the account at
// port 443 with the mutual_tls and tls_termination modules, and their routes
// (/edges/https/{edge_id}/routes, served by the same function: they are parts of the edge's item).
var HTTPSEdgesDescriptor = &resource.Descriptor{
	Path: edgesPath, Prefix: ids.HTTPSEdge, ListKey: "https_edges", EventKind: "https_edge",
	Reads:          []config.Section{config.DomainSettings},
	PartEventKinds: []string{routeEventKind},
	Binding:        func() resource.Binding { return edgeSpec.Binding(routeRoutes...).Keeping(resource.Seals) },
	Release:        hostport.GuardRelease{},
}

// edgeSpec declares HTTPS edges to the edges machinery: reserved domains at port 443 (7121 for a
// TCP address), the two edge modules, and the deletion of the routes with the edge.
var edgeSpec = &edges.Spec[HTTPSEdgeItem, *HTTPSEdgeItem]{
	Hostports: edges.HostportRule{AddressCode: edges.CodeHTTPSEdgeAddr},
	Modules:   edgeModules,
	Render:    renderEdge,
	// The routes go with the edge's item; what their modules referenced is let go in the same
	// transaction.
	Delete: func(ctx context.Context, r *api.Request, it *HTTPSEdgeItem, m *resource.Mutation) error {
		edges.Transition(m, routesClaim(it), edges.Claim{})
		return nil
	},
}

func renderEdge(r *api.Request, it *HTTPSEdgeItem, common edges.EdgeJSON) any {
	routes := make([]RouteJSON, 0, len(it.Routes))
	// Newest first, as the platform lists them.
	for i := len(it.Routes) - 1; i >= 0; i-- {
		routes = append(routes, renderRoute(r, it, it.Routes[i]))
	}
	return HTTPSEdgeJSON{EdgeJSON: common, MutualTLS: edgeMutualTLS.Render(r, it),
		TLSTermination: edgeTLSTermination.Render(r, it), Routes: routes}
}
