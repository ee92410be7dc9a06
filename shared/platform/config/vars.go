package config

import (
	"strings"

	"tunnelapi/shared/platform/audit"
)

// Process is a set of kinds of process, the readers of a variable.
type Process uint16

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
	// ByOperator is the function serving the operator's interface (package operator).
	ByOperator
	// ByUsageWorker is the function summing the usage lines of every function's log (package
	// usage).
	ByUsageWorker
	// ByTunnelPlugin is the function answering the tunnel servers' plugin requests (package
	// frpplugin).
	ByTunnelPlugin
	// ByLocal is the all-in-one local server and its commands (make run, make bootstrap, make
	// sam-local) and the local stack's scripts.
	ByLocal
	// ByTests is the test support: the test stack (package testkit) and make test.
	ByTests

	// ByFunctions is every Lambda function.
	ByFunctions = ByHTTP | ByEventWorker | ByCertWorker | ByScheduler | ByOperator | ByUsageWorker | ByTunnelPlugin
	// ByEvery is every kind of process.
	ByEvery = ByFunctions | ByLocal | ByTests
)

// processNames names each kind in the README's "read by" column, in order.
var processNames = []struct {
	p    Process
	name string
}{
	{ByHTTP, "HTTP functions"}, {ByEventWorker, "event worker"}, {ByCertWorker, "certificate worker"},
	{ByScheduler, "scheduler"}, {ByOperator, "operator"}, {ByUsageWorker, "usage worker"}, {ByTunnelPlugin, "tunnel plugin"}, {ByLocal, "local"}, {ByTests, "tests"},
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
	// default is derived from other variables: its meaning then says how).
	Default string
	// By are the kinds of process that read it.
	By Process
	// Needed are the kinds of deployed function that cannot work without it and get no default:
	// template.yaml must set it for each of them (shared/app/gen writes the HTTP functions'
	// environment from what their parsers read; a test holds the workers' to it).
	Needed Process
	// Secret values are never repeated in an error.
	Secret bool
}

