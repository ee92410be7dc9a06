// Package ratelimit limits the requests of each account to a number per rolling window, with one
// count shared by every process (every Lambda instance, every local server) through the table:
// each process leases requests of the account's window from it with one conditional write and
// spends them without a round trip (Limiter.Start says how). Limiter implements auth.Limiter,
// which is how the request path uses it: auth starts the count as soon as a request's token
// names its account, and the request waits for the decision (see auth.Session.Admit) only before
// it releases what it read or commits what it wrote, so a lease runs alongside the request's own
// round trip instead of before it.
//
// RATE_LIMIT is "<requests>/<seconds>" (the template's default is "120/60") or "off"; unset or
// empty is off, so a local server and the test stack limit nothing unless asked. A malformed
// value fails the process at start (Parse names the problem). How a request is counted is on
// Limiter.Start, what counts on Limiter, the header fields on its decision's Settle.
package ratelimit
