package terraform_test

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"net/http"
	"testing"

	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/testing/testkit"
)

// lifecycles are the families of the platform's newest Terraform provider, each in the forms
// its resources take, as TestLifecycle drives them.
var lifecycles = []testkit.LifecycleSpec{
	{Name: "api key", Path: "/api_keys", Create: body(map[string]any{"description": "ci", "metadata": `{"env":"ci"}`})},
	{Name: "api key without text", Path: "/api_keys", Create: body(map[string]any{})},
	{Name: "credential", Path: "/credentials", Create: body(map[string]any{"description": "agent", "acl": []string{"bind:*.example.com"}})},
	{Name: "credential without acl", Path: "/credentials", Create: body(map[string]any{}),
		Change: map[string]any{"acl": []string{"bind:app.example.com"}}},
	{Name: "bot user", Path: "/bot_users", Create: body(map[string]any{"name": "ci-bot"}),
		Change: map[string]any{"name": "ci-bot-renamed"}},
	{Name: "inactive bot user", Path: "/bot_users", Create: body(map[string]any{"name": "ci-bot", "active": false}),
		Change: map[string]any{"active": true}},
	{Name: "service user", Path: "/service_users", Create: body(map[string]any{"name": "ci-service"}),
		Change: map[string]any{"name": "ci-service-renamed"}},
	{Name: "inactive service user", Path: "/service_users", Create: body(map[string]any{"name": "ci-service", "active": false}),
		Change: map[string]any{"active": true}},
	{Name: "ssh credential", Path: "/ssh_credentials", Create: func(t *testing.T, _ *testkit.Account) any {
		return map[string]any{"description": "deploy", "metadata": `{"env":"ci"}`, "public_key": testkit.SSHKeygen(t, "-t", "ed25519"),
			"acl": []string{"bind:*.example.com", "bind:1.tcp.example.com:20002", "bind:env=prod"}}
	}},
	{Name: "ssh credential without acl", Path: "/ssh_credentials", Create: func(t *testing.T, a *testkit.Account) any {
		owner := created(t, a, "/service_users", map[string]any{"name": "deployer"})
		return map[string]any{"public_key": testkit.SSHKeygen(t, "-t", "rsa", "-b", "2048"), "owner_id": owner}
	}, Change: map[string]any{"acl": []string{"bind:app.example.com"}}},
	{Name: "certificate authority", Path: "/certificate_authorities", Create: func(t *testing.T, _ *testkit.Account) any {
		return map[string]any{"description": "ci", "ca_pem": selfSigned(t, "ca.example.com", true)}
	}},
	{Name: "tls certificate", Path: "/tls_certificates", Create: func(t *testing.T, _ *testkit.Account) any {
		cert, key, _ := testkit.SelfSigned(t, &x509.Certificate{Subject: pkix.Name{CommonName: "app.example.com"}, DNSNames: []string{"app.example.com"}})
		return map[string]any{"certificate_pem": cert, "private_key_pem": key}
	}},
	{Name: "ssh certificate authority", Path: "/ssh_certificate_authorities", Create: body(map[string]any{"private_key_type": "ed25519", "description": "ci"})},
	{Name: "ip policy", Path: "/ip_policies", Create: body(map[string]any{"description": "office"})},
	{Name: "ip policy rule", Path: "/ip_policy_rules", Create: func(t *testing.T, a *testkit.Account) any {
		return map[string]any{"cidr": "198.51.100.0/24", "action": "allow", "ip_policy_id": created(t, a, "/ip_policies", map[string]any{})}
	}, Change: map[string]any{"cidr": "198.51.101.0/24"}},
	{Name: "ip restriction", Path: "/ip_restrictions", Create: func(t *testing.T, a *testkit.Account) any {
		return map[string]any{"type": "dashboard", "enforced": true, "ip_policy_ids": []string{created(t, a, "/ip_policies", map[string]any{})}}
	}, Echo: map[string]func(map[string]any) any{"ip_policy_ids": testkit.EchoRefs("ip_policies")}},
	{Name: "cloud endpoint under a reserved wildcard", Path: "/endpoints", Create: func(t *testing.T, a *testkit.Account) any {
		parent, _ := a.ReserveWildcard(t)
		return map[string]any{"type": "cloud", "url": "https://lifecycle." + parent, "traffic_policy": "on_http_request:\n  - actions:\n      - type: deny\n"}
	}},
	{Name: "internal cloud endpoint", Path: "/endpoints", Create: body(map[string]any{"type": "cloud", "url": "https://lifecycle.internal",
		"traffic_policy": "on_http_request:\n  - actions:\n      - type: deny\n"})},
	{Name: "cloud endpoint on a reserved domain", Path: "/endpoints", Create: func(t *testing.T, a *testkit.Account) any {
		name, _ := a.ReserveDomain(t)
		return map[string]any{"type": "cloud", "url": "https://" + name, "pooling_enabled": true, "bindings": []string{"public"},
			"traffic_policy": "on_http_request:\n  - actions:\n      - type: deny\n"}
	}},
	{Name: "event destination", Path: "/event_destinations", Create: body(map[string]any{"format": "json", "target": map[string]any{
		"kinesis": map[string]any{"stream_arn": "arn:aws:kinesis:us-east-1:123456789012:stream/events",
			"auth": map[string]any{"role": map[string]any{"role_arn": "arn:aws:iam::123456789012:role/events"}}}}})},
	{Name: "event destination with a secret", Path: "/event_destinations", Create: body(map[string]any{"format": "json", "target": map[string]any{
		"firehose": map[string]any{"delivery_stream_arn": "arn:aws:firehose:us-east-1:123456789012:deliverystream/events",
			"auth": map[string]any{"creds": map[string]any{"aws_access_key_id": "AKIAIOSFODNN7EXAMPLE", "aws_secret_access_key": "lifecycle-secret"}}}}})},
	{Name: "event subscription", Path: "/event_subscriptions", Create: func(t *testing.T, a *testkit.Account) any {
		dest := created(t, a, "/event_destinations", map[string]any{"target": map[string]any{"datadog": map[string]any{"api_key": "0123456789abcdef0123456789abcdef"}}})
		return map[string]any{"description": "audit", "destination_ids": []string{dest}, "sources": []any{map[string]any{"type": "ip_policy_created.v0"}}}
	}, Echo: map[string]func(map[string]any) any{"destination_ids": testkit.EchoRefs("destinations"), "sources": testkit.EchoEach("sources", "type")}},
	{Name: "reserved domain", Path: "/reserved_domains", Create: func(t *testing.T, _ *testkit.Account) any {
		return map[string]any{"domain": testkit.UniqueName("life", config.Default("BASE_DOMAIN"))}
	}, Echo: certificateID},
	{Name: "reserved domain with a certificate policy", Path: "/reserved_domains", Create: func(t *testing.T, _ *testkit.Account) any {
		return map[string]any{"domain": testkit.UniqueName("life", "example.com"), "resolves_to": []any{map[string]any{"value": "global"}},
			"certificate_management_policy": map[string]any{"authority": "letsencrypt", "private_key_type": "rsa"}}
	}, Echo: certificateID},
	{Name: "reserved domain with a certificate", Path: "/reserved_domains", Create: func(t *testing.T, a *testkit.Account) any {
		name := testkit.UniqueName("life", "example.com")
		cert, key, _ := testkit.SelfSigned(t, &x509.Certificate{Subject: pkix.Name{CommonName: name}, DNSNames: []string{name}})
		return map[string]any{"domain": name, "certificate_id": created(t, a, "/tls_certificates", map[string]any{"certificate_pem": cert, "private_key_pem": key})}
	}, Echo: certificateID},
	{Name: "reserved address", Path: "/reserved_addrs", Create: body(map[string]any{"description": "bastion", "region": "eu"})},
	{Name: "agent ingress", Path: "/agent_ingresses", Create: func(t *testing.T, _ *testkit.Account) any {
		return map[string]any{"domain": testkit.UniqueName("life", "example.net")}
	}},
	{Name: "agent ingress with a certificate policy", Path: "/agent_ingresses", Create: func(t *testing.T, _ *testkit.Account) any {
		return map[string]any{"domain": testkit.UniqueName("life", "example.net"),
			"certificate_management_policy": map[string]any{"authority": "letsencrypt", "private_key_type": "ecdsa"}}
	}},
	{Name: "vault", Path: "/vaults", Create: body(map[string]any{"name": "lifecycle", "description": "ci", "metadata": `{"env":"ci"}`}),
		Change: map[string]any{"name": "lifecycle-renamed"}},
	{Name: "secret", Path: "/vault_secrets", Create: func(t *testing.T, a *testkit.Account) any {
		return map[string]any{"name": "db-password", "value": lifecycleSecret, "description": "db",
			"vault_id": created(t, a, "/vaults", map[string]any{"name": "lifecycle"})}
	}, Echo: secretValue},
	{Name: "secret named by its vault's name, its value rotated", Path: "/vault_secrets", Create: func(t *testing.T, a *testkit.Account) any {
		created(t, a, "/vaults", map[string]any{"name": "lifecycle"})
		return map[string]any{"name": "api-token", "value": lifecycleSecret, "vault_name": "lifecycle"}
	}, Echo: secretValue, Change: map[string]any{"value": "rotated-by-the-lifecycle-test"}, ChangeWants: map[string]any{}},
}

