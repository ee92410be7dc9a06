package httpsedges

import (
	"context"
	"net/http"
	"path"
	"slices"
	"time"

	"tunnelapi/shared/families/edges"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/rules/httpmodules"
)

// Codes of routes.
const (
	CodeEdgeIDDiffers = "ERR_NGROK_7110"
	CodeRouteNotFound = "ERR_NGROK_7124"
	CodeEdgeFull      = "ERR_NGROK_7128"
)

// routeEventKind is the event kind of routes: https_edge_route_created.v0 and so on.
const routeEventKind = "https_edge_route"

// routeTextCodes are the description and metadata codes of routes, as of edges.
var routeTextCodes = api.TextCodes{Description: "ERR_NGROK_7073", Metadata: "ERR_NGROK_7074"}

// errRouteNotFound is the 404 for a route id that is not a route of the path's edge.
var errRouteNotFound = &api.Error{Status: http.StatusNotFound, Code: CodeRouteNotFound, Msg: "Resource not found"}

// Route is a stored route of an HTTPS edge, inside its edge's item, with one pointer per module
// (nil when absent).
//
// match_type exact_path|path_prefix (7130); match a /path (7123, 7131, 7135); unique per edge
// (7126); a route id that is not a route of the path's edge is a 404 with ERR_NGROK_7124; an
// edge_id in a body that differs from the path's is 7110. Routes are listed inside the edge,
// newest first. At most one of oauth, oidc and saml per route (7079), oauth only on the route
// matching "/" (7127).
//
// Webhook verification secrets, OAuth and OIDC client secrets and the route's SAML request
// signing private key are sealed (package seal, bound to the account, the route and the
// member) before the edge's item is written, and rendered as null. The SAML key pair is made
// when the route first gets a saml module and kept while the module is replaced; its
// certificate is request_signing_certificate_pem, and the service provider's URLs are on the
// edge's first hostport (https://<host>/ngrok/saml/<route id>/{metadata,acs,slo}).
type Route struct {
	ID        string `dynamodbav:"id"`
	CreatedAt int64  `dynamodbav:"created_at"`
	resource.Described
	MatchType             string                           `dynamodbav:"match_type"`
	Match                 string                           `dynamodbav:"match"`
	Backend               *edges.Backend                   `dynamodbav:"backend,omitempty"`
	IPRestriction         *edges.IPRestriction             `dynamodbav:"ip_restriction,omitempty"`
	CircuitBreaker        *httpmodules.CircuitBreaker      `dynamodbav:"circuit_breaker,omitempty"`
	Compression           *httpmodules.Toggle              `dynamodbav:"compression,omitempty"`
	RequestHeaders        *httpmodules.Headers             `dynamodbav:"request_headers,omitempty"`
	ResponseHeaders       *httpmodules.Headers             `dynamodbav:"response_headers,omitempty"`
	WebhookVerification   *httpmodules.WebhookVerification `dynamodbav:"webhook_verification,omitempty"`
	OAuth                 *httpmodules.OAuth               `dynamodbav:"oauth,omitempty"`
	SAML                  *httpmodules.SAML                `dynamodbav:"saml,omitempty"`
	OIDC                  *httpmodules.OIDC                `dynamodbav:"oidc,omitempty"`
	WebsocketTCPConverter *httpmodules.Toggle              `dynamodbav:"websocket_tcp_converter,omitempty"`
	UserAgentFilter       *httpmodules.UserAgentFilter     `dynamodbav:"user_agent_filter,omitempty"`
	TrafficPolicy         *edges.TrafficPolicy             `dynamodbav:"traffic_policy,omitempty"`

	// edge is the item holding the route, as read.
	edge *HTTPSEdgeItem
}

