// Package api holds the HTTP conventions of the wire contract in one place: the error
// envelope, operation ids, the version header, strict JSON bodies, paging and absolute URIs.
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
package api