// lifecycleSecret is the value the secrets' specs store; the provider keeps it in its state and
// sends it back in every update, as the read never shows it.
const lifecycleSecret = "lifecycle-secret-value"

// secretValue echoes a secret's value as the provider does: from its own state, not the read.
var secretValue = map[string]func(map[string]any) any{"value": func(map[string]any) any { return lifecycleSecret }}

// certificateID is a reserved domain's certificate_id as the official clients echo it: the id
// of the certificate the read shows, "" when none.
var certificateID = map[string]func(map[string]any) any{"certificate_id": testkit.EchoRef("certificate")}

// TestLifecycle drives every family of the Terraform provider through what the provider sends
// (testkit.Account.Lifecycle).
func TestLifecycle(t *testing.T) {
	s := testkit.App(t)
	for _, spec := range lifecycles {
		t.Run(spec.Name, func(t *testing.T) {
			t.Parallel()
			s.NewAccount(t).Lifecycle(t, spec)
		})
	}
}

// providerFamilies are the collections of the eighteen resource types of the platform's
// newest Terraform provider; each must have a lifecycle.
var providerFamilies = []string{"/api_keys", "/credentials", "/ssh_credentials", "/service_users",
	"/certificate_authorities", "/tls_certificates", "/ssh_certificate_authorities", "/ip_policies",
	"/ip_policy_rules", "/ip_restrictions", "/endpoints", "/event_destinations", "/event_subscriptions",
	"/reserved_domains", "/reserved_addrs", "/agent_ingresses", "/vaults", "/vault_secrets"}

// TestLifecycleCoversTheProvider: every resource type of the provider is driven by TestLifecycle.
func TestLifecycleCoversTheProvider(t *testing.T) {
	covered := map[string]bool{}
	for _, spec := range lifecycles {
		covered[spec.Path] = true
	}
	for _, path := range providerFamilies {
		if !covered[path] {
			t.Errorf("no lifecycle for %s", path)
		}
	}
}

// body is a Create that sends b.
func body(b map[string]any) func(*testing.T, *testkit.Account) any {
	return func(*testing.T, *testkit.Account) any { return b }
}

// created creates b at path in a's account and returns its id.
func created(t *testing.T, a *testkit.Account, path string, b map[string]any) string {
	t.Helper()
	return a.Do(t, "POST", path, b).Expect(t, http.StatusCreated)["id"].(string)
}

// selfSigned is a certificate for name signed by its own key, PEM encoded; a CA's when ca.
func selfSigned(t *testing.T, name string, ca bool) string {
	cert, _, _ := testkit.SelfSigned(t, &x509.Certificate{Subject: pkix.Name{CommonName: name}, BasicConstraintsValid: true, IsCA: ca})
	return cert
}
