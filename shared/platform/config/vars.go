package config

import (
	"strings"

	"tunnelapi/shared/platform/audit"
)

// Process is a set of kinds of process, the readers of a variable.
type Process uint8

// The kinds of process.
const (
	// ByHTTP is every Lambda function serving HTTP routes (package serve).
	ByHTTP Process = 1 << iota
	// ByEventWorker is the function delivering events (package delivery).
	ByEventWorker
	// ByCertWorker is the function obtaining managed certificates (package certs).
	ByCertWorker
	// ByScheduler is the function requesting the certificate jobs that come due.
	ByScheduler
	// ByLocal is the all-in-one local server and its commands (make run, make bootstrap, make
	// sam-local) and the local stack's scripts.
	ByLocal
	// ByTests is the test support: the test stack (package testkit) and make test.
	ByTests

	// ByFunctions is every Lambda function.
	ByFunctions = ByHTTP | ByEventWorker | ByCertWorker | ByScheduler
	// ByEvery is every kind of process.
	ByEvery = ByFunctions | ByLocal | ByTests
)

// processNames names each kind in the README's "read by" column, in order.
var processNames = []struct {
	p    Process
	name string
}{
	{ByHTTP, "HTTP functions"}, {ByEventWorker, "event worker"}, {ByCertWorker, "certificate worker"},
	{ByScheduler, "scheduler"}, {ByLocal, "local"}, {ByTests, "tests"},
}

// String names the kinds in p, comma-separated ("every process" for all of them).
func (p Process) String() string {
	switch p {
	case ByEvery:
		return "every process"
	}
	var out []string
	for _, n := range processNames {
		if p&n.p != 0 {
			out = append(out, n.name)
		}
	}
	return strings.Join(out, ", ")
}

// Var is the declaration of one environment variable.
type Var struct {
	Name string
	// Default is the value an unset or empty variable takes ("" when it has none, or when the
	// default is derived from other variables: Meaning then says how).
	Default string
	// Meaning says what it sets, for the README.
	Meaning string
	// By are the kinds of process that read it.
	By Process
	// Needed are the kinds of deployed function that cannot work without it and get no default:
	// template.yaml must set it for each of them (a test holds it to that).
	Needed Process
	// Secret values are never repeated in an error.
	Secret bool
}

