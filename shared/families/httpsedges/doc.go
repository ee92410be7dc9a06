// Package httpsedges is the /edges/https family: HTTPS edges with their mutual_tls and
// tls_termination modules, and their routes (/edges/https/{edge_id}/routes/{id}) with thirteen
// modules each. The module machinery (sub-routes, reference counting, null rendering, hostport
// guards) is package edges'; the route modules' own rules are package httpmodules'.
//
// # Storage: routes inside their edge
//
// An edge's routes are stored in its item (HTTPSEdgeItem.Routes, oldest first), so that:
//
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
// resources it references (hostports' reserved domains, mutual TLS
// authorities, routes' backends and IP policies) plus its hostport guards must fit in the one
// transaction that deletes it (100 writes). Every write that would cross a limit is refused with
// ERR_NGROK_7128 and changes nothing, so a stored edge can always be deleted atomically.
// References are counted once per edge, whichever of its routes holds them.
//
// Routes are served by the edge's function: they are parts of its item, read and written by
// the same code with the same permissions.
//
// # Routes
//
// match_type exact_path|path_prefix (7130); match a /path (7123, 7131, 7135); unique per edge
// (7126); a route id that is not a route of the path's edge is a 404 with ERR_NGROK_7124; an
// edge_id in a body that differs from the path's is 7110. Routes are listed inside the edge,
// newest first. At most one of oauth, oidc and saml per route (7079), oauth only on the route
// matching "/" (7127).
//
// # Secrets
//
// Webhook verification secrets, OAuth and OIDC client secrets and each route's SAML request
// signing private key are sealed (package seal, bound to the account, the route and the
// member) before the edge's item is written, and rendered as null. The SAML key pair is made
// when a route first gets a saml module and kept while the module is replaced; its
// certificate is request_signing_certificate_pem, and the service provider's URLs are on the
// edge's first hostport (https://<host>/ngrok/saml/<route id>/{metadata,acs,slo}).
//
// # Events
//
// https_edge_created.v0, https_edge_updated.v0 and https_edge_deleted.v0 for the edge and its
// own modules; https_edge_route_created.v0, https_edge_route_updated.v0 (a route's PATCH and
// module PUT/DELETE) and https_edge_route_deleted.v0 for routes. Deleting an edge records one
// https_edge_deleted.v0 whose object lists the routes deleted with it.
package httpsedges
