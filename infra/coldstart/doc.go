// Package coldstart measures the deployment's size and start-up promises: each function's zip
// is small and no larger than at commit before, and its time from exec to its first poll of the
// Lambda Runtime API is close to that of a hello-world aws-lambda-go binary built with the same
// flags and no worse than that of the same function at commit before.
//
// # Measured
//
// Zips are 3.5–3.7 MB each; endpoints 7.0 MB, tls_edges and tcp_edges 7.1 MB, https_edges
// 7.9 MB (cel-go, which traffic policy validation needs), against a 5 MB goal. Exec to the first
// Runtime API poll is 1.28–1.40× a hello-world's for every function but endpoints (1.95×, cel-go's
// package initialisation). Against the same functions built from cf5b7ba, the commit before the
// architecture change (BenchmarkColdStartVsBefore, 40 interleaved pairs, 4 runs): ratios
// 0.80–1.30, median 0.99.
//
// Zip sizes against cf5b7ba (TestZipSizes, testdata/zip-cf5b7ba.tsv) are not met: the HTTP
// functions are 5.8–8.7% larger, event_worker 10.1%, scheduler 16.0%. Where the bytes go
// (go list -deps and go tool nm -size of unstripped builds, per package):
//
//   - github.com/go-json-experiment/json, the strict request decoding of package api (exact
//     names; duplicates, invalid UTF-8 and lone surrogates refused, each naming its member),
//     about +230 KB of every zip: json about 165 KB, jsontext the rest.
//   - KMS (seal/kmsseal), only in functions that hold secrets, about +70 KB each.
//   - The rest of the architecture, +1–2%, net of the SQS client that HTTP functions no longer
//     link.
//
// Routes tried for the JSON part, on api_keys (3,561,214 bytes; 3,277,135 at cf5b7ba):
// GOEXPERIMENT=jsonv2 gives 3,497,906 (−63 KB only: encoding/json, linked anyway by
// aws-lambda-go and the SDK, grows by 172 KB under that experiment); dropping the json package
// but keeping jsontext with a stub decoder gives 3,396,570, still +119 KB before any decoder.
package coldstart