// RouteJSON is the wire form of a route (HTTPSEdgeRoute).
type RouteJSON struct {
	EdgeID    string `json:"edge_id"`
	ID        string `json:"id"`
	CreatedAt string `json:"created_at"`
	MatchType string `json:"match_type"`
	Match     string `json:"match"`
	URI       string `json:"uri"`
	resource.DescribedJSON
	Backend               any `json:"backend"`
	IPRestriction         any `json:"ip_restriction"`
	CircuitBreaker        any `json:"circuit_breaker"`
	Compression           any `json:"compression"`
	RequestHeaders        any `json:"request_headers"`
	ResponseHeaders       any `json:"response_headers"`
	WebhookVerification   any `json:"webhook_verification"`
	OAuth                 any `json:"oauth"`
	SAML                  any `json:"saml"`
	OIDC                  any `json:"oidc"`
	WebsocketTCPConverter any `json:"websocket_tcp_converter"`
	UserAgentFilter       any `json:"user_agent_filter"`
	TrafficPolicy         any `json:"traffic_policy"`
	edges.PolicyJSON
}

var (
	routeBackend         = edges.Attach(edges.BackendModule, func(rt *Route) **edges.Backend { return &rt.Backend })
	routeIPRestriction   = edges.Attach(edges.IPRestrictionModule, func(rt *Route) **edges.IPRestriction { return &rt.IPRestriction })
	routeCircuitBreaker  = edges.Attach(CircuitBreakerModule, func(rt *Route) **httpmodules.CircuitBreaker { return &rt.CircuitBreaker })
	routeCompression     = edges.Attach(CompressionModule, func(rt *Route) **httpmodules.Toggle { return &rt.Compression })
	routeRequestHeaders  = edges.Attach(RequestHeadersModule, func(rt *Route) **httpmodules.Headers { return &rt.RequestHeaders })
	routeResponseHeaders = edges.Attach(ResponseHeadersModule, func(rt *Route) **httpmodules.Headers { return &rt.ResponseHeaders })
	routeWebhook         = edges.Attach(WebhookVerificationModule, func(rt *Route) **httpmodules.WebhookVerification { return &rt.WebhookVerification })
	routeOAuth           = edges.Attach(OAuthModule, func(rt *Route) **httpmodules.OAuth { return &rt.OAuth })
	routeSAML            = edges.Attach(SAMLModule, func(rt *Route) **httpmodules.SAML { return &rt.SAML })
	routeOIDC            = edges.Attach(OIDCModule, func(rt *Route) **httpmodules.OIDC { return &rt.OIDC })
	routeWebsocket       = edges.Attach(WebsocketTCPConverterModule, func(rt *Route) **httpmodules.Toggle { return &rt.WebsocketTCPConverter })
	routeUserAgentFilter = edges.Attach(UserAgentFilterModule, func(rt *Route) **httpmodules.UserAgentFilter { return &rt.UserAgentFilter })
	routeTrafficPolicy   = edges.Attach(edges.TrafficPolicyModule, func(rt *Route) **edges.TrafficPolicy { return &rt.TrafficPolicy })
	// routeModules are a route's thirteen modules; at most one of oauth, saml and oidc, and
	// oauth only on "/".
	routeModules = edges.NewSet(routeBackend, routeIPRestriction, routeCircuitBreaker, routeCompression,
		routeRequestHeaders, routeResponseHeaders, routeWebhook, routeOAuth, routeSAML, routeOIDC,
		routeWebsocket, routeUserAgentFilter, routeTrafficPolicy).Rule(authRule)
)

// authRule checks a route's authentication modules (httpmodules.CheckAuth), naming the last of
// them present.
func authRule(_ *edges.Set[Route], rt *Route) error {
	field := ""
	for _, m := range []edges.Module[Route]{routeOAuth, routeSAML, routeOIDC} {
		if m.Present(rt) {
			field = m.Name()
		}
	}
	return httpmodules.CheckAuth(field, rt.MatchType, rt.Match, rt.OAuth != nil, rt.OIDC != nil, rt.SAML != nil)
}

// routePath is the path of route id of edge.
func routePath(edge, id string) string { return edgesPath + "/" + edge + "/routes/" + id }

// derive fills what a route's modules show that depends on where it is served: the SAML
// service provider's URLs are on the edge's first hostport.
func derive(it *HTTPSEdgeItem, rt *Route) {
	rt.edge = it
	if rt.SAML != nil {
		hp := ""
		if len(it.Hostports) > 0 {
			hp = it.Hostports[0]
		}
		rt.SAML.SP = httpmodules.NewSPURLs(hp, rt.ID)
	}
}

