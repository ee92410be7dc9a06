// Package app lists every family and worker of the service. Everything that must agree on them
// reads these lists: the local all-in-one server, the test stack, the generator and the tests.
//
// Adding a family means adding its package under shared/families with its resource.Descriptor
// (what its API is, served by resource.Bind; see package resource) and its line in the list of
// functions (the Lambda serving it and how that is deployed); go generate writes
// functions/<Dir>/main.go, the Makefile's FUNCTIONS (functions.mk), the function's resource,
// log group, alarm and dashboard lines in template.yaml, its event kinds in audit.AuditKinds,
// and skeleton sample events in events/<Dir>/ (see shared/app/gen). The tests here fail until
// the generated files are current and on any route added to a mux by hand.
package app

//go:generate go run ./gen -root ../..

import (
	"time"

	"tunnelapi/shared/families/abuse"
	"tunnelapi/shared/families/access"
	"tunnelapi/shared/families/backends"
	"tunnelapi/shared/families/domains"
	"tunnelapi/shared/families/edges"
	"tunnelapi/shared/families/endpoints"
	"tunnelapi/shared/families/eventsub"
	"tunnelapi/shared/families/httpsedges"
	"tunnelapi/shared/families/k8soperators"
	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/families/sshcerts"
	"tunnelapi/shared/families/sshcredentials"
	"tunnelapi/shared/families/tlscerts"
	"tunnelapi/shared/families/tunnels"
	"tunnelapi/shared/families/vaults"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/stream"
	"tunnelapi/shared/workers/certs"
	"tunnelapi/shared/workers/delivery"
	"tunnelapi/shared/workers/frpplugin"
	"tunnelapi/shared/workers/operator"
	"tunnelapi/shared/workers/scheduler"
	"tunnelapi/shared/workers/usage"
)

