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
//   - A public endpoint is served only on what its account reserved, as on the platform, and
//     references those reservations in its own transaction (reference, and the codes of public
//     URLs).
//   - Over-long description (255 bytes) or metadata (4096 bytes) is ERR_NGROK_215, the code of a
//     bad field value.
//   - A cloud endpoint is rendered with the members the platform returns for one (EndpointJSON).
//   - A live tunnel is an ephemeral endpoint in the same collection (so lists page and filter
//     both kinds as one), written and deleted with its tunnel by package tunnels.
package endpoints
