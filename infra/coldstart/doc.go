// Package coldstart measures the deployment's size and start-up promises: each function's zip
// is small and no larger than at commit before (8b3ee26, main before issue 21), and its time
// from exec to its first poll of the Lambda Runtime API is close to that of a hello-world
// aws-lambda-go binary built with the same flags and no worse than that of the same function at
// commit before.
//
// # Measured
//
// Zips are 3.1–3.7 MB each (scheduler 3.1, the workers 3.8–4.1); endpoints 6.8 MB, tls_edges
// and tcp_edges 7.0 MB, https_edges 7.7 MB (cel-go, which traffic policy validation needs),
// against a 5 MB goal.
//
// Against 8b3ee26 (TestZipSizes, testdata/zip-8b3ee26.tsv), 12 of the 28 functions that existed
// then are still larger, by 0.05–0.81% (event_destinations +29 KB, tls_certificates +24 KB,
// credentials +16 KB, api_keys +13 KB, agent_ingresses +12 KB, the rest under 10 KB); the
// others are smaller (scheduler −14%, event_worker −8%, reserved_addrs −4.5%, endpoints −3.1%,
// the edges −2 to −3%). What every HTTP function gained since then, per zip: package config
// (the parser, the domain settings every HTTP function parses, the declaration) about 11 KB,
// the classification and deadline-bounded retries of DynamoDB calls (store.DependencyError)
// about 9 KB, package metrics about 3 KB, errors wrapped by derrors.Wrap about 1 KB; the
// rest is each family's own growth. What was taken back: a family's descriptor is data (its
// Serve a function), so a function no longer links the other families of its package or of the
// packages it names another family from (resource.URIAt instead of that family's Descriptor),
// and the variables' meanings are comments, not strings in every binary.
//
// Exec to the first Runtime API poll against the same functions built from 8b3ee26
// (BenchmarkColdStartVsBefore, 20 interleaved pairs, on a loaded 2-core machine): ratios
// 0.69–1.18, median 1.00.
//
// Before 8b3ee26, against cf5b7ba (the commit before the architecture change of issue 8), the
// HTTP functions had grown 5.8–8.7%, mostly github.com/go-json-experiment/json (the strict
// request decoding of package api, about +230 KB of every zip) and KMS (seal/kmsseal, about
// +70 KB in the functions that hold secrets). GOEXPERIMENT=jsonv2 saves only 63 KB of it
// (encoding/json, linked anyway by aws-lambda-go and the SDK, grows by 172 KB under it).
package coldstart
