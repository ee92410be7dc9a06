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
//   - A public endpoint is served only on what its account reserved, as on the platform (a
//     Domain is created first, then the endpoint on it). An http, https or tls URL's host must
//     be a reserved domain of the account, or one label under a reserved wildcard of it; a
//     wildcard host must be reserved exactly. Otherwise: 320 when another account holds the
//     name (or the wildcard over it), 321 for a wildcard *.x.P whose account holds only *.P,
//     318 for any other wildcard, 319 for any other host. Public http is served on port 80,
//     https and tls on 443: any other port is ERR_NGROK_249. A tcp URL must be a reserved
//     address of the account (its host:port): an address another account reserved is 309, any
//     other tcp URL 307, whether its host:port is in a region's address pool and nobody
//     reserved it, is a pool host on a port outside the pool, or is on a host the service does
//     not own (the platform's addresses are all handed out by it, so an address outside the
//     pools can never be served; 249 stays the code of a URL that does not parse). The
//     refusals name url, or bindings when a PATCH keeps the URL and makes it public. Internal
//     (.internal) and kubernetes endpoints are served on no public address, so they need no
//     reservation and keep any port. The platform's request bodies name no region for an
//     endpoint, so there is no region to compare a reservation's with (311, 317, 322).
//   - An endpoint references, in its own transaction, the reservations its URL is on and
//     reports them as domain and tcp_addr: every public http, https or tls endpoint has
//     domain, every public tcp one tcp_addr, and a reservation cannot be deleted while an
//     endpoint references it (ERR_NGROK_446). The reservations are looked up in what the
//     process knows of their guards, which the transaction asserts, so the check adds no
//     DynamoDB call; a reservation deleted before the endpoint's transaction commits makes the
//     mutation run again and end refused.
//   - Over-long description (255 bytes) or metadata (4096 bytes) is ERR_NGROK_215, the code of a
//     bad field value.
//   - A cloud endpoint is rendered with the members the platform returns for one: id, uri,
//     created_at, updated_at, type, url, public_url, proto, hostport, bindings,
//     pooling_enabled, traffic_policy, domain (when the URL's host is on a reserved domain),
//     tcp_addr (when it is a reserved address) and description/metadata when set. Agent
//     endpoints' members (tunnel, upstream_url, principal, …) are absent rather than null.
package endpoints
