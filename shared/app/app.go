// Package app lists every function of the service: its name in template.yaml, its folder under
// functions/, and its route registration. The local all-in-one server serves them all, and the
// template test checks each against template.yaml.
package app

import (
	"tunnelapi/shared/families/access"
	"tunnelapi/shared/families/backends"
	"tunnelapi/shared/families/endpoints"
	"tunnelapi/shared/families/eventsub"
	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/families/sshcerts"
	"tunnelapi/shared/families/tlscerts"
	"tunnelapi/shared/platform/runtime"
	"tunnelapi/shared/workers/delivery"
	"tunnelapi/shared/workers/scheduler"
)

// Function is one HTTP Lambda.
type Function struct {
	Name     string // logical id in template.yaml
	Dir      string // folder under functions/
	Register runtime.Register
}

// Functions is every HTTP function of the service.
var Functions = []Function{
	{Name: "ApiKeysFunction", Dir: "api_keys", Register: principals.RegisterAPIKeys},
	{Name: "CredentialsFunction", Dir: "credentials", Register: principals.RegisterCredentials},
	{Name: "BotUsersFunction", Dir: "bot_users", Register: principals.RegisterBotUsers},
	{Name: "IPPoliciesFunction", Dir: "ip_policies", Register: access.RegisterIPPolicies},
	{Name: "IPPolicyRulesFunction", Dir: "ip_policy_rules", Register: access.RegisterIPPolicyRules},
	{Name: "IPRestrictionsFunction", Dir: "ip_restrictions", Register: access.RegisterIPRestrictions},
	{Name: "TunnelGroupBackendsFunction", Dir: "tunnel_group_backends", Register: backends.RegisterTunnelGroupBackends},
	{Name: "EndpointsFunction", Dir: "endpoints", Register: endpoints.RegisterEndpoints},
	{Name: "EventDestinationsFunction", Dir: "event_destinations", Register: eventsub.RegisterEventDestinations},
	{Name: "EventSubscriptionsFunction", Dir: "event_subscriptions", Register: eventsub.RegisterEventSubscriptions},
	{Name: "TLSCertificatesFunction", Dir: "tls_certificates", Register: tlscerts.RegisterTLSCertificates},
	{Name: "CertificateAuthoritiesFunction", Dir: "certificate_authorities", Register: tlscerts.RegisterCertificateAuthorities},
	{Name: "SSHCertificateAuthoritiesFunction", Dir: "ssh_certificate_authorities", Register: sshcerts.RegisterAuthorities},
	{Name: "SSHUserCertificatesFunction", Dir: "ssh_user_certificates", Register: sshcerts.RegisterUserCertificates},
	{Name: "SSHHostCertificatesFunction", Dir: "ssh_host_certificates", Register: sshcerts.RegisterHostCertificates},
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
	// Trigger is the type of its event in template.yaml: "SQS" or "Schedule".
	Trigger string
	// Main is the function functions/<Dir>/main.go calls.
	Main func()
}

// Workers is every non-HTTP function of the service.
var Workers = []Worker{
	{Name: "EventWorkerFunction", Dir: "event_worker", Trigger: "SQS", Main: delivery.Main},
	{Name: "SchedulerFunction", Dir: "scheduler", Trigger: "Schedule", Main: scheduler.Main},
}

// Registers returns the registrations of every function, for the local server.
func Registers() []runtime.Register {
	out := make([]runtime.Register, len(Functions))
	for i, f := range Functions {
		out[i] = f.Register
	}
	return out
}
