// Package auth verifies bearer tokens. A token's identity (account, principal) is immutable, so
// it may be remembered between requests as a hint; whether the token is still valid never is:
// every request confirms it in the same DynamoDB round trip as the data it reads or writes.
//
// A read fetches the token item and the account item with its data (and, for a bot or service
// user's key, the bot's own item) and releases nothing until they check out: the token still
// exists and is an API key of that principal, a bot principal's item exists and is active
// (AttrActive), and the account's API IP restriction (a Restrictor) lets the request's source
// address in. A write is one transaction conditioned on the same facts: the token item exists,
// the bot's item is active, and the account's restriction is still the version the request was
// checked against. Revocation lives in each principal's own item, so the account item that
// every request reads stays the same size however many principals come and go; a user's key
// (users cannot be deactivated) reads and conditions on nothing more.
//
// A request's authentication state is one value, its Session: the caller its token resolves to,
// whether the store confirmed it, the account state it was verified against (AccountState, so
// every write of a request conditions on what its reads saw) and its pending rate-limit
// decision. The api.Server makes it when the request arrives (Authenticator.Session), package
// resource reaches it with Of, and only its own methods change it; package api reads the caller,
// whether it was verified and the decision through api.Authentication. The Authenticator holds
// only what outlives a request: the store, the Restrictor, the Limiter and the token hints.
//
// Rate limit: when a Limiter is set, Resolve starts counting the request against the account its
// token names (once per request) and the count runs alongside the request's read or while it
// builds its transaction; VerifyRead and Guard wait for the decision (Session.Admit) before
// anything read is released or anything written, so a refused request is a 429 that changed
// nothing. A token that names no account counts against none, and a caller this package refuses
// (ErrUnknownKey, a refused address) has its count given back (Admission.Release): only a
// verified caller spends the account's quota.
//
// A reader resolves the caller (Resolve), fetches ReadKeys with its data and releases nothing
// before VerifyRead. A writer (package resource) owns its transaction and asks the session for
// three things, none of which calls back into it: Refresh before building the write, Guard to
// add the guard conditions to the built transaction, and Committed to classify the commit's
// result (its own failures: ErrUnknownKey, ErrRetry). Nothing here loops: when a write finds the
// account item changed, Committed returns ErrRetry and the writer's one retry policy builds the
// operation again; its Refresh first verifies the caller against the account item as it is then.
package auth
