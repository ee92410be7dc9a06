// Package app lists every family and worker of the service. Everything that must agree on them
// reads these lists: the local all-in-one server, the test stack, the generator and the tests.
//
// Adding a family means adding its package under shared/families with its resource.Descriptor
// (served by resource.Bind: its hooks and any extra routes declared as resource.Route data;
// see package resource) and an entry in Families; go generate writes functions/<Dir>/main.go,
// the Makefile's FUNCTIONS (functions.mk), the function's resource, log group, alarm and
// dashboard lines in template.yaml, its event kinds in audit.AuditKinds, and skeleton sample
// events in events/<Dir>/ (see shared/app/gen). The tests here fail until the generated files are current and on any route
// added to a mux by hand.
package app

//go:generate go run ./gen -root ../..

import (
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

// Families is every resource family of the service.
var Families = []*resource.Descriptor{
	principals.APIKeysDescriptor,
	principals.CredentialsDescriptor,
	principals.BotUsersDescriptor,
	principals.ServiceUsersDescriptor,
	sshcredentials.SSHCredentialsDescriptor,
	access.IPPoliciesDescriptor,
	access.IPPolicyRulesDescriptor,
	access.IPRestrictionsDescriptor,
	backends.TunnelGroupBackendsDescriptor,
	backends.StaticBackendsDescriptor,
	backends.HTTPResponseBackendsDescriptor,
	backends.FailoverBackendsDescriptor,
	backends.WeightedBackendsDescriptor,
	endpoints.EndpointsDescriptor,
	eventsub.EventDestinationsDescriptor,
	eventsub.EventSubscriptionsDescriptor,
	tlscerts.TLSCertificatesDescriptor,
	tlscerts.CertificateAuthoritiesDescriptor,
	sshcerts.SSHCertificateAuthoritiesDescriptor,
	sshcerts.SSHUserCertificatesDescriptor,
	sshcerts.SSHHostCertificatesDescriptor,
	domains.ReservedAddrsDescriptor,
	domains.ReservedDomainsDescriptor,
	domains.AgentIngressesDescriptor,
	edges.TLSEdgesDescriptor,
	edges.TCPEdgesDescriptor,
	httpsedges.HTTPSEdgesDescriptor,
	vaults.VaultsDescriptor,
	vaults.SecretsDescriptor,
	abuse.ReportsDescriptor,
	k8soperators.KubernetesOperatorsDescriptor,
	tunnels.TunnelSessionsDescriptor,
	tunnels.TunnelsDescriptor,
}

// Function is one HTTP Lambda and the families it serves.
type Function struct {
	Name     string // logical id in template.yaml
	Dir      string // folder under functions/
	Families []*resource.Descriptor
}

// Functions groups Families by the Lambda that serves them, in the order of Families.
func Functions() []Function { return FunctionsOf(Families) }

// FunctionsOf groups families by the Lambda that serves them, in their order.
func FunctionsOf(families []*resource.Descriptor) []Function {
	var out []Function
	index := map[string]int{}
	for _, d := range families {
		i, ok := index[d.Function]
		if !ok {
			i = len(out)
			index[d.Function] = i
			out = append(out, Function{Name: d.Function, Dir: d.Dir})
		}
		out[i].Families = append(out[i].Families, d)
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