// functions are the HTTP Lambdas of the service, each with the families it serves: adding a
// family is one line here (or one more family in a line). Their order is that of Families.
var functions = []Function{
	{Name: "ApiKeysFunction", Dir: "api_keys", Families: of(principals.APIKeysDescriptor)},
	{Name: "CredentialsFunction", Dir: "credentials", Families: of(principals.CredentialsDescriptor)},
	{Name: "BotUsersFunction", Dir: "bot_users", Families: of(principals.BotUsersDescriptor)},
	{Name: "ServiceUsersFunction", Dir: "service_users", Families: of(principals.ServiceUsersDescriptor)},
	{Name: "SSHCredentialsFunction", Dir: "ssh_credentials", Families: of(sshcredentials.SSHCredentialsDescriptor)},
	{Name: "IPPoliciesFunction", Dir: "ip_policies", Families: of(access.IPPoliciesDescriptor)},
	{Name: "IPPolicyRulesFunction", Dir: "ip_policy_rules", Families: of(access.IPPolicyRulesDescriptor)},
	{Name: "IPRestrictionsFunction", Dir: "ip_restrictions", Families: of(access.IPRestrictionsDescriptor)},
	{Name: "TunnelGroupBackendsFunction", Dir: "tunnel_group_backends", Families: of(backends.TunnelGroupBackendsDescriptor)},
	{Name: "StaticBackendsFunction", Dir: "static_backends", Families: of(backends.StaticBackendsDescriptor)},
	{Name: "HTTPResponseBackendsFunction", Dir: "http_response_backends", Families: of(backends.HTTPResponseBackendsDescriptor)},
	{Name: "FailoverBackendsFunction", Dir: "failover_backends", Families: of(backends.FailoverBackendsDescriptor)},
	{Name: "WeightedBackendsFunction", Dir: "weighted_backends", Families: of(backends.WeightedBackendsDescriptor)},
	{Name: "EndpointsFunction", Dir: "endpoints", Families: of(endpoints.EndpointsDescriptor)},
	{Name: "EventDestinationsFunction", Dir: "event_destinations", Families: of(eventsub.EventDestinationsDescriptor)},
	{Name: "EventSubscriptionsFunction", Dir: "event_subscriptions", Families: of(eventsub.EventSubscriptionsDescriptor)},
	{Name: "TLSCertificatesFunction", Dir: "tls_certificates", Families: of(tlscerts.TLSCertificatesDescriptor)},
	{Name: "CertificateAuthoritiesFunction", Dir: "certificate_authorities", Families: of(tlscerts.CertificateAuthoritiesDescriptor)},
	// Generating an RSA 4096 key takes up to seconds of CPU: more memory (hence CPU) and the
	// HTTP API's longest timeout.
	{Name: "SSHCertificateAuthoritiesFunction", Dir: "ssh_certificate_authorities", Timeout: 29 * time.Second, MemoryMB: 1024,
		Families: of(sshcerts.SSHCertificateAuthoritiesDescriptor)},
	{Name: "SSHUserCertificatesFunction", Dir: "ssh_user_certificates", Families: of(sshcerts.SSHUserCertificatesDescriptor)},
	{Name: "SSHHostCertificatesFunction", Dir: "ssh_host_certificates", Families: of(sshcerts.SSHHostCertificatesDescriptor)},
	{Name: "ReservedAddrsFunction", Dir: "reserved_addrs", Families: of(domains.ReservedAddrsDescriptor)},
	{Name: "ReservedDomainsFunction", Dir: "reserved_domains", Families: of(domains.ReservedDomainsDescriptor)},
	{Name: "AgentIngressesFunction", Dir: "agent_ingresses", Families: of(domains.AgentIngressesDescriptor)},
	{Name: "TLSEdgesFunction", Dir: "tls_edges", Families: of(edges.TLSEdgesDescriptor)},
	{Name: "TCPEdgesFunction", Dir: "tcp_edges", Families: of(edges.TCPEdgesDescriptor)},
	{Name: "HTTPSEdgesFunction", Dir: "https_edges", Families: of(httpsedges.HTTPSEdgesDescriptor)},
	{Name: "VaultsFunction", Dir: "vaults", Families: of(vaults.VaultsDescriptor, vaults.SecretsDescriptor)},
	{Name: "AbuseReportsFunction", Dir: "abuse_reports", Families: of(abuse.ReportsDescriptor)},
	{Name: "KubernetesOperatorsFunction", Dir: "kubernetes_operators", Families: of(k8soperators.KubernetesOperatorsDescriptor)},
	{Name: "TunnelSessionsFunction", Dir: "tunnel_sessions", Families: of(tunnels.TunnelSessionsDescriptor)},
	{Name: "TunnelsFunction", Dir: "tunnels", Families: of(tunnels.TunnelsDescriptor)},
}

// of is the families a Function serves, as its line lists them.
func of(families ...*resource.Descriptor) []*resource.Descriptor { return families }

// Families is every resource family of the service, in the order of Functions.
var Families = familiesOf(functions)

// familiesOf is the families fs serve, in their order.
func familiesOf(fs []Function) []*resource.Descriptor {
	var out []*resource.Descriptor
	for _, f := range fs {
		out = append(out, f.Families...)
	}
	return out
}

// Function is one HTTP Lambda and the families it serves: how they are deployed, which their
// descriptors leave out.
type Function struct {
	Name string // logical id in template.yaml
	Dir  string // folder under functions/
	// Timeout is the function's Timeout in template.yaml when it is not DefaultTimeout (the
	// template's Globals'): every request of its families must be answered within it.
	Timeout time.Duration
	// MemoryMB is the function's MemorySize in template.yaml when it is not the Globals' (more
	// memory is more CPU, for families whose requests compute much).
	MemoryMB int
	Families []*resource.Descriptor
}

// DefaultTimeout is the Timeout of template.yaml's Globals (shared/app/gen refuses others): a
// function's, unless it says otherwise.
const DefaultTimeout = 10 * time.Second

// Budget is how long one request of f's families may run: its timeout.
func (f Function) Budget() time.Duration {
	if f.Timeout > 0 {
		return f.Timeout
	}
	return DefaultTimeout
}

// Functions is every HTTP function of the service, in the order of Families.
func Functions() []Function { return functions }

// Budgets are the budgets of every family's requests by its collection path, for a server of
// them all (api.Server.Budgets): the Budget of the function serving it.
func Budgets() map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, f := range functions {
		for _, d := range f.Families {
			out[d.Path] = f.Budget()
		}
	}
	return out
}

