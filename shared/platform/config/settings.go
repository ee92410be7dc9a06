package config

import (
	"github.com/aws/aws-sdk-go-v2/aws"

	"cmp"
	"encoding/hex"
	"log/slog"
	"time"

	"tunnelapi/shared/platform/awsconfig"
	"tunnelapi/shared/platform/ratelimit"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/platform/store"
)

// Common is what every function reads.
type Common struct {
	// LogLevel is the least severe level logged (LOG_LEVEL).
	LogLevel slog.Level
	// AWS is the region (AWS_REGION, else AWS_DEFAULT_REGION) and credentials, read from the
	// environment only.
	AWS awsconfig.Settings
	// Table is the DynamoDB table (TABLE_NAME); DynamoDBEndpoint and SQSEndpoint point the
	// clients at local emulators (empty in AWS).
	Table, DynamoDBEndpoint, SQSEndpoint string
	// Seal says how secrets are sealed (SEAL_KMS_KEY_ID, SEAL_LOCAL_KEY, SEAL_KEY_FILE).
	Seal seal.Settings
	// OutboxRetention is how long an event's outbox item stays (OUTBOX_RETENTION).
	OutboxRetention time.Duration
}

// common is the part every function's configuration has (Start's constraint).
func (c Common) common() Common { return c }

// AWSConfig is the SDK configuration of c's region and credentials.
func (c Common) AWSConfig() aws.Config { return awsconfig.New(c.AWS) }

// StoreOptions are what store.Open reaches c's table with.
func (c Common) StoreOptions() store.Options {
	cfg := c.AWSConfig()
	return store.Options{Table: c.Table, Endpoint: c.DynamoDBEndpoint, Config: &cfg}
}

// HTTP is the configuration of an HTTP function (and of the local server's API).
type HTTP struct {
	Common
	// RateLimit is the per-account rate limit (RATE_LIMIT); the zero Policy is off.
	RateLimit ratelimit.Policy
	// FamilySettings are the sections the function's families read.
	FamilySettings FamilySettings
}

// FamilySettings are the settings only some families read (through resource.Kit): each is a
// Section, nil unless one of the function's families reads it (resource.Descriptor.Reads).
type FamilySettings struct {
	Domains    *Domains
	Deployment *Deployment
}

// Section is settings that only some families read. An HTTP function parses a section, and
// links its parser, only when a family it serves names the section (resource.Descriptor.Reads):
// most functions would carry the domain settings' parser for nothing.
type Section struct {
	parse func(*parser, *FamilySettings)
}

// DomainSettings is FamilySettings.Domains: BASE_DOMAIN, DNS_ZONE, NAME_SERVERS, REGIONS and
// ADDR_POOLS, read by the domain, address, agent ingress and edge families.
var DomainSettings = Section{parse: func(p *parser, f *FamilySettings) {
	d := p.domains()
	f.Domains = &d
}}

// Deployment is FamilySettings.Deployment: what a family knows of the deployment itself.
type Deployment struct {
	// AccountID is the AWS account the deployment runs in (DEPLOYMENT_ACCOUNT_ID); empty when
	// unknown (locally).
	AccountID string
}

// DeploymentSettings is FamilySettings.Deployment: DEPLOYMENT_ACCOUNT_ID, read by the event
// destinations family.
var DeploymentSettings = Section{parse: func(p *parser, f *FamilySettings) {
	f.Deployment = &Deployment{AccountID: p.awsAccount("DEPLOYMENT_ACCOUNT_ID")}
}}

// EventWorker is the configuration of the event worker.
type EventWorker struct {
	Common
	// QueueURL and DLQURL are the events queue and its dead-letter queue.
	QueueURL, DLQURL string
	// MaxAttempts and Backoff are the retry policy of a delivery.
	MaxAttempts int
	Backoff     time.Duration
	Sinks       Sinks
	// AccountID is the AWS account the deployment runs in (DEPLOYMENT_ACCOUNT_ID): its roles are
	// never assumed. Empty when unknown (locally).
	AccountID string
}