// renderRoute returns a route as GET returns it.
func renderRoute(r *api.Request, it *HTTPSEdgeItem, rt *Route) RouteJSON {
	derive(it, rt)
	return RouteJSON{EdgeID: it.ID, ID: rt.ID, CreatedAt: api.Timestamp(rt.CreatedAt), MatchType: rt.MatchType,
		Match: rt.Match, URI: r.URI(routePath(it.ID, rt.ID)), DescribedJSON: rt.Described.Rendered(),
		Backend: routeBackend.Render(r, rt), IPRestriction: routeIPRestriction.Render(r, rt),
		CircuitBreaker: routeCircuitBreaker.Render(r, rt), Compression: routeCompression.Render(r, rt),
		RequestHeaders: routeRequestHeaders.Render(r, rt), ResponseHeaders: routeResponseHeaders.Render(r, rt),
		WebhookVerification: routeWebhook.Render(r, rt), OAuth: routeOAuth.Render(r, rt), SAML: routeSAML.Render(r, rt),
		OIDC: routeOIDC.Render(r, rt), WebsocketTCPConverter: routeWebsocket.Render(r, rt),
		UserAgentFilter: routeUserAgentFilter.Render(r, rt), TrafficPolicy: routeTrafficPolicy.Render(r, rt)}
}

// find returns the route id of it, or nil.
func find(it *HTTPSEdgeItem, id string) *Route {
	for _, rt := range it.Routes {
		if rt.ID == id {
			derive(it, rt)
			return rt
		}
	}
	return nil
}

// routes serves an HTTPS edge's routes and is the Holder of their modules: each is a
// read-modify-write of the edge's item that records the route's own event.
type routes struct {
	edges *edges.Edges[HTTPSEdgeItem, *HTTPSEdgeItem]
}

// edgeHooks is the hooks of HTTPS edges, on which their routes are served.
type edgeHooks = *edges.Edges[HTTPSEdgeItem, *HTTPSEdgeItem]

// routeRoutes are the routes' operations under /edges/https/{edge_id}/routes and their modules'
// sub-routes.
var routeRoutes = append([]resource.Route[edgeHooks]{
	{Method: http.MethodPost, Pattern: "/{edge_id}/routes", Status: http.StatusCreated, Handle: onRoutes((*routes).create)},
	{Method: http.MethodGet, Pattern: "/{edge_id}/routes/{id}", Status: http.StatusOK, Handle: onRoutes((*routes).get)},
	{Method: http.MethodPatch, Pattern: "/{edge_id}/routes/{id}", Status: http.StatusOK, Handle: onRoutes((*routes).update)},
	{Method: http.MethodDelete, Pattern: "/{edge_id}/routes/{id}", Status: http.StatusNoContent, Handle: onRoutes((*routes).delete)},
}, edges.ModuleRoutes(routeModules, "/{edge_id}/routes/{id}", func(f edgeHooks) edges.Holder[Route] { return &routes{edges: f} })...)

// onRoutes serves a route operation on the routes of the edge family f.
func onRoutes(op func(h *routes, ctx context.Context, r *api.Request) (any, error)) func(f edgeHooks, ctx context.Context, r *api.Request) (any, error) {
	return func(f edgeHooks, ctx context.Context, r *api.Request) (any, error) {
		return op(&routes{edges: f}, ctx, r)
	}
}

// routeBody is the create and update body of a route (HTTPSEdgeRouteCreate, HTTPSEdgeRouteUpdate):
// its modules are the members Supplied collects.
type routeBody struct {
	api.Text
	MatchType *string        `json:"match_type"`
	Match     *string        `json:"match"`
	Modules   edges.Supplied `json:",embed"`
}

// decodeRoute reads a route body; an edge_id differing from the path's is 7110.
func decodeRoute(r *api.Request) (routeBody, error) {
	var in routeBody
	err := api.Decode(r, &in)
	if e, ok := api.AsError(err); ok && e.Field == "edge_id" {
		return in, api.BadRequest(CodeEdgeIDDiffers, "edge_id", "%s", e.Msg)
	}
	return in, err
}

// Load reads the route named by the request's path, with its edge, in one round trip.
func (h *routes) Load(ctx context.Context, r *api.Request) (*Route, error) {
	it, err := h.edges.Family.Load(ctx, r, r.PathValue("edge_id"), nil)
	if err != nil {
		return nil, err
	}
	rt := find(it, r.PathValue("id"))
	if rt == nil {
		return nil, errRouteNotFound
	}
	return rt, nil
}