// PreflightFunction is the function API Gateway sends every CORS preflight to: template.yaml
// routes PreflightRoute to it. Every function's handler answers preflights before routing
// (api.Server.Front), so any function would do; the template's HttpApi has no
// CorsConfiguration because API Gateway cannot echo any origin with credentials allowed, and
// it would replace the headers the handlers send.
const (
	PreflightFunction = "ApiKeysFunction"
	PreflightRoute    = "OPTIONS /{proxy+}"
)

// Worker is one non-HTTP Lambda, run by a queue or a schedule rather than by routes.
type Worker struct {
	Name string // logical id in template.yaml
	Dir  string // folder under functions/
	// Trigger is what runs it: "SQS", "Schedule" or "HttpApi", the type of its event in
	// template.yaml, or
	// "Logs", the destination of a subscription filter on every other function's log group
	// (generated into template.yaml).
	Trigger string
	// Main is the function functions/<Dir>/main.go calls, or, for the operator, Serve is: it is
	// called with the collections of Families (operator.Collection), each named by its prefix
	// and release function.
	Main  func()
	Serve func(...operator.Collection)
	// Kind is the kind of process it is, as package config declares who reads each variable.
	Kind config.Process
}

// Workers is every non-HTTP function of the service.
var Workers = []Worker{
	{Name: "EventWorkerFunction", Dir: "event_worker", Trigger: "SQS", Main: delivery.Main, Kind: config.ByEventWorker},
	{Name: "CertWorkerFunction", Dir: "cert_worker", Trigger: "SQS", Main: certs.Main, Kind: config.ByCertWorker},
	{Name: "SchedulerFunction", Dir: "scheduler", Trigger: "Schedule", Main: scheduler.Main, Kind: config.ByScheduler},
	{Name: "UsageWorkerFunction", Dir: "usage_worker", Trigger: "Logs", Main: usage.Main, Kind: config.ByUsageWorker},
	TunnelPlugin,
}

// TunnelPlugin is the function answering tunnel servers (package frpplugin): its one route
// (frpplugin.Route) is authorized by the tunnel-server keys it checks itself, not by IAM or
// the tenants' API keys.
var TunnelPlugin = Worker{Name: "TunnelPluginFunction", Dir: "tunnel_plugin", Trigger: "HttpApi", Main: frpplugin.Main, Kind: config.ByTunnelPlugin}

// Operator is the function serving the operator's interface (package operator): routes of its
// own (operator.Routes), authorized by IAM in template.yaml, apart from the tenants' API. Its main
// calls operator.Main with the collections of Families, whose resources an erasure frees.
var Operator = Worker{Name: "OperatorFunction", Dir: "operator", Trigger: "HttpApi", Serve: operator.Main, Kind: config.ByOperator}

// Pipe is one consumer of the table's stream: in AWS the EventBridge Pipe of that logical id
// in template.yaml, locally a stream reader applying the same filter and input template.
type Pipe struct {
	Name  string // logical id of the AWS::Pipes::Pipe in template.yaml
	Queue string // logical id of its target queue
	// QueueEnv names the variable holding the target queue's URL locally.
	QueueEnv string
	Consumer stream.Consumer
}

// Pipes is every consumer of the table's stream. Work that must follow a commit (another
// queue's jobs) adds one entry here: its stream.Consumer (a pattern selecting its items, an input
// template shaping the message), the logical ids of its Pipe and target queue in template.yaml,
// and the variable naming the queue's URL locally. The local server runs a reader for every
// entry (refusing to start without its queue), and package stream's tests fail until
// template.yaml declares the same Pipe, reading the table's stream into that queue, whose filter and input
// template decide and shape every real stream record as the local consumer does.
var Pipes = []Pipe{
	{Name: "EventsPipe", Queue: "EventsQueue", QueueEnv: "EVENTS_QUEUE_URL", Consumer: stream.Events},
	{Name: "CertJobsPipe", Queue: "CertJobsQueue", QueueEnv: "CERT_JOBS_QUEUE_URL", Consumer: certs.JobsConsumer},
}
