// Package api holds the HTTP conventions of the wire contract in one place, so that clients
// written for the hosted platform's API (version 2) work unchanged against this service.
//
// Requests: `Authorization: Bearer <api key token>` (missing 401 ERR_NGROK_200, malformed 201,
// not key-shaped 403 202, a key id instead of its token 207); `Ngrok-Version` absent or 2, else
// 400 217. Bodies are JSON, only on POST/PATCH/PUT, with Content-Type application/json (else
// 210), at most MaxBodyBytes; unparseable 213, unknown member 214, bad value 215 naming the
// field. An absent member means "not supplied", never zero.
//
// Authentication: the Server makes each request's authentication state with its Authenticator
// (package auth's), which owns and changes it; this package only reads it (Authentication):
// Request.Caller for handlers and audit events, whether the store verified the caller (a
// handler's success without that fails closed, and only such a request writes a usage line),
// and the rate-limit decision. A request made outside any served one acts as a fixed caller
// (RequestAs).
//
// Responses: create 201, get/list/update 200 with JSON, delete 204 with no body. Timestamps are
// RFC 3339 UTC with whole seconds and Z. `uri` members are absolute URLs on the host the request
// came to. A list or map member with nothing in it is [] or {}, never null (Slice, Map). Every
// response carries Ngrok-Operation-Id (op_…), also in error details and logs.
//
// Errors: {"error_code","status_code","msg","details"}: status_code equals the HTTP status,
// details is a flat string map that always has operation_id (and field when one input is at
// fault). Not found is 404 "Resource not found" without a code. Anything that is not an *Error
// (found with errors.As, so wrapped ones keep their status) is an opaque 500 whose cause is only
// logged.
//
// Dependency failures: the one table in errors.go (byCause) maps what is not an *Error. A
// request the table could not serve in time (unreachable, throttled, failed on its side, no
// answer before the deadline: derrors.ErrUnavailable, context.DeadlineExceeded) is 503
// ERR_NGROK_1501 with Retry-After and retry_after in details, and changed nothing. 1501 is the
// hosted platform's own code for "some operations unavailable": a client written for the
// platform already treats it as transient rather than as a fault of its request, which the
// platform's 5xx codes for specific features would not say, and a generic 500 would hide. A write
// sent whose answer was lost (derrors.ErrOutcomeUnknown) is 503 ERR_NGROK_1502, a code the platform
// does not use, so a client can tell "nothing changed" from "may have changed": it reads the
// resource, or repeats the request (a create with the same Idempotency-Key creates at most one
// resource). Every request runs under one deadline, its function's timeout (Server.HandleWithin; the
// Lambda context's) less ReplyMargin, which bounds every SDK call and retry under it (package
// store), so the 503 is written before the function would be stopped.
//
// Contention: a write that kept losing to other requests writing the same items until its
// retries were spent (package resource) is 429 ERR_NGROK_225, the platform's "too many
// concurrent API requests for the account", with Retry-After: nothing was changed, and the same
// request may be sent again (TooConcurrent).
//
// Rate limit (when the deployment sets one): every response carries RateLimit-Policy
// (Server.RateLimitPolicy); every response to a request counted against an account carries
// RateLimit, and a request over the limit is 429 ERR_NGROK_226 with Retry-After, whatever else
// it would have answered (Authentication.Admit; package ratelimit decides).
//
// Lists: before_id, limit (1..100, default 100; else 233) and filter where a family allows it;
// an unknown parameter is 231, a before_id of another kind 223. Items are newest first, strictly
// older than before_id; the envelope is {"<list key>":[…],"uri":…,"next_page_uri":…}, with
// next_page_uri the collection URL with before_id, limit (and filter) in alphabetical order, or
// null on the last page.
//
// Updates: PATCH changes only supplied members; a supplied empty string or false is a value; a
// PATCH supplying nothing changeable is 400 606 (EmptyUpdate).
//
// # Request bodies
//
// Every body is decoded by Decode, strictly:
//   - member names match a field's JSON name exactly (no case-insensitive or Unicode-folded
//     match: "DESCRIPTION" and "de\u017fcription" are unknown members, 214);
//   - a member given twice in one object, invalid UTF-8 and an escaped lone surrogate are
//     refused (213) naming the member they occur in; any other malformed JSON is 213 too;
//   - a NUL character (U+0000) in any string, member names included, is refused (215) naming the
//     member: no stored value or name ever carries one;
//   - a value of the wrong JSON type is 215 naming the member; an unknown member is 214.
//
// Members are named as paths: "target.firehose.delivery_stream_arn", "sources[0].type",
// "labels[\"a b\"]".
//
// Decoding uses github.com/go-json-experiment/json, the module that mirrors encoding/json/v2.
// In Go 1.26 encoding/json/v2 exists only behind GOEXPERIMENT=jsonv2, which a build must not
// depend on; the module has the same API and aliases the standard library once v2 is stable,
// so moving to it later is an import change. It was chosen over encoding/json (v1) because v2
// is strict where v1 is not: v1 matches names case-insensitively and with Unicode folding,
// keeps the last of duplicate members and replaces invalid UTF-8 and lone surrogates with
// U+FFFD, none of which can be switched off. v2 refuses all of these by default and reports
// the JSON Pointer of the offending member, from which the field named in the error comes. A
// token pre-pass over the body (jsontext) adds what v2 accepts but the API does not: NUL
// characters.
//
// # Path ids in bodies
//
// Some clients send their whole argument as the body, path ids included (`{"id":"ak_…",
// "description":"…"}` on PATCH /api_keys/{id}). Decode accepts a top-level member named like a
// wildcard of the route's pattern when it is a string equal to the path's value (or null) and
// drops it before decoding; any other value is 215 naming the member. Families therefore never
// see path ids in their bodies, on every PATCH, PUT and sub-resource POST alike.
//
// # Before routing
//
// Server.Front runs before the route mux, on Lambda and in the local server alike: CORS
// (origin echoed, credentials allowed, preflights answered with the allowed methods and
// headers and cached for CORSMaxAge) and a 404 in the envelope for non-canonical paths.
//
// # Paging
//
// ParsePage reads before_id (also spelled beforeId, as one official client sends it), limit
// and filter.
//
// # The official clients
//
// make test drives every family through the JavaScript client (npm @ngrok/ngrok-api 0.11.0). It
// sends path ids inside PATCH bodies and pages with beforeId; both are accepted. Three quirks of
// that client: its delete() rejects after a successful delete, because it parses the empty 204
// body as JSON; it has no create, update or delete for endpoints; and it rewrites every object
// key it sends from camelCase to snake_case, map keys included, so a weighted backend's backends
// (ids, which hold capitals) and an HTTP response backend's headers arrive mangled (a mangled id
// is refused with 6527). The other clients (Go, Python, Ruby, .NET, the Terraform provider) are
// held to the contract they rely on: the members of responses and requests against the
// platform's OpenAPI description, status_code equal to the HTTP status, details a flat string
// map, absolute uri and next_page_uri.
//
// Browsers are answered with CORS: the origin is echoed with credentials allowed, and preflights
// are cached for up to 10 minutes.
package api
