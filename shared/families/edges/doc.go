// Package edges holds the edge families (/edges/tls, /edges/tcp) and the module machinery every
// item holding edge modules shares: edges of each family and, built on it elsewhere, HTTPS edge
// routes.
//
// # Modules
//
// A module kind is declared once as a Kind[M, S, J]: its name (the body member, the response
// member and the sub-route), M its request form (decoded strictly; pointer members tell
// "absent" from zero), S its stored form, J its response form, and the functions that check a
// supplied module (Check, once per request, before any transaction), list the ids the stored
// module references (Refs, with Missing the refusal for one that does not exist) and render it
// (Render). The kinds here are BackendModule, IPRestrictionModule, MutualTLSModule,
// TLSTerminationModule and TrafficPolicyModule.
//
// An item type holds modules as pointer members, one per kind (nil: absent), stored as
// attributes of the item itself: reading the item reads every module, so a GET with all its
// modules is the one consistent BatchGetItem that also verifies the caller. Attach binds a kind
// to the member that holds it; NewSet lists an item type's modules in response order, and
// Set.Rule adds rules between them (TerminationRule: with TLS terminated upstream, modules that
// need it terminated at the edge, such as mutual TLS, are refused with 7032). To declare a
// module on a new item type:
//
//	backend := edges.Attach(edges.BackendModule, func(it *RouteItem) **edges.Backend { return &it.Backend })
//	modules := edges.NewSet(backend, …)
//	// among the family's resource.Bind routes: PUT/GET/DELETE /{edge_id}/routes/{id}/<name>
//	edges.ModuleRoutes(modules, "/{edge_id}/routes/{id}", func(f F) edges.Holder[RouteItem] { … })
//	// in the wire form: Backend: backend.Render(r, it) (a nil *BackendJSON, JSON null, when absent)
//
// The holder (a Holder) loads and modifies the item a request's path names and says what the
// item holds on others (Claim). Family implements it for edges. An edge family is a Spec (its
// hostport rule, its modules, its wire form) and a descriptor binding Family, the hooks every
// edge family shares, like any family's: Binding: spec.Binding(), which makes the hooks from
// the Spec and adds its modules' routes.
//
// Modules are a machinery of their own beside package resource's, not a second way to build a
// family: resource's unit is a family (an item kind with its five operations), a module's is a
// member inside an item of several kinds (TLS, TCP and HTTPS edges, HTTPS edge routes), with
// its own sub-routes, references and rules, which a family's hooks apply in their Create,
// Update and Delete.
//
// # The update rule
//
// A module supplied in a create or update body replaces the stored one entirely; an omitted
// (or null) module is unchanged; a module is removed only by its own DELETE. A body struct
// embeds Supplied (`json:",embed"`), which collects the members the struct does not name;
// Set.Parse checks them as modules (any other name is 214) and Change.Apply stores them and
// runs the set's rules. A module PUT body is the module's request form, or {"module": …} (the
// JavaScript client's form, its path ids dropped as everywhere); it is decoded and checked once,
// then stored in one read-modify-write transaction (Holder.Modify) that records the item's
// updated event. GET and DELETE of an absent module are 404, so every 204 is one change with
// its event.
//
// # References
//
// What an item references while stored (its modules' Refs, an edge's reservations) is its
// Claim; every mutation adds Transition(before, after) to its transaction: +1 on each id newly
// referenced, -1 on each id let go, through resource.Mutation.Reference, which conditions on the
// referenced item existing (a missing one is refused with the kind's Missing error, naming the
// field) and bumps its version, so a concurrent delete of it retries and sees the reference.
// Referenced kinds refuse deletion while referenced: backends 6502, IP policies 1420,
// certificate authorities 1966, reserved domains and addresses 446. An id kept from before to
// after is not touched. Backends of every kind are referenced by id: the id's prefix names the
// kind's collection (backends.CheckID, backends.Ref), so existence is checked through the item key.
//
// # Edges
//
// An edge family is a Spec (hostport rule, module set, wire form) bound by Bind; its item
// embeds EdgeBase (id, description, metadata, hostports and the reservation each is on). Codes:
// description over 255 bytes 7073, metadata over 4096 bytes 7074, a PATCH supplying nothing 606.
//
// Hostports are "hostname:portnumber" (7104; the host a valid name, wildcards allowed), port
// 1-65535 (7112), at most MaxHostports (7129), none twice (215); stored lowercase without
// leading zeros in the port. TLS edges (and HTTPS edges) take reserved domains of the account
// at port 443: another port 7116, a name no account reserved 7117, one another account reserved
// 7118, a TCP address or a host of an address pool 7133 (HTTPS: 7121); a wildcard reservation
// covers the names one label under it. TCP edges take reserved addresses of the account: a host
// that is no address pool's 7120, an address not reserved 7113 (in any region's pool, or a pool
// host on a port outside its pool), reserved by another account 7114: the platform's edge codes
// for what a cloud endpoint is refused with 307 and 309; a TCP edge names no region, so the
// region of its addresses is never in question (311). A create finds who holds a hostport
// (domains.Holders) in what the process knows of the reservations' guards (domains.Known), each
// asserted by the create's one transaction: warm, a create is one DynamoDB call; a stale or
// unknown guard fails that commit (or, for a refusal, is read before answering) and the create
// runs again on the guard as it is. A PATCH reads them with the edge (resource.UpdateReader),
// so it stays one read and one transaction. The edge
// references the reservation, so it cannot be deleted while an edge serves it, and a reservation
// deleted meanwhile refuses the edge's transaction (7117/7113).
//
// A hostport belongs to at most one edge of any family: a guard item per hostport
// (U#edge_hostport#<hostport>) is put, on the condition that it does not exist (else 7122), in
// the transaction of the create or update that adds the hostport, and deleted in the one that
// releases it.
//
// Audit events are of kind tls_edge and tcp_edge (this service's additions): created, updated
// (also for every module PUT and DELETE, carrying the whole edge) and deleted.
package edges