// Sinks are the endpoint overrides of the event sinks (SINK_ENDPOINT_*), empty for the real
// services.
type Sinks struct {
	Kinesis, Firehose, Logs, STS string
	Datadog, AzureLogin          string
	AzureIngestion               string
}

// CertWorker is the configuration of the certificate worker.
type CertWorker struct {
	Common
	// QueueURL is the certificate jobs queue.
	QueueURL string
	// ACMEDirectory is the ACME directory; ACMECAFile extra roots to trust for it.
	ACMEDirectory, ACMECAFile string
	// HostedZoneID (Route 53) or ChallTestSrvURL (locally) is where challenge records go;
	// DelegationSetID is the delegation set of agent ingress zones.
	HostedZoneID, DelegationSetID, ChallTestSrvURL string
	// DNSResolver checks users' _acme-challenge CNAMEs (empty: the system's).
	DNSResolver string
	// RenewBefore, RetryBackoff, RetryMaxBackoff and DNSRetry time renewals and retries.
	RenewBefore, RetryBackoff, RetryMaxBackoff, DNSRetry time.Duration
	Domains                                              Domains
}

// Scheduler is the configuration of the scheduler.
type Scheduler struct {
	Common
}

// Operator is the configuration of the operator's function.
type Operator struct {
	Common
	// Principals are the IAM principals (ARNs of an account's root, a user or a role) it
	// admits (OPERATOR_PRINCIPALS).
	Principals []string
	// Regions are the region codes a tunnel-server key may name (REGIONS).
	Regions []string
}

// TunnelPlugin is the configuration of the function answering tunnel servers (package
// frpplugin).
type TunnelPlugin struct {
	Common
	// Domains are the deployment's domains, regions and address pools: what a tunnel may bind.
	Domains Domains
	// Lease is how long a tunnel session lives without a heartbeat (TUNNEL_LEASE).
	Lease time.Duration
}

// UsageWorker is the configuration of the usage worker.
type UsageWorker struct {
	Common
	// AccountID (DEPLOYMENT_ACCOUNT_ID) owns, and StackName (STACK_NAME) names, the log groups
	// whose usage lines it adds.
	AccountID, StackName string
}

// Local is the configuration of the local server: everything the functions it stands in for
// read, and its own settings.
type Local struct {
	HTTP        HTTP
	EventWorker EventWorker
	CertWorker  CertWorker
	// TunnelPlugin is what the tunnel servers' plugin reads.
	TunnelPlugin TunnelPlugin
	// CertJobsDLQURL is the certificate jobs' dead-letter queue.
	CertJobsDLQURL string
	// Port is the server's port; StateDir where it writes its admin token; QueuePrefix its
	// queues' name prefix.
	Port, StateDir, QueuePrefix string
	// ScheduleEvery is how often it runs the scheduler.
	ScheduleEvery time.Duration
	// FaultCrashAt is "", "before-response" or "after-response" (crash tests).
	FaultCrashAt string
	// StackListen is the address the local SQS emulator listens on.
	StackListen string
	// FRPBindPort and FRPVhostHTTPPort are the ports of make run's frps: agents' connections
	// and HTTP virtual hosts.
	FRPBindPort, FRPVhostHTTPPort int
}

// Stack is what the test support reads of the test stack.
type Stack struct {
	// RequireStack: a test missing a service of the stack fails instead of skipping.
	RequireStack bool
	// TestLog: the service under test logs instead of staying silent.
	TestLog bool
}

func (l Local) common() Common { return l.HTTP.Common }

// LoadHTTP parses the configuration of an HTTP function serving every family, every Section
// included (the tests; the local server's LoadLocal parses the same).
func LoadHTTP(lookup Lookup) (HTTP, error) {
	return HTTPLoader(DomainSettings, DeploymentSettings)(lookup)
}

