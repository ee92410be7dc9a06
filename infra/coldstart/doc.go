// Package coldstart measures the deployment's size and start-up promises: each function's zip
// is small and no larger than at commit before (8b3ee26, main before issue 21), and its time
// from exec to its first poll of the Lambda Runtime API is close to that of a hello-world
// aws-lambda-go binary built with the same flags and no worse than that of the same function at
// commit before.
//
// # Measured
//
// Zips are 3.5–3.7 MB each; endpoints 7.1 MB, tls_edges and tcp_edges 7.2 MB, https_edges
// 8.0 MB (cel-go, which traffic policy validation needs), against a 5 MB goal. Against
// 8b3ee26 (TestZipSizes, testdata/zip-8b3ee26.tsv) every function that existed then is
// 0.45–1.40% larger.
//
// Before 8b3ee26, against cf5b7ba (the commit before the architecture change of issue 8), the
// HTTP functions had grown 5.8–8.7%, mostly github.com/go-json-experiment/json (the strict
// request decoding of package api, about +230 KB of every zip) and KMS (seal/kmsseal, about
// +70 KB in the functions that hold secrets). GOEXPERIMENT=jsonv2 saves only 63 KB of it
// (encoding/json, linked anyway by aws-lambda-go and the SDK, grows by 172 KB under it).
package coldstart
