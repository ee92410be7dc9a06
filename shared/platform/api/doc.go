// Package api holds the HTTP conventions of the wire contract in one place, so that clients
// written for the hosted platform's API (version 2) work unchanged against this service: a
// Server checks each request's credentials, version and body and shapes its answer; Decode
// reads bodies strictly; ParsePage, List and NextPageURI page lists; every failure reaches the
// client as an Error in the platform's envelope, a dependency's as a 503 it may retry (byCause).
// Each convention is documented on what applies it.
//
// The official clients are held to it by the tests beside it. The JavaScript client (npm
// @ngrok/ngrok-api 0.11.0) drives every family: it sends path ids inside PATCH bodies and pages
// with beforeId, both accepted (Decode, ParsePage); its delete() rejects after a successful
// delete, because it parses the empty 204 body as JSON; it has no create, update or delete for
// endpoints; and it rewrites every object key it sends from camelCase to snake_case, map keys
// included, so a weighted backend's backends (ids, which hold capitals) and an HTTP response
// backend's headers arrive mangled (a mangled id is refused with 6527). The other clients (Go,
// Python, Ruby, .NET, the Terraform provider) are held to the contract they rely on: the
// members of responses and requests against the platform's OpenAPI description, status_code
// equal to the HTTP status, details a flat string map, absolute uri and next_page_uri.
package api
