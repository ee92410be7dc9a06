// Package coldstart checks the functions as they are deployed. Every function's zip, built as
// `make build` builds it (for this machine's architecture, the same otherwise) and unzipped,
// answers each of its sample events under the official Lambda Runtime Interface Emulator
// (pinned by go.mod's tool directive) as the local server answers the same request: status,
// headers and body, ids and times aside (TestZipsAnswerSamplesUnderTheEmulator, in `make
// test`; the builds are kept in .local/lambda, so only what changed is linked and zipped
// again). And it measures the deployment's size and start-up promises (`make bench` prints
// both per function): each function's zip is at most 5 MB, and its time from exec to its first
// poll of the Lambda Runtime API is at most 1.5 times that of a hello-world aws-lambda-go
// binary built with the same flags.
//
// Start-up is timed against a minimal Runtime API of its own (runtimeStub), not the emulator,
// whose own work before the exec and after the poll would be added alike to a function and to
// the hello-world baseline and so pull their ratio towards 1.
//
// What keeps the zips small, and must stay: a function links only its own families (the
// operator's main names their collections and Releasers, not their descriptors), only the KMS
// operations its families declare (package kmsseal), no SDK package that builds schemas at
// init (TestNoFunctionLinksSDKSchemas), and parses only the config sections its families read.
package coldstart
