// Package trafficpolicy validates traffic policy documents for every resource that takes one
// (cloud endpoints today, edge modules later): one function, Validate(ctx, field, doc), which
// returns nil or a 400 naming field, whose message and details ("path", and "limit" for a limit)
// point at the offending value, such as on_http_request[0].actions[1].config.status_code. The
// document is stored exactly as given; validation changes nothing.
//
// # What is checked
//
// The rules come from the platform's documentation, normalised into reference.json (embedded;
// proven by TestReferenceIsCurrent equal to what the project's copy of the documentation's
// facts, testdata/traffic-policy.yaml, generates):
//
//   - A document is YAML or JSON: a mapping of phases (on_tcp_connect, on_http_request,
//     on_http_response, on_event_stream_message), each a list of rules (name, expressions,
//     actions); an action is a type and a config.
//   - Each action type runs only in its documented phases (the action page's and the action
//     hub's lists together), and its config holds only documented fields, each of its
//     documented type, enum, bounds (numbers, durations, entries, characters) and format (CIDR,
//     IP policy id, RE2 regular expression, username:password, whole CEL expression).
//   - CEL: rule expressions must be conditions; fields the documentation marks as interpolated
//     may hold ${…}, each compiled in the rule's phase. An expression sees its phase's documented
//     variables (conn, endpoint, time, vars and actions.ngrok results everywhere; req from
//     on_http_request; res from on_http_response) and functions (the request-header and cookie
//     macros from on_http_request, the response ones in on_http_response); a member the
//     documentation does not list under a documented object is refused. The fourth phase,
//     on_event_stream_message, whose variables are not documented, gets on_http_response's.
//   - Expressions are parsed, type-checked and costed by package celcheck, which answers as
//     cel-go's parser, checker and estimator do without linking them (TestAgreesWithCelGo
//     compares the two over every expression of the documentation and of the tests).
//   - secrets.get(vault_name, secret_name) is checked against its one documented signature
//     (two strings in, a string out) and nothing else: a vault or secret that does not exist
//     is accepted, as the policy reads it at request time, the reference documents no check
//     when a policy is stored, and infrastructure as code creates endpoints and secrets in any
//     order.
//
// # Legacy names and the documentation's disagreements
//
// Where the documentation names one thing twice both names are accepted (never both at once):
// custom-response content for body, oidc for openid-connect, webhook-validation for
// verify-webhook, idle_session_timeout and idle_session_duration in oauth and openid-connect,
// error_threshold_percentage and rolling_window in circuit-breaker. Where its examples disagree
// with its tables, both forms are accepted: jwt-validation keys and sources as one object or a
// list, basic-auth credentials as {username, password}, set-vars vars as a plain mapping and the
// example keys beside it, deny body, forward-internal binding, redirect location, an action
// written directly in a phase list, and add-header for add-headers. A field the documentation
// marks required but gives a default is optional. ai-gateway and saml have no documented config:
// their listed fields are checked and other fields accepted.
//
// # Limits
//
// Each limit is checked before the step it protects, so refusing costs no more than the limit
// allows (see limits.go for the values):
//
//   - MaxBytes (256 KiB) per document, checked first.
//   - MaxDepth (32) nesting and MaxValues (10,000) values, from one pass over the text before the
//     YAML or JSON parser runs, and again while reading its tree (YAML aliases count at each use).
//   - MaxExpressionBytes (2 KiB) per expression, MaxExpressions (500) distinct expressions and
//     MaxExpressionBytesTotal (24 KiB) of them per document, before compiling.
//   - While compiling: MaxExpressionDepth (24, the parser's recursion limit), MaxExpressionNodes
//     (1,000), MaxComprehensionNesting (3), and MaxExpressionCost (10⁹ of cel-go's cost units,
//     with every request-supplied string, list and map taken as up to 1,024 long).
//   - MaxRegexBytes (4 KiB) per regular expression.
//   - Budget: 100 ms of CPU (the thread's own time, measured with getrusage) per validation,
//     checked before each compilation, and the request's context (a cancelled request stops at
//     the next check).
//
// Each distinct expression is compiled once per document. The CEL environments are built once
// per process and phase, on first use rather than at package initialisation, so that a cold
// start that never validates a policy does not pay for them.
package trafficpolicy
