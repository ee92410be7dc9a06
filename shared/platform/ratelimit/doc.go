// Package ratelimit limits the requests of each account to a number per rolling window, with one
// count shared by every process (every Lambda instance, every local server) through the table.
// Limiter implements auth.Limiter, which is how the request path uses it: auth starts the count
// as soon as a request's token names its account, and the request waits for the decision (see
// auth.Session.Admit) only before it releases what it read or commits what it wrote, so the count
// runs alongside the request's own round trip instead of before it.
//
// Configuration: RATE_LIMIT is "<requests>/<seconds>" (the template's default is "120/60") or
// "off"; unset or empty is off, so a local server and the test stack limit nothing unless asked.
// A malformed value fails the process at start (Parse names the problem).
//
// Counting: an approximate sliding window over two fixed windows. Time is cut into windows of
// the configured length aligned on the Unix epoch; each window of each account has a counter
// item (store.RateKey) that every request increments with one UpdateItem returning the new
// count n. The count of the window before, p, is read once per process and window (a GetItem
// alongside the first increment of the window; a finished window's count no longer changes)
// and weighted by the part of it still inside the rolling window: at fraction f of the current
// window the estimate is p·(1−f) + n, and the request is admitted while it is at most the limit.
// Concurrent increments are applied one after another by DynamoDB, so of the requests of one
// window no more than the allowance are admitted, whichever processes serve them. A refused
// request takes its increment back (a second UpdateItem, on the 429's path only): refused
// requests do not use quota, so a client that keeps retrying is served again as soon as the
// window moves on. Counter items expire through the table's TTL two windows after their own.
//
// What counts: every request whose bearer token names an account (from the process's token
// hint or the token item) and whose caller is then verified, whatever its outcome. A request
// whose caller is refused (a deleted key the process still knew, a deactivated bot's key, an
// address the account's IP restriction refuses) is counted while it runs and given back once
// refused (auth.Admission.Release: a second UpdateItem, on that refusal's path only), so refused
// callers cannot hold an account's own keys at 429; it carries no RateLimit field. Requests
// refused before that (no or malformed Authorization header, a token that does not exist) name
// no account and count against none; API Gateway's own throttling is what bounds them. A request over the limit is refused with 429
// ERR_NGROK_226 whatever else it would have answered; nothing it read is released and nothing
// is written.
//
// Header fields (draft-ietf-httpapi-ratelimit-headers-11): every response carries
// `RateLimit-Policy: "default";q=<requests>;w=<seconds>` (api.Server.RateLimitPolicy); every
// response to a counted request also carries `RateLimit: "default";r=<remaining>;t=<seconds>`,
// where r is the quota left after this request and t the seconds until, if the client sends
// nothing more, at least one more request of quota is available again (the draft's effective
// window: within t the client can use no more than r). A 429 has r=0 and a Retry-After equal to
// t: the first moment a request would be admitted.
//
// Failure: when the count cannot be made (DynamoDB unavailable, the client gone), the request is
// admitted without a RateLimit field and the failure is logged: the limit protects the service
// from one account's excess and must not itself take the API down.
//
// # Cost
//
// The counter's UpdateItem runs in parallel with the request's read, adding no round trip: a
// GET waits for the slower of the two calls. BenchmarkGetRateLimitedVsNot measures it.
package ratelimit
