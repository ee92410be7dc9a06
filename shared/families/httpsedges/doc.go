// Package httpsedges is the /edges/https family: HTTPS edges with their mutual_tls and
// tls_termination modules, and their routes (/edges/https/{edge_id}/routes/{id}) with thirteen
// modules each. The module machinery (sub-routes, reference counting, null rendering, hostport
// guards) is package edges'; the route modules' own rules are package httpmodules'. Routes are
// stored inside their edge's item (HTTPSEdgeItem), within the limits of one item and one
// transaction (budget.go).
//
// Events: https_edge_created.v0, https_edge_updated.v0 and https_edge_deleted.v0 for the edge and
// its own modules; https_edge_route_created.v0, https_edge_route_updated.v0 (a route's PATCH and
// module PUT/DELETE) and https_edge_route_deleted.v0 for routes. Deleting an edge records one
// https_edge_deleted.v0 whose object lists the routes deleted with it.
package httpsedges
