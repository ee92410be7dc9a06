// Package app lists every function of the service: its name in template.yaml, its folder under
// functions/, and its route registration. The local all-in-one server serves them all, and the
// template test checks each against template.yaml.
package app

import (
	"tunnelapi/shared/lambdahttp"
	"tunnelapi/shared/principals"
	"tunnelapi/shared/sshcerts"
	"tunnelapi/shared/tlscerts"
)

// Function is one HTTP Lambda.
type Function struct {
	Name     string // logical id in template.yaml
	Dir      string // folder under functions/
	Register lambdahttp.Register
}

// Functions is every HTTP function of the service.
var Functions = []Function{
	{Name: "ApiKeysFunction", Dir: "api_keys", Register: principals.RegisterAPIKeys},
	{Name: "CredentialsFunction", Dir: "credentials", Register: principals.RegisterCredentials},
	{Name: "BotUsersFunction", Dir: "bot_users", Register: principals.RegisterBotUsers},
	{Name: "TLSCertificatesFunction", Dir: "tls_certificates", Register: tlscerts.RegisterTLSCertificates},
	{Name: "CertificateAuthoritiesFunction", Dir: "certificate_authorities", Register: tlscerts.RegisterCertificateAuthorities},
	{Name: "SSHCertificateAuthoritiesFunction", Dir: "ssh_certificate_authorities", Register: sshcerts.RegisterAuthorities},
	{Name: "SSHUserCertificatesFunction", Dir: "ssh_user_certificates", Register: sshcerts.RegisterUserCertificates},
	{Name: "SSHHostCertificatesFunction", Dir: "ssh_host_certificates", Register: sshcerts.RegisterHostCertificates},
}

// Registers returns the registrations of every function, for the local server.
func Registers() []lambdahttp.Register {
	out := make([]lambdahttp.Register, len(Functions))
	for i, f := range Functions {
		out[i] = f.Register
	}
	return out
}
