// Package httpmodules validates the modules of an HTTPS edge route (request_headers,
// response_headers, compression, circuit_breaker, webhook_verification, oauth, oidc, saml,
// websocket_tcp_converter, user_agent_filter) and the route's own selector, and derives what the
// service computes for them (the SAML service provider's URLs, certificate and metadata).
//
// Each module has three forms: the request form (XIn, every member a pointer or a list so an
// absent member differs from a zero one), the stored form (X, DynamoDB attributes) that
// XIn.Check returns, and the response form (XJSON) that X.JSON renders. Check takes the field
// path of the module in the request ("" for a module PUT's body, "oauth" inside a route) and
// returns a 400 naming the offending member below it (each Check lists its rules and codes,
// ERR_NGROK_<n>). `enabled` defaults to true. Client secrets and the SAML request signing key
// are write-only (Secret), sealed before the module is written and rendered as null.
package httpmodules