// HTTPLoader is the parser of the configuration of an HTTP function whose families read
// sections (serve.Loader): the common settings, the rate limit and those sections only.
func HTTPLoader(sections ...Section) func(Lookup) (HTTP, error) {
	return func(lookup Lookup) (HTTP, error) {
		p := &parser{lookup: lookup, as: ByHTTP}
		c := p.http(sections...)
		return c, p.err()
	}
}

// LoadEventWorker parses the configuration of the event worker.
func LoadEventWorker(lookup Lookup) (EventWorker, error) {
	p := &parser{lookup: lookup, as: ByEventWorker}
	c := p.eventWorker()
	return c, p.err()
}

// LoadCertWorker parses the configuration of the certificate worker.
func LoadCertWorker(lookup Lookup) (CertWorker, error) {
	p := &parser{lookup: lookup, as: ByCertWorker}
	c := p.certWorker()
	return c, p.err()
}

// LoadScheduler parses the configuration of the scheduler.
func LoadScheduler(lookup Lookup) (Scheduler, error) {
	p := &parser{lookup: lookup, as: ByScheduler}
	c := Scheduler{p.common()}
	return c, p.err()
}

// LoadOperator parses the configuration of the operator's function.
func LoadOperator(lookup Lookup) (Operator, error) {
	p := &parser{lookup: lookup, as: ByOperator}
	c := Operator{Common: p.common(), Principals: p.principals("OPERATOR_PRINCIPALS"), Regions: p.regions()}
	return c, p.err()
}

// LoadTunnelPlugin parses the configuration of the tunnel servers' plugin function.
func LoadTunnelPlugin(lookup Lookup) (TunnelPlugin, error) {
	p := &parser{lookup: lookup, as: ByTunnelPlugin}
	c := p.tunnelPlugin()
	return c, p.err()
}

func (p *parser) tunnelPlugin() TunnelPlugin {
	return TunnelPlugin{Common: p.common(), Domains: p.domains(), Lease: p.duration("TUNNEL_LEASE")}
}

// LoadUsageWorker parses the configuration of the usage worker.
func LoadUsageWorker(lookup Lookup) (UsageWorker, error) {
	p := &parser{lookup: lookup, as: ByUsageWorker}
	c := UsageWorker{Common: p.common(), AccountID: p.awsAccount("DEPLOYMENT_ACCOUNT_ID"), StackName: p.str("STACK_NAME")}
	return c, p.err()
}

// LoadLocal parses the configuration of the local server.
func LoadLocal(lookup Lookup) (Local, error) {
	p := &parser{lookup: lookup, as: ByLocal}
	c := Local{HTTP: p.http(DomainSettings, DeploymentSettings), EventWorker: p.eventWorker(), CertWorker: p.certWorker(),
		TunnelPlugin: p.tunnelPlugin(), CertJobsDLQURL: p.str("CERT_JOBS_DLQ_URL"), Port: p.str("PORT"), StateDir: p.str("STATE_DIR"),
		QueuePrefix: p.str("QUEUE_PREFIX"), ScheduleEvery: p.duration("SCHEDULE_EVERY"),
		FaultCrashAt: p.oneOf("FAULT_CRASH_AT", "before-response", "after-response"), StackListen: p.str("STACK_LISTEN")}
	c.FRPBindPort, c.FRPVhostHTTPPort = p.port("FRP_BIND_PORT"), p.port("FRP_VHOST_HTTP_PORT")
	return c, p.err()
}

// LoadStack parses what the test support reads.
func LoadStack(lookup Lookup) (Stack, error) {
	p := &parser{lookup: lookup, as: ByTests}
	c := Stack{RequireStack: p.flag("REQUIRE_STACK"), TestLog: p.flag("TEST_LOG")}
	return c, p.err()
}

