// Package coldstart checks the functions as they are deployed. Every function's zip, built as
// `make build` builds it (for this machine's architecture, the same otherwise) and unzipped,
// answers each of its sample events under the official Lambda Runtime Interface Emulator
// (pinned by go.mod's tool directive) as the local server answers the same request: status,
// headers and body, ids and times aside (TestZipsAnswerSamplesUnderTheEmulator, in `make
// test`; the builds are kept in .local/lambda, so only what changed is linked and zipped
// again). And it measures the deployment's size and start-up promises: each function's zip is
// small and no larger than at commit before (8b3ee26, main before issue 21), and its time from
// exec to its first poll of the Lambda Runtime API is close to that of a hello-world
// aws-lambda-go binary built with the same flags and no worse than that of the same function at
// commit before.
//
// # Start-up is timed against a Runtime API of its own
//
// The start-up benchmarks serve the first poll from a minimal Runtime API (runtimeStub), not
// the emulator. The emulator logs the same interval (its "INIT REPORT(durationMs: …)" line, the
// figure Lambda reports as Init Duration; its REPORT line's "Init Duration" times only the
// hand-off of the init), but with its own work before the exec and after the poll inside it,
// added alike to a function and to the hello-world baseline, which pulls their ratio towards 1
// and so loosens the goal; and it initialises once per process, so every sample would cost an
// emulator of its own.
//
// # What keeps the zips small
//
// The sizes and start-ups are make bench's output (TestZipSizes, BenchmarkColdStart*); what
// holds them down, and must stay:
//   - a family's descriptor is data (its Binding a function), and another family is named by its
//     path and event kind (resource.URI, NewHead; TestNoFamilyNamesAnothersDescriptor), so a
//     function links only its own families; the operator's main names the families' collections
//     and Releasers, not their descriptors, and what it calls lives outside the packages that
//     import traffic policy validation (cel-go's initialisation alone is megabytes);
//   - a descriptor's Release is a type's method, which the HTTP functions never call, not a func
//     value they would link;
//   - a function links only the KMS operations its families declare (kmsseal's New,
//     NewSealing or NewOpening), and no key-file sealer (seal.UseKeyFiles is for local processes);
//   - no package-level map literals or values built at initialisation in the packages every
//     function links (a sync.Once behind a function, static arrays, switches);
//   - the variables' meanings are comments, not strings in every binary;
//   - dynamodbstreams, cloudwatchlogs, firehose and kinesis stay at their last releases whose
//     packages build no schemas at init (go.mod says why; TestNoFunctionLinksSDKSchemas fails
//     when a function links a schemas package);
//   - settings only some families read are a config.Section only their functions parse;
//   - GOARM64=v8.2, as Lambda's Graviton2 runs it: atomics are instructions, not a run-time
//     test and a fallback loop.
package coldstart
