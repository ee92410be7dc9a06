// Package edges holds the edge families (/edges/tls, /edges/tcp) and the module machinery every
// item holding edge modules shares: edges of each family and, built on it elsewhere, HTTPS edge
// routes. A module kind is declared once (Kind) and attached to the item types that hold it
// (Attach, Set); a body's modules replace the stored ones whole (Supplied, ModuleRoutes); what
// an item references while stored is its Claim, counted on the referenced items (Transition).
// An edge family is a Spec served by the hooks every edge family shares (Edges), its
// hostports checked against the account's reservations (HostportRule).
//
// Audit events are of kind tls_edge and tcp_edge (this service's additions): created, updated
// (also for every module PUT and DELETE, carrying the whole edge) and deleted.
package edges
