// Package endpoints holds the /endpoints family: cloud endpoints created through the API, with a
// validated traffic policy, and the URL uniqueness (or pooling) rule enforced by a guard item.
//
// The conventions it implements:
//   - Only cloud endpoints are created, updated or deleted through the API; anything else is
//     ERR_NGROK_248. An invalid or missing url is ERR_NGROK_249.
//   - A URL is normalised: lowercase scheme and host, the scheme's default port omitted (tcp has
//     none, so a tcp URL needs its port).
//   - An endpoint has one binding: public, internal (exactly for .internal hosts) or kubernetes;
//     left out, it is derived from the host.
//   - Endpoints of one account share a URL only when every one of them pools; a guard item per
//     account and URL, written in the endpoint's own transaction, enforces it.
//   - An endpoint whose host is one of its account's reserved domains (or under its wildcard)
//     references that domain in its own transaction and reports it as domain; the domain cannot
//     be deleted while an endpoint references it (ERR_NGROK_446). The same holds for a tcp URL
//     whose host:port is one of its account's reserved addresses, reported as tcp_addr; an
//     address another account reserved is ERR_NGROK_309.
//   - A public tcp endpoint must be on a reserved address of its account: any other tcp URL is
//     ERR_NGROK_307 ("address must be reserved before use") naming url, whether its host:port
//     is in a region's address pool and nobody reserved it, is a pool host on a port outside the
//     pool, or is on a host the service does not own. The platform's addresses are all handed
//     out by it (a reserved address's addr is "assigned at creation time"; an endpoint's
//     tcp_addr is "the address reserved for this endpoint"), so an address outside the pools can
//     never be served and is refused as unreserved rather than as a malformed URL (249 stays the
//     code of a URL that does not parse: no port, a bad host). The check is made with the
//     reservation lookup the endpoint already reads, so it adds no DynamoDB call; a reservation
//     deleted before the endpoint's transaction commits makes the mutation run again and end in
//     307. An endpoint kept on its URL whose bindings a PATCH turns public is checked the same
//     way, naming bindings. Internal (.internal) and kubernetes endpoints are served on no public
//     address, so they need no reservation. The platform's request bodies name no region for an
//     endpoint, so there is no region to compare an address's with (its 311): the address's
//     region is the pool it was reserved from.
//   - Over-long description (255 bytes) or metadata (4096 bytes) is ERR_NGROK_215, the code of a
//     bad field value.
//   - A cloud endpoint is rendered with the members the platform returns for one: id, uri,
//     created_at, updated_at, type, url, public_url, proto, hostport, bindings,
//     pooling_enabled, traffic_policy, domain (only when the URL is on a reserved domain),
//     tcp_addr (only when it is a reserved address) and description/metadata when set. Agent endpoints' members
//     (tunnel, upstream_url, principal, …) are absent rather than null.
package endpoints
