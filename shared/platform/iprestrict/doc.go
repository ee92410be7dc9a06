// Package iprestrict is the whole of the account's API IP restrictions: the CIDR rules and their
// matching semantics, the compiled state and its encoding, the stored versions of that state, a
// per-process cache of compiled versions, the check every request passes and the guard and
// writes of every change. Accounts implements auth.Restrictor, which is how the auth layer uses
// it; the access family derives its writes with Accounts.Change.
//
// Semantics: a restriction of type api lists IP policies; for a source address the most specific
// matching CIDR across those policies decides, deny wins a tie between the same CIDR in two
// policies, and no match refuses. An enforced restriction that refuses the address answers 403
// ERR_NGROK_220; an unenforced one lets the request through with a warning logged and a
// WarningHeader on the response.
//
// Storage: the rules of every api restriction of an account are compiled into one compact
// encoded state, kept in an item of its own per version (the account item names the current
// version; 0 means none). A version is a fresh random number, never reused, so a version's item
// never changes and a process decodes it once into sorted range tables; each request then costs
// a binary search and no extra read. A change writes the next version's item, points the
// account item at it, and lets the replaced one expire after Retired, conditioned on the account
// item still naming the version it was derived from (Guard), so concurrent changes retry rather
// than race. A change that would make an enforced restriction refuse the very address it is made
// from is refused (Lockout).
//
// CIDRs are validated as the platform's IP policy rules are: ERR_NGROK_1406 for an invalid CIDR,
// 1413 for an address without a mask, 1409 for one with host bits set (naming the normalised
// form).
package iprestrict
