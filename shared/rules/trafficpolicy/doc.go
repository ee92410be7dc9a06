// Package trafficpolicy validates traffic policy documents for every resource that takes one
// (cloud endpoints today, edge modules later): one function, Validate(ctx, field, doc), which
// returns nil or a 400 naming field, whose message and details ("path", and "limit" for a limit)
// point at the offending value, such as on_http_request[0].actions[1].config.status_code. The
// document is stored exactly as given; validation changes nothing.
//
// What is checked comes from the platform's documentation, normalised into reference.json
// (referenceJSON, where the documentation's legacy names and disagreements are too); the work
// of one validation is bounded by the limits of limits.go, each checked before the step it
// protects. CEL expressions are parsed, type-checked and costed by package celcheck, which
// answers as cel-go's parser, checker and estimator do without linking them.
package trafficpolicy