// Vars declares every variable the processes read, in the README's order.
var Vars = []Var{
	{Name: "LOG_LEVEL", Default: "info", By: ByEvery,
		Meaning: "the least severe level logged: `debug`, `info`, `warn` or `error` (any case; the template's `LogLevel` parameter)"},
	{Name: "TABLE_NAME", Needed: ByFunctions, By: ByFunctions | ByLocal,
		Meaning: "the DynamoDB table (`local`: `tunnelapi`; tests make a table of their own each)"},
	{Name: "DYNAMODB_ENDPOINT", By: ByEvery,
		Meaning: "DynamoDB Local's URL (empty in AWS; `local`: `http://127.0.0.1:8000`)"},
	{Name: "SQS_ENDPOINT", By: ByEvery,
		Meaning: "the SQS emulator's URL (empty in AWS; `local`: `http://127.0.0.1:9324`)"},
	{Name: "AWS_REGION", By: ByEvery,
		Meaning: "the AWS region (Lambda sets it; `local` and tests: `us-east-1`)"},
	{Name: "AWS_DEFAULT_REGION", By: ByEvery,
		Meaning: "the region when `AWS_REGION` is empty"},
	{Name: "AWS_ACCESS_KEY_ID", By: ByEvery,
		Meaning: "credentials, read from the environment only (Lambda sets them; `local` and tests: dummy values)"},
	{Name: "AWS_SECRET_ACCESS_KEY", By: ByEvery, Secret: true,
		Meaning: "the secret of `AWS_ACCESS_KEY_ID`"},
	{Name: "AWS_SESSION_TOKEN", By: ByEvery, Secret: true,
		Meaning: "the session token of temporary credentials"},
	{Name: "SEAL_KMS_KEY_ID", Needed: ByFunctions, By: ByFunctions | ByLocal,
		Meaning: "the KMS key of the envelope encryption of secrets (set by the template; empty: the local key below)"},
	{Name: "SEAL_LOCAL_KEY", By: ByFunctions | ByLocal, Secret: true,
		Meaning: "the local master key's 32 bytes in hex, for containers that cannot see its file (`sam local`; empty in AWS)"},
	{Name: "SEAL_KEY_FILE", Default: ".local/seal.key", By: ByEvery,
		Meaning: "the local master key's file, made on first use, when neither of the above is set"},
	{Name: "OUTBOX_RETENTION", Default: audit.DefaultOutboxRetention.String(), By: ByFunctions | ByLocal,
		Meaning: "how long an event's outbox item stays before its TTL expires it, a Go duration"},
	{Name: "RATE_LIMIT", Needed: ByHTTP, By: ByHTTP | ByLocal | ByTests,
		Meaning: "requests per rolling window allowed to each account, `<requests>/<seconds>`, or `off`; the template's `RateLimit` parameter, default `120/60`; unset is `off`, as under `make run`, `make test` and `make sam-local` unless set"},
	{Name: "BASE_DOMAIN", Default: "tunnels.example.com", By: ByHTTP | ByCertWorker | ByLocal,
		Meaning: "the deployment's own domain: names under it need no CNAME (template parameter `BaseDomain`)"},
	{Name: "DNS_ZONE", By: ByHTTP | ByCertWorker | ByLocal,
		Meaning: "the service's DNS zone: a custom domain's `cname_target` and `acme_challenge_cname_target` are names in it; names in it cannot be reserved (default `dns.<BASE_DOMAIN>`; template parameter `DNSZone`)"},
	{Name: "NAME_SERVERS", By: ByHTTP | ByCertWorker | ByLocal,
		Meaning: "the name servers agent ingress domains are delegated to, comma-separated: an agent ingress's `ns_targets`; in AWS those of the reusable delegation set `DELEGATION_SET_ID` (default `ns1.<DNS_ZONE>,ns2.<DNS_ZONE>`; template parameter `NameServers`)"},
	{Name: "REGIONS", Default: "us,eu,ap,au,sa,jp,in", By: ByHTTP | ByCertWorker | ByLocal,
		Meaning: "region codes clients may name, comma-separated, the first being the default (template parameter `Regions`)"},
	{Name: "ADDR_POOLS", By: ByHTTP | ByCertWorker | ByLocal,
		Meaning: "TCP address pools: `<region>=<host>[,<host>…]:<low>-<high>` separated by `;` (default: each region `r` gets `tcp.<r>.<BASE_DOMAIN>` ports 10000–19999); pools may not share an address (template parameter `AddrPools`)"},
	{Name: "EVENTS_QUEUE_URL", Needed: ByEventWorker, By: ByEventWorker | ByLocal,
		Meaning: "the events queue: committed events (from the table's stream) and per-destination deliveries; locally also the stream reader's target (`local`: made at start)"},
	{Name: "EVENTS_DLQ_URL", Needed: ByEventWorker, By: ByEventWorker | ByLocal,
		Meaning: "the dead-letter queue of deliveries that exhausted their attempts"},
	{Name: "DELIVERY_MAX_ATTEMPTS", Default: "8", By: ByEventWorker | ByLocal,
		Meaning: "attempts per delivery"},
	{Name: "DELIVERY_BACKOFF", Default: "2s", By: ByEventWorker | ByLocal,
		Meaning: "the base of a delivery's jittered exponential backoff, a Go duration"},
	{Name: "SINK_ENDPOINT_KINESIS", By: ByEventWorker | ByLocal, Meaning: "endpoint override of the Kinesis sink (tests point the sinks at local stand-ins)"},
	{Name: "SINK_ENDPOINT_FIREHOSE", By: ByEventWorker | ByLocal, Meaning: "endpoint override of the Firehose sink"},
	{Name: "SINK_ENDPOINT_LOGS", By: ByEventWorker | ByLocal, Meaning: "endpoint override of the CloudWatch Logs sink"},
	{Name: "SINK_ENDPOINT_STS", By: ByEventWorker | ByLocal, Meaning: "endpoint override of STS (AssumeRole of role targets)"},
	{Name: "SINK_ENDPOINT_DATADOG", By: ByEventWorker | ByLocal, Meaning: "replaces `https://http-intake.logs.<ddsite>`"},
	{Name: "SINK_ENDPOINT_AZURE_LOGIN", By: ByEventWorker | ByLocal, Meaning: "replaces `https://login.microsoftonline.com` (token requests)"},
	{Name: "SINK_ENDPOINT_AZURE_INGESTION", By: ByEventWorker | ByLocal, Meaning: "replaces the scheme and host of a target's `logs_ingestion_uri`"},
	{Name: "CERT_JOBS_QUEUE_URL", Needed: ByCertWorker, By: ByCertWorker | ByLocal,
		Meaning: "the certificate jobs queue (the CertJobsPipe's target; `local`: made at start)"},
	{Name: "CERT_JOBS_DLQ_URL", By: ByLocal,
		Meaning: "the certificate jobs' dead-letter queue (`local`: made at start; `make sam-local` passes it on)"},
	{Name: "ACME_DIRECTORY", Default: "https://acme-v02.api.letsencrypt.org/directory", By: ByCertWorker | ByLocal | ByTests,
		Meaning: "the ACME directory certificates are ordered from (template parameter `AcmeDirectory`; pebble's under `make run` and tests)"},
	{Name: "ACME_CA_FILE", By: ByCertWorker | ByLocal | ByTests,
		Meaning: "extra TLS roots the ACME directory verifies against (pebble's under `make run` and tests)"},
	{Name: "HOSTED_ZONE_ID", Needed: ByCertWorker, By: ByCertWorker | ByLocal,
		Meaning: "the Route 53 hosted zone DNS-01 challenge records are written to (the template's `HostedZone`)"},
	{Name: "DELEGATION_SET_ID", By: ByCertWorker | ByLocal,
		Meaning: "the Route 53 reusable delegation set agent ingress hosted zones are created on (template parameter `DelegationSetId`); empty: none, and agent ingress certificates fail in AWS"},
	{Name: "CHALLTESTSRV_URL", By: ByCertWorker | ByLocal | ByTests,
		Meaning: "pebble-challtestsrv's management API, where challenge records go instead of Route 53 (`make run`, tests)"},
	{Name: "DNS_RESOLVER", By: ByCertWorker | ByLocal | ByTests,
		Meaning: "`host:port` of the DNS server users' `_acme-challenge` CNAMEs are checked through (default the system's; challtestsrv's under `make run` and tests)"},
	{Name: "CERT_RENEW_BEFORE", Default: "720h", By: ByCertWorker | ByLocal,
		Meaning: "how long before expiry a managed certificate is renewed (`renews_at`), a Go duration (template parameter `CertRenewBefore`)"},
	{Name: "CERT_RETRY_BACKOFF", Default: "1m", By: ByCertWorker | ByLocal,
		Meaning: "the first retry delay of an `INTERNAL_ERROR`, doubling per attempt"},
	{Name: "CERT_RETRY_MAX_BACKOFF", Default: "6h", By: ByCertWorker | ByLocal,
		Meaning: "the longest retry delay of an `INTERNAL_ERROR`"},
	{Name: "CERT_DNS_RETRY", Default: "24h", By: ByCertWorker | ByLocal,
		Meaning: "the retry of a `DNS_ERROR` without a PATCH"},
	{Name: "PORT", Default: "8080", By: ByLocal, Meaning: "the local server's port"},
	{Name: "STATE_DIR", Default: ".local", By: ByLocal | ByTests,
		Meaning: "where the local server writes its admin token and the stack its pid files and logs"},
	{Name: "QUEUE_PREFIX", Default: "tunnelapi", By: ByLocal,
		Meaning: "the local queues' name prefix (`<prefix>-events`, `-events-dlq`, `-cert-jobs`, `-cert-jobs-dlq`)"},
	{Name: "SCHEDULE_EVERY", Default: "1m", By: ByLocal,
		Meaning: "how often `make run` runs the scheduler, a Go duration (the template's schedule is every 5 minutes)"},
	{Name: "FAULT_CRASH_AT", By: ByLocal,
		Meaning: "`before-response` or `after-response`: exit right after a mutation commits, before or after its response is written (crash tests)"},
	{Name: "STACK_LISTEN", Default: "127.0.0.1", By: ByLocal | ByTests,
		Meaning: "the address the SQS emulator listens on (`infra/stack/stack.sh`; `0.0.0.0` for `sam local`)"},
	{Name: "PEBBLE_MANAGEMENT", By: ByTests,
		Meaning: "pebble's management API (its root)"},
	{Name: "REQUIRE_STACK", By: ByTests,
		Meaning: "set by `make test`: a test missing a service of the stack fails instead of skipping"},
	{Name: "TEST_LOG", By: ByTests,
		Meaning: "set: the service under test logs (to stderr) instead of staying silent"},
}

// declared returns the declaration of name, nil when there is none.
func declared(name string) *Var {
	for i := range Vars {
		if Vars[i].Name == name {
			return &Vars[i]
		}
	}
	return nil
}

// Default is the declared default of the variable name ("" when it has none).
func Default(name string) string {
	if v := declared(name); v != nil {
		return v.Default
	}
	return ""
}