// Value is the value of the variable name as set for the kind of process as ("" when unset:
// not its default), for what asks for variables by name: the test support (is a service of
// the stack there?) and `make sam-local` (which passes the local server's own settings on to
// the functions). A variable not declared for as is an error.
func Value(lookup Lookup, as Process, name string) (string, error) {
	p := &parser{lookup: lookup, as: as}
	v, _ := p.set(name)
	return v, p.err()
}

func (p *parser) common() Common {
	c := Common{LogLevel: p.level("LOG_LEVEL"), Table: p.str("TABLE_NAME"),
		DynamoDBEndpoint: p.str("DYNAMODB_ENDPOINT"), SQSEndpoint: p.str("SQS_ENDPOINT"),
		OutboxRetention: p.duration("OUTBOX_RETENTION")}
	c.AWS = awsconfig.Settings{Region: cmp.Or(p.str("AWS_REGION"), p.str("AWS_DEFAULT_REGION")),
		AccessKeyID: p.str("AWS_ACCESS_KEY_ID"), SecretAccessKey: p.str("AWS_SECRET_ACCESS_KEY"), SessionToken: p.str("AWS_SESSION_TOKEN")}
	c.Seal = seal.Settings{KMSKeyID: p.str("SEAL_KMS_KEY_ID"), KeyFile: p.str("SEAL_KEY_FILE")}
	if key := p.str("SEAL_LOCAL_KEY"); key != "" {
		if raw, err := hex.DecodeString(key); err == nil && len(raw) == 32 {
			c.Seal.LocalKey = raw
		} else {
			p.fail("SEAL_LOCAL_KEY", "", "must be 64 hex digits (a 32-byte key)")
		}
	}
	return c
}

func (p *parser) http(sections ...Section) HTTP {
	c := HTTP{Common: p.common()}
	for _, s := range sections {
		s.parse(p, &c.FamilySettings)
	}
	if s := p.str("RATE_LIMIT"); s != "" {
		policy, err := ratelimit.Parse(s) // its errors name RATE_LIMIT
		if err != nil {
			p.errs = append(p.errs, err)
		}
		c.RateLimit = policy
	}
	return c
}

func (p *parser) eventWorker() EventWorker {
	return EventWorker{Common: p.common(), QueueURL: p.str("EVENTS_QUEUE_URL"), DLQURL: p.str("EVENTS_DLQ_URL"),
		MaxAttempts: p.count("DELIVERY_MAX_ATTEMPTS"), Backoff: p.duration("DELIVERY_BACKOFF"),
		Sinks: Sinks{Kinesis: p.str("SINK_ENDPOINT_KINESIS"), Firehose: p.str("SINK_ENDPOINT_FIREHOSE"),
			Logs: p.str("SINK_ENDPOINT_LOGS"), STS: p.str("SINK_ENDPOINT_STS"), Datadog: p.str("SINK_ENDPOINT_DATADOG"),
			AzureLogin: p.str("SINK_ENDPOINT_AZURE_LOGIN"), AzureIngestion: p.str("SINK_ENDPOINT_AZURE_INGESTION")},
		AccountID: p.awsAccount("DEPLOYMENT_ACCOUNT_ID")}
}

func (p *parser) certWorker() CertWorker {
	return CertWorker{Common: p.common(), QueueURL: p.str("CERT_JOBS_QUEUE_URL"),
		ACMEDirectory: p.str("ACME_DIRECTORY"), ACMECAFile: p.str("ACME_CA_FILE"),
		HostedZoneID: p.str("HOSTED_ZONE_ID"), DelegationSetID: p.str("DELEGATION_SET_ID"),
		ChallTestSrvURL: p.str("CHALLTESTSRV_URL"), DNSResolver: p.str("DNS_RESOLVER"),
		RenewBefore: p.duration("CERT_RENEW_BEFORE"), RetryBackoff: p.duration("CERT_RETRY_BACKOFF"),
		RetryMaxBackoff: p.duration("CERT_RETRY_MAX_BACKOFF"), DNSRetry: p.duration("CERT_DNS_RETRY"),
		Domains: p.domains()}
}