// Claim is everything the routes of the route's edge hold on others: references are counted
// once per edge, whichever of its routes hold them. (The edge's own modules reference other
// kinds, certificate authorities and reserved domains, counted by the edge's own writes.)
func (h *routes) Claim(rt *Route) edges.Claim { return routesClaim(rt.edge) }

// routesClaim is what the routes of it hold on others.
func routesClaim(it *HTTPSEdgeItem) edges.Claim {
	var c edges.Claim
	for _, rt := range it.Routes {
		routeModules.Claim(&c, rt)
	}
	return c
}

// Modify changes the route named by the request's path, recording its updated event.
func (h *routes) Modify(ctx context.Context, r *api.Request, change func(rt *Route, m *resource.Mutation) error) (*Route, error) {
	var rt *Route
	_, err := h.edges.Family.ModifyAs(ctx, r, r.PathValue("edge_id"), nil, func(it *HTTPSEdgeItem, m *resource.Mutation) error {
		if rt = find(it, r.PathValue("id")); rt == nil {
			return errRouteNotFound
		}
		prev := rt.SAML
		if err := change(rt, m); err != nil {
			return namedAuthError(r, err)
		}
		return h.settle(ctx, r, it, rt, prev)
	}, func(it *HTTPSEdgeItem) (string, any) {
		return audit.Type(routeEventKind, "updated"), renderRoute(r, it, rt)
	})
	return rt, err
}

// namedAuthError names, in a refusal of a second authentication module, the module the
// request's path writes (a PUT of /saml names saml, not the module already there).
func namedAuthError(r *api.Request, err error) error {
	e, ok := api.AsError(err)
	if !ok || e.Code != httpmodules.CodeOneAuthModule {
		return err
	}
	_, last := path.Split(r.HTTP.Pattern)
	if last != "oauth" && last != "saml" && last != "oidc" {
		return err
	}
	named := *e
	named.Field = last
	return &named
}

// settle completes a route about to be stored: its SAML module gets the route's request
// signing key pair (kept from the module it replaces, prev, else generated), every secret is
// sealed bound to the account and the route, and the edge must still fit (checkBudget).
func (h *routes) settle(ctx context.Context, r *api.Request, it *HTTPSEdgeItem, rt *Route, prev *httpmodules.SAML) error {
	if rt.SAML != nil && len(rt.SAML.SigningCert) == 0 {
		if err := rt.SAML.Provision(prev, rt.ID, time.Now()); err != nil {
			return err
		}
	}
	aad := seal.ResourceContext(it.AccountID, rt.ID)
	var secrets []httpmodules.Sealable
	if rt.WebhookVerification != nil {
		secrets = append(secrets, rt.WebhookVerification)
	}
	if rt.OAuth != nil {
		secrets = append(secrets, rt.OAuth)
	}
	if rt.OIDC != nil {
		secrets = append(secrets, rt.OIDC)
	}
	if rt.SAML != nil {
		secrets = append(secrets, rt.SAML)
	}
	for _, s := range secrets {
		if err := s.SealSecrets(ctx, h.edges.Kit.Seal, aad); err != nil {
			return err
		}
	}
	derive(it, rt)
	return checkBudget(edgeModules, it, "routes")
}

func (h *routes) get(ctx context.Context, r *api.Request) (any, error) {
	rt, err := h.Load(ctx, r)
	if err != nil {
		return nil, err
	}
	return renderRoute(r, rt.edge, rt), nil
}

