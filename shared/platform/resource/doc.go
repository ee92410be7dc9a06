// Package resource is the generic shape of a family: create, get, list, update and delete with
// the caller verified in the same round trip, an audit event in every mutation's transaction,
// optimistic concurrency, and O(page) lists. A family supplies only its types and rules.
//
// # Serving a family
//
// A family is served one way: its Descriptor's Binding, a function returning what Bind makes from
// the family's hooks type and the routes it serves beyond the five operations, declared as data
// (Route: method, pattern under the family's path, status of a success, handler of the hooks).
// Register is the one place routes reach a mux; no family touches one (shared/app's tests fail
// on a route wired by hand). A family whose hooks type holds nothing but its family:
//
//	type BotUsers struct{ *resource.Family[BotUserItem, *BotUserItem] }
//
//	var BotUsersDescriptor = &resource.Descriptor{
//		Path: "/bot_users", Prefix: ids.BotUser, ListKey: "bot_users", EventKind: "bot_user",
//		Function: "BotUsersFunction", Dir: "bot_users",
//		Binding: func() resource.Binding { return resource.Bind[BotUsers]() },
//	}
//
// Hooks are built one way, by Wrap: it sets the *Family the hooks type embeds; a type holding more
// (a cache, a kind, the configuration) derives it in a Configure method (Configurer). Extra
// routes are methods of the hooks type, named by method expressions:
//
//	Binding: func() resource.Binding {
//		return resource.Bind[ReservedDomains](
//			resource.Route[ReservedDomains]{Method: http.MethodDelete, Pattern: "/{id}/certificate",
//				Status: http.StatusNoContent, Handle: ReservedDomains.detachCertificate})
//	},
//
// The operations are written once over store.Resource, so a function serving several families
// does not carry a copy of each per family; they call the family's hooks through one interface
// (erasedHooks in hooks.go, whose one implementation asserts the item type and calls the
// family's method of the same name: Render, Create, Update, Prepare, Delete, InUse,
// UpdateReads).
//
// A family serves all five operations unless its Descriptor's Operations name fewer
// (Operations: resource.OpCreate | resource.OpGet); the others are then not routed at all, and
// answer as any unknown route does. Its hooks implement Updater exactly when it serves
// OpUpdate, which Register checks.
//
// Descriptor.Routes lists every route of the family, which the template, the conformance suite
// and the samples are checked against.
//
// Every create takes an Idempotency-Key header (IdempotencyHeader): its response is kept for
// DefaultIdempotencyWindow, in the create's own transaction, and a repeat of the request with the
// key from the same API key answers with it instead of creating again (idempotency.go).
//
// A create stays one TransactWriteItems when it derives something from another family's item
// (which reservation a name is on, what a secret's owner is called): Facts keeps what the
// process last saw of such items, and every fact used is a condition of the create's own
// transaction, so a stale one costs a retry, never a wrong answer (facts.go).
//
// A request's authentication state is its auth.Session (auth.Of), which alone changes it: Kit's
// reads call its Resolve, ReadKeys and VerifyRead; a Mutation holds it and calls Refresh (begin),
// Assumed (Mutation.Account), Guard and Committed (commit). retrying is the only loop.
//
// Races answer truthfully: a mutation whose target changed or vanished under it is read and
// built again (the retry policy in retrying), so it ends as the fresh read decides (a 404 for a
// deleted target), never as a failed guard of some other write; only the caller's own token or
// account failing its guard is an authentication error.
//
// # Names
//
// A family's types are named by one rule. <Name> is the resource's singular name and <Names>
// its collection's, each read after the package's name, which may stand for part of it
// (sshcerts.AuthorityItem is an SSH certificate authority, domains.DomainItem a reserved domain):
//
//   - <Name>Item is the stored item (it embeds store.Meta); a part that the items of several
//     families embed is <Name>Base (principals.SecretBase, edges.EdgeBase);
//   - <Name>JSON is its wire form, opening with Head (or UpdatedHead);
//   - <Names> is its hooks type, the family in Go (sshcerts.Authorities), and the Descriptor is
//     named after the whole path (SSHCertificateAuthoritiesDescriptor for
//     /ssh_certificate_authorities), as app.Families lists them side by side.
//
// Each piece of serving a family has its own name: Descriptor.Binding returns the family's
// Binding, which Bind makes from its hooks and its extra routes; Route.Handle is an extra
// route's handler; Descriptor.Offers says whether the family offers an operation of the five;
// Register adds the routes to a mux; package serve builds a process's dependencies and mux.
//
// # Round trips
//
// DynamoDB calls per request (the conformance suite asserts them for every family with
// testkit.RoundTrips): get 1 (BatchGetItem), create 1 (TransactWriteItems), update 2 and delete 2
// (read, transaction), list 2 issued concurrently (the caller's items and the page's Query: one
// round trip of latency). Creates that derive from another item (Facts) are 1 in a warm process
// and 2 the first time; creates that prepare a secret (Preparer of a family that KeepsSecrets: SSH CAs
// and certificates, TLS certificates, vault secrets) read the caller's items first, one more; an
// API IP restriction and an SSH certificate from a CA not yet opened in the process are one more
// again. No SQS call on any request. A GET reads the caller's token and account with
// the resource (no auth cache outlives a request, which would serve a deleted key until it
// expired), so its floor is that three-item batch read. BenchmarkRequestsVsBareOperations and
// BenchmarkListAlternatives measure each against its bare calls.
package resource