// Vars declares every variable the processes read, in the README's order. The comment above
// each is its meaning: `go doc -src` shows it, and no binary carries it (every function links
// Vars).
var Vars = []Var{
	// the least severe level logged: `debug`, `info`, `warn` or `error` (any case; the template's
	// `LogLevel` parameter)
	{Name: "LOG_LEVEL", Default: "info", By: ByEvery},
	// the DynamoDB table (`local`: `tunnelapi`; tests make a table of their own each)
	{Name: "TABLE_NAME", Needed: ByFunctions, By: ByFunctions | ByLocal},
	// DynamoDB Local's URL (empty in AWS; `local`: `http://127.0.0.1:8000`)
	{Name: "DYNAMODB_ENDPOINT", By: ByEvery},
	// the SQS emulator's URL (empty in AWS; `local`: `http://127.0.0.1:9324`)
	{Name: "SQS_ENDPOINT", By: ByEvery},
	// the AWS region (Lambda sets it; `local` and tests: `us-east-1`)
	{Name: "AWS_REGION", By: ByEvery},
	// the region when `AWS_REGION` is empty
	{Name: "AWS_DEFAULT_REGION", By: ByEvery},
	// credentials, read from the environment only (Lambda sets them; `local` and tests: dummy values)
	{Name: "AWS_ACCESS_KEY_ID", By: ByEvery},
	// the secret of `AWS_ACCESS_KEY_ID`
	{Name: "AWS_SECRET_ACCESS_KEY", By: ByEvery, Secret: true},
	// the session token of temporary credentials
	{Name: "AWS_SESSION_TOKEN", By: ByEvery, Secret: true},
	// the KMS key of the envelope encryption of secrets (set by the template; empty: the local key
	// below)
	{Name: "SEAL_KMS_KEY_ID", Needed: ByFunctions, By: ByFunctions | ByLocal},
	// the local master key's 32 bytes in hex, for containers that cannot see its file (`sam local`;
	// empty in AWS)
	{Name: "SEAL_LOCAL_KEY", By: ByFunctions | ByLocal, Secret: true},
	// the local master key's file, made on first use, when neither of the above is set (the local
	// server's default is `.local/seal.key`; the template sets none, so a Lambda function seals
	// only with one of the above)
	{Name: "SEAL_KEY_FILE", By: ByEvery},
	// how long an event's outbox item stays before its TTL expires it, a Go duration
	{Name: "OUTBOX_RETENTION", Default: audit.DefaultOutboxRetention.String(), By: ByFunctions | ByLocal},
	// requests per rolling window allowed to each account, `<requests>/<seconds>`, or `off`; the
	// template's `RateLimit` parameter, default `120/60`; unset is `off`, as under `make run`, `make
	// test` and `make sam-local` unless set
	{Name: "RATE_LIMIT", Needed: ByHTTP, By: ByHTTP | ByLocal | ByTests},
	// the deployment's own domain: names under it need no CNAME (template parameter `BaseDomain`)
	{Name: "BASE_DOMAIN", Default: "tunnels.example.com", By: ByHTTP | ByCertWorker | ByTunnelPlugin | ByLocal},
	// the service's DNS zone: a custom domain's `cname_target` and `acme_challenge_cname_target` are
	// names in it; names in it cannot be reserved (default `dns.<BASE_DOMAIN>`; template parameter
	// `DNSZone`)
	{Name: "DNS_ZONE", By: ByHTTP | ByCertWorker | ByTunnelPlugin | ByLocal},
	// the name servers agent ingress domains are delegated to, comma-separated: an agent ingress's
	// `ns_targets`; in AWS those of the reusable delegation set `DELEGATION_SET_ID` (default
	// `ns1.<DNS_ZONE>,ns2.<DNS_ZONE>`; template parameter `NameServers`)
	{Name: "NAME_SERVERS", By: ByHTTP | ByCertWorker | ByTunnelPlugin | ByLocal},
	// region codes clients may name, comma-separated, the first being the default (template parameter
	// `Regions`)
	{Name: "REGIONS", Default: "us,eu,ap,au,sa,jp,in", By: ByHTTP | ByCertWorker | ByOperator | ByTunnelPlugin | ByLocal},
	// TCP address pools: `<region>=<host>[,<host>…]:<low>-<high>` separated by `;` (default: each
	// region `r` gets `tcp.<r>.<BASE_DOMAIN>` ports 10000–19999); pools may not share an address
	// (template parameter `AddrPools`)
	{Name: "ADDR_POOLS", By: ByHTTP | ByCertWorker | ByTunnelPlugin | ByLocal},
	// the AWS account the deployment runs in (the template sets it from `AWS::AccountId`): the event
	// worker never assumes a role of it and an event destination may not name one; empty (`make
	// run`, tests): no account is refused. The usage worker adds only lines of log groups it owns
	{Name: "DEPLOYMENT_ACCOUNT_ID", Needed: ByEventWorker | ByUsageWorker, By: ByHTTP | ByEventWorker | ByUsageWorker | ByLocal},
	// the CloudFormation stack's name (`AWS::StackName`): the usage worker adds only lines of the
	// stack's own log groups, which CloudFormation names `<stack>-<logical id>-<suffix>`
	{Name: "STACK_NAME", Needed: ByUsageWorker, By: ByUsageWorker},
	// the IAM principals the operator's routes admit, comma-separated ARNs (template parameter
	// `OperatorPrincipals`, default the account's root): `arn:<partition>:iam::<account>:root` is
	// any principal of that account, a `user/…` ARN that user, a `role/…` ARN every session of
	// that role (`arn:<partition>:sts::<account>:assumed-role/<role name>/<session>`)
	{Name: "OPERATOR_PRINCIPALS", Needed: ByOperator, By: ByOperator},
	// the events queue: committed events (from the table's stream) and per-destination deliveries;
	// locally also the stream reader's target (`local`: made at start)
	{Name: "EVENTS_QUEUE_URL", Needed: ByEventWorker, By: ByEventWorker | ByLocal},
	// the dead-letter queue of deliveries that exhausted their attempts
	{Name: "EVENTS_DLQ_URL", Needed: ByEventWorker, By: ByEventWorker | ByLocal},
	// attempts per delivery
	{Name: "DELIVERY_MAX_ATTEMPTS", Default: "8", By: ByEventWorker | ByLocal},
	// the base of a delivery's jittered exponential backoff, a Go duration
	{Name: "DELIVERY_BACKOFF", Default: "2s", By: ByEventWorker | ByLocal},
	// endpoint override of the Kinesis sink (tests point the sinks at local stand-ins)
	{Name: "SINK_ENDPOINT_KINESIS", By: ByEventWorker | ByLocal},
	// endpoint override of the Firehose sink
	{Name: "SINK_ENDPOINT_FIREHOSE", By: ByEventWorker | ByLocal},
	// endpoint override of the CloudWatch Logs sink
	{Name: "SINK_ENDPOINT_LOGS", By: ByEventWorker | ByLocal},
	// endpoint override of STS (AssumeRole of role targets)
	{Name: "SINK_ENDPOINT_STS", By: ByEventWorker | ByLocal},
	// replaces `https://http-intake.logs.<ddsite>`
	{Name: "SINK_ENDPOINT_DATADOG", By: ByEventWorker | ByLocal},
	// replaces `https://login.microsoftonline.com` (token requests)
	{Name: "SINK_ENDPOINT_AZURE_LOGIN", By: ByEventWorker | ByLocal},
	// replaces the scheme and host of a target's `logs_ingestion_uri`
	{Name: "SINK_ENDPOINT_AZURE_INGESTION", By: ByEventWorker | ByLocal},
	// the certificate jobs queue (the CertJobsPipe's target; `local`: made at start)
	{Name: "CERT_JOBS_QUEUE_URL", Needed: ByCertWorker, By: ByCertWorker | ByLocal},
	// the certificate jobs' dead-letter queue (`local`: made at start; `make sam-local` passes it on)
	{Name: "CERT_JOBS_DLQ_URL", By: ByLocal},
	// the ACME directory certificates are ordered from (template parameter `AcmeDirectory`; pebble's
	// under `make run` and tests)
	{Name: "ACME_DIRECTORY", Default: "https://acme-v02.api.letsencrypt.org/directory", By: ByCertWorker | ByLocal | ByTests},
	// extra TLS roots the ACME directory verifies against (pebble's under `make run` and tests)
	{Name: "ACME_CA_FILE", By: ByCertWorker | ByLocal | ByTests},
	// the Route 53 hosted zone DNS-01 challenge records are written to (the template's `HostedZone`)
	{Name: "HOSTED_ZONE_ID", Needed: ByCertWorker, By: ByCertWorker | ByLocal},
	// the Route 53 reusable delegation set agent ingress hosted zones are created on (template
	// parameter `DelegationSetId`); empty: none, and agent ingress certificates fail in AWS
	{Name: "DELEGATION_SET_ID", By: ByCertWorker | ByLocal},
	// pebble-challtestsrv's management API, where challenge records go instead of Route 53 (`make
	// run`, tests)
	{Name: "CHALLTESTSRV_URL", By: ByCertWorker | ByLocal | ByTests},
	// `host:port` of the DNS server users' `_acme-challenge` CNAMEs are checked through (default the
	// system's; challtestsrv's under `make run` and tests)
	{Name: "DNS_RESOLVER", By: ByCertWorker | ByLocal | ByTests},
	// how long before expiry a managed certificate is renewed (`renews_at`), a Go duration (template
	// parameter `CertRenewBefore`)
	{Name: "CERT_RENEW_BEFORE", Default: "720h", By: ByCertWorker | ByLocal},
	// the first retry delay of an `INTERNAL_ERROR`, doubling per attempt
	{Name: "CERT_RETRY_BACKOFF", Default: "1m", By: ByCertWorker | ByLocal},
	// the longest retry delay of an `INTERNAL_ERROR`
	{Name: "CERT_RETRY_MAX_BACKOFF", Default: "6h", By: ByCertWorker | ByLocal},
	// the retry of a `DNS_ERROR` without a PATCH
	{Name: "CERT_DNS_RETRY", Default: "24h", By: ByCertWorker | ByLocal},
	// how long a tunnel session lives without a heartbeat from its tunnel server, a Go duration: a
	// heartbeat renews it once less than half is left, and the scheduler sweeps a session whose
	// lease lapsed (sized for frpc's `transport.heartbeatInterval` of 30 s; set frps's
	// `transport.heartbeatTimeout` to it)
	{Name: "TUNNEL_LEASE", Default: "90s", By: ByTunnelPlugin | ByLocal},
	// the local server's port
	{Name: "PORT", Default: "8080", By: ByLocal},
	// where the local server writes its admin token and operator credentials and the stack its
	// pid files and logs
	{Name: "STATE_DIR", Default: ".local", By: ByLocal | ByTests},
	// the local queues' name prefix (`<prefix>-events`, `-events-dlq`, `-cert-jobs`, `-cert-jobs-dlq`)
	{Name: "QUEUE_PREFIX", Default: "tunnelapi", By: ByLocal},
	// how often `make run` runs the scheduler, a Go duration (the template's schedule is every 5
	// minutes)
	{Name: "SCHEDULE_EVERY", Default: "1m", By: ByLocal},
	// the port `make run`'s frps takes agents' (frpc's) connections on, on 127.0.0.1
	{Name: "FRP_BIND_PORT", Default: "7000", By: ByLocal},
	// the port `make run`'s frps serves its HTTP virtual hosts on (tunnels under `BASE_DOMAIN`)
	{Name: "FRP_VHOST_HTTP_PORT", Default: "7080", By: ByLocal},
	// `before-response` or `after-response`: exit right after a mutation commits, before or after its
	// response is written (crash tests)
	{Name: "FAULT_CRASH_AT", By: ByLocal},
	// the address the SQS emulator listens on (`infra/stack/stack.sh`; `0.0.0.0` for `sam local`)
	{Name: "STACK_LISTEN", Default: "127.0.0.1", By: ByLocal | ByTests},
	// pebble's management API (its root)
	{Name: "PEBBLE_MANAGEMENT", By: ByTests},
	// set by `make test`: a test missing a service of the stack fails instead of skipping
	{Name: "REQUIRE_STACK", By: ByTests},
	// set: the service under test logs (to stderr) instead of staying silent
	{Name: "TEST_LOG", By: ByTests},
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
