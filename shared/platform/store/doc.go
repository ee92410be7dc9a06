// Package store is the single DynamoDB table: every key is built here, every read and write
// goes through here, and its errors are typed so callers never inspect SDK exceptions.
//
// Conventions it implements:
//
//   - One table, keys pk (partition) and sk (sort), both strings; the key layout is in keys.go
//     and nothing else in the project concatenates key strings. Resource ids sort by creation
//     time (package ids), so a collection's partition reads newest first with ScanIndexForward
//     false and a page "before" an id is a sort-key range.
//   - Every read is consistent. Reads that must see one another's state (the caller's token and
//     account with the data) share one BatchGetItem round trip (GetMany).
//   - Every change of a resource is one TransactWriteItems (Tx, Commit) with a label per write:
//     a cancelled transaction becomes a *CanceledError naming the labels whose condition failed
//     (ConditionFailed) or marking a lost race (IsConflict, retryable); Tx.Refuse maps a label to
//     the client error to return instead (a failed reference check becomes a 4xx).
//   - Counters outside any resource (the rate limit's) are one UpdateItem ADD (Add), never in a
//     transaction: concurrent additions to one item are applied one after another.
//   - Sizes are accounted before writing: Commit measures every item a transaction puts as
//     DynamoDB does (ItemSize) and refuses one over MaxItemBytes (400 KB), or all of them over
//     MaxTxBytes, with a *TooLargeError naming the write and its largest attribute, without
//     sending it; DynamoDB would refuse it with an error no caller could tell from a failure.
//   - Optimistic concurrency: an item carries a version (attribute v) and writes condition on
//     the version they read (AtVersion); items others reference count their referrers (refs).
//   - A call DynamoDB did not answer (unreachable, throttled, failed on its side, past the
//     caller's deadline) is a *DependencyError: derrors.ErrOutcomeUnknown for a write any attempt of
//     which may have been applied, derrors.ErrUnavailable otherwise (dependency.go). The SDK's
//     retries all run within the caller's deadline (the request's), and a transaction's retries
//     share its ClientRequestToken, so DynamoDB applies it at most once.
//   - Errors name the operation and the keys or labels involved; compare them with errors.Is,
//     errors.As, IsNotFound, ConditionFailed or IsConflict, never with ==.
//
// DB reaches DynamoDB through Client, the narrow part of the SDK client the project uses: Open
// builds the real one from the environment, New wraps any implementation (the in-memory fake of
// package fakedb in unit tests).
package store