func (h *routes) create(ctx context.Context, r *api.Request) (_ any, err error) {
	defer derrors.Wrap(&err, "httpsedges.createRoute(%s)", r.PathValue("edge_id"))
	in, err := decodeRoute(r)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	proto := Route{ID: ids.NewAt(ids.HTTPSEdgeRoute, now), CreatedAt: now.Unix()}
	if err := checkSelector(&proto, in, true); err != nil {
		return nil, err
	}
	change, err := routeModules.Parse(ctx, in.Modules)
	if err != nil {
		return nil, err
	}
	var out RouteJSON
	_, err = h.edges.Family.ModifyAs(ctx, r, r.PathValue("edge_id"), nil, func(it *HTTPSEdgeItem, m *resource.Mutation) error {
		rt := proto
		rt.edge = it
		if err := change.Apply(&rt); err != nil {
			return err
		}
		if len(it.Routes) >= MaxRoutes {
			return api.BadRequest(CodeEdgeFull, "match", "an HTTPS edge has at most %d routes", MaxRoutes)
		}
		if err := unique(it, &rt); err != nil {
			return err
		}
		before := routesClaim(it)
		it.Routes = append(it.Routes, &rt)
		edges.Transition(m, before, routesClaim(it))
		if err := h.settle(ctx, r, it, &rt, nil); err != nil {
			return err
		}
		out = renderRoute(r, it, &rt)
		return nil
	}, func(it *HTTPSEdgeItem) (string, any) { return audit.Type(routeEventKind, "created"), out })
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (h *routes) update(ctx context.Context, r *api.Request) (_ any, err error) {
	defer derrors.Wrap(&err, "httpsedges.updateRoute(%s)", r.PathValue("id"))
	in, err := decodeRoute(r)
	if err != nil {
		return nil, err
	}
	if in.Description == nil && in.Metadata == nil && in.MatchType == nil && in.Match == nil && len(in.Modules) == 0 {
		names := []string{"description", "metadata", "match_type", "match"}
		for _, m := range routeModules.Modules() {
			names = append(names, m.Name())
		}
		return nil, routeTextCodes.EmptyUpdate(names...)
	}
	var probe Route
	if err := checkSelector(&probe, in, false); err != nil {
		return nil, err
	}
	change, err := routeModules.Parse(ctx, in.Modules)
	if err != nil {
		return nil, err
	}
	rt, err := h.Modify(ctx, r, func(rt *Route, m *resource.Mutation) error {
		before := h.Claim(rt)
		if err := checkSelector(rt, in, false); err != nil {
			return err
		}
		if err := unique(rt.edge, rt); err != nil {
			return err
		}
		if err := change.Apply(rt); err != nil {
			return err
		}
		edges.Transition(m, before, h.Claim(rt))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return renderRoute(r, rt.edge, rt), nil
}

func (h *routes) delete(ctx context.Context, r *api.Request) (_ any, err error) {
	defer derrors.Wrap(&err, "httpsedges.deleteRoute(%s)", r.PathValue("id"))
	var gone RouteJSON
	_, err = h.edges.Family.ModifyAs(ctx, r, r.PathValue("edge_id"), nil, func(it *HTTPSEdgeItem, m *resource.Mutation) error {
		i := slices.IndexFunc(it.Routes, func(rt *Route) bool { return rt.ID == r.PathValue("id") })
		if i < 0 {
			return errRouteNotFound
		}
		gone = renderRoute(r, it, it.Routes[i])
		before := routesClaim(it)
		it.Routes = slices.Delete(it.Routes, i, i+1)
		edges.Transition(m, before, routesClaim(it))
		return nil
	}, func(it *HTTPSEdgeItem) (string, any) { return audit.Type(routeEventKind, "deleted"), gone })
	return nil, err
}

// checkSelector checks the match_type and match of a body (required when create) and sets
// those supplied on rt.
func checkSelector(rt *Route, in routeBody, create bool) error {
	if err := rt.SetText(routeTextCodes, in.Text); err != nil {
		return err
	}
	if in.MatchType != nil || create {
		t := ""
		api.Set(&t, in.MatchType)
		if err := httpmodules.CheckMatchType("match_type", t); err != nil {
			return err
		}
		rt.MatchType = t
	}
	if in.Match != nil || create {
		m := ""
		api.Set(&m, in.Match)
		if err := httpmodules.CheckMatch("match", m); err != nil {
			return err
		}
		rt.Match = m
	}
	return nil
}

// unique refuses rt's match when another route of it has it (7126).
func unique(it *HTTPSEdgeItem, rt *Route) error {
	for _, other := range it.Routes {
		if other.ID != rt.ID && other.Match == rt.Match {
			return api.BadRequest(httpmodules.CodeMatchNotUnique, "match", "route %s of this edge already matches %s", other.ID, api.Describe(rt.Match))
		}
	}
	return nil
}
