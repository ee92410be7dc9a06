// Package samples makes what the sample events of a function (events/<dir>/*.json, whose format
// package app defines) refer to besides their own resource: the resources of other families
// they name and fresh values such as keys, certificates and unique domains. Only the tests that
// send the samples and the tools that write them filled in (infra/samlocal) use it.
package samples

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"maps"
	"math/big"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// Creator creates a resource for the samples' account (POST body to path) and returns the
// created object; any status but 201 is an error.
type Creator func(ctx context.Context, path string, body any) (map[string]any, error)

// Setup makes, with create, what the samples of the function in folder dir refer to besides
// their own resource, and returns the values of those placeholders (none for most functions).
func Setup(ctx context.Context, dir string, create Creator) (map[string]string, error) {
	setup := setups[dir]
	if setup == nil {
		return map[string]string{}, nil
	}
	vars, err := setup(ctx, create)
	if err != nil {
		return nil, fmt.Errorf("setup of the %s samples: %w", dir, err)
	}
	return vars, nil
}

// setups are the set-ups of the functions whose samples need one, by folder: a family whose
// samples name a resource of another family (an IP policy rule's policy) or a fresh value (a
// certificate, a domain unique across runs) adds its function's here, beside the others.
var setups = map[string]func(context.Context, Creator) (map[string]string, error){
	"ip_policy_rules": ipPolicySetup,
	"ip_restrictions": ipPolicySetup,
	"event_subscriptions": func(ctx context.Context, create Creator) (map[string]string, error) {
		return createdID(ctx, create, "{{destination_id}}", "/event_destinations", map[string]any{"target": map[string]any{
			"datadog": map[string]any{"api_key": "0123456789abcdef0123456789abcdef"}}})
	},
	"tls_certificates": func(context.Context, Creator) (map[string]string, error) {
		cert, key, err := selfSigned(false)
		return map[string]string{"{{cert_pem}}": cert, "{{key_pem}}": key}, err
	},
	"certificate_authorities": func(context.Context, Creator) (map[string]string, error) {
		cert, _, err := selfSigned(true)
		return map[string]string{"{{ca_pem}}": cert}, err
	},
	"endpoints":             reservedDomain,
	"reserved_domains":      uniqueDomain,
	"agent_ingresses":       uniqueDomain,
	"ssh_user_certificates": sshSetup,
	"ssh_host_certificates": sshSetup,
	"ssh_credentials":       sshPublicKey,
	"failover_backends":     childBackendsSetup,
	"weighted_backends":     childBackendsSetup,
	"tls_edges":             edgeSetup("/reserved_domains"),
	"https_edges":           edgeSetup("/reserved_domains"),
	"tcp_edges":             edgeSetup("/reserved_addrs"),
	"vaults":                vaultSetup,
	"kubernetes_operators":  operatorCSR,
}

// operatorCSR is a fresh {{csr}} (OperatorCSR).
func operatorCSR(context.Context, Creator) (map[string]string, error) {
	csr, err := OperatorCSR()
	if err != nil {
		return nil, err
	}
	return map[string]string{"{{csr}}": csr}, nil
}

// OperatorCSR returns a PEM certificate request of a fresh ECDSA P-256 key, as the Kubernetes
// operator sends to have its binding certificate signed.
func OperatorCSR() (string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "ngrok-operator"}}, key)
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})), nil
}

// vaultSetup is a fresh {{vault_name}} (names are unique in an account, which runs of the
// samples may share), the vault {{vault_id}} that secret samples are stored in, and a secret
// {{secret_id}} in it for the secret samples that read, change and delete one.
func vaultSetup(ctx context.Context, create Creator) (map[string]string, error) {
	n := time.Now().UnixNano()
	vars, err := createdID(ctx, create, "{{vault_id}}", "/vaults", map[string]any{"name": fmt.Sprintf("sample-secrets-%d", n)})
	if err != nil {
		return nil, err
	}
	vars["{{vault_name}}"] = fmt.Sprintf("sample-vault-%d", n)
	// The secret samples after the create sample act on a secret of their own: the function's
	// {{id}} is a vault.
	secret, err := createdID(ctx, create, "{{secret_id}}", "/vault_secrets", map[string]any{
		"vault_id": vars["{{vault_id}}"], "name": fmt.Sprintf("sample-secret-%d", n), "value": "sample"})
	if err != nil {
		return nil, err
	}
	vars["{{secret_id}}"] = secret["{{secret_id}}"]
	return vars, nil
}

// uniqueDomain is a fresh {{domain}}: domains are unique across accounts and runs of the samples
// may share a table.
func uniqueDomain(context.Context, Creator) (map[string]string, error) {
	return map[string]string{"{{domain}}": fmt.Sprintf("sample-%d.example.com", time.Now().UnixNano())}, nil
}

// reservedDomain reserves a fresh {{domain}} for samples that serve on it: a public
// endpoint's host is a reserved domain of its account.
func reservedDomain(ctx context.Context, create Creator) (map[string]string, error) {
	vars, err := uniqueDomain(ctx, create)
	if err != nil {
		return nil, err
	}
	if _, err := create(ctx, "/reserved_domains", map[string]any{"domain": vars["{{domain}}"], "description": "for samples"}); err != nil {
		return nil, err
	}
	return vars, nil
}

// edgeSetup makes what edge samples refer to: a reservation to serve on (a fresh domain, made
// at reservations "/reserved_domains", or an address at "/reserved_addrs"), and the backend,
// IP policy and certificate authority their modules name.
func edgeSetup(reservations string) func(context.Context, Creator) (map[string]string, error) {
	return func(ctx context.Context, create Creator) (map[string]string, error) {
		vars := map[string]string{}
		body := map[string]any{"description": "for samples"}
		if reservations == "/reserved_domains" {
			vars["{{domain}}"] = fmt.Sprintf("edge-sample-%d.example.com", time.Now().UnixNano())
			body["domain"] = vars["{{domain}}"]
		}
		held, err := create(ctx, reservations, body)
		if err != nil {
			return nil, err
		}
		if addr, ok := held["addr"].(string); ok {
			vars["{{addr}}"] = addr
		}
		caPEM, _, err := selfSigned(true)
		if err != nil {
			return nil, err
		}
		for _, ref := range []struct {
			placeholder, path string
			body              any
		}{
			{"{{backend_id}}", "/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "sample"}}},
			{"{{ip_policy_id}}", "/ip_policies", map[string]any{"description": "for samples"}},
			{"{{ca_id}}", "/certificate_authorities", map[string]any{"ca_pem": caPEM}},
		} {
			got, err := createdID(ctx, create, ref.placeholder, ref.path, ref.body)
			if err != nil {
				return nil, err
			}
			maps.Copy(vars, got)
		}
		return vars, nil
	}
}

// ipPolicySetup makes the IP policy that rule and restriction samples refer to.
func ipPolicySetup(ctx context.Context, create Creator) (map[string]string, error) {
	return createdID(ctx, create, "{{ip_policy_id}}", "/ip_policies", map[string]any{"description": "for samples"})
}

// createdID creates body at path and returns the new id as the value of placeholder.
func createdID(ctx context.Context, create Creator, placeholder, path string, body any) (map[string]string, error) {
	obj, err := create(ctx, path, body)
	if err != nil {
		return nil, err
	}
	id, _ := obj["id"].(string)
	if id == "" {
		return nil, fmt.Errorf("POST %s returned no id", path)
	}
	return map[string]string{placeholder: id}, nil
}

// childBackendsSetup makes the static and HTTP response backends that failover and weighted
// backend samples refer to.
func childBackendsSetup(ctx context.Context, create Creator) (map[string]string, error) {
	vars, err := createdID(ctx, create, "{{static_backend_id}}", "/backends/static", map[string]any{"address": "origin.example.com:443"})
	if err != nil {
		return nil, err
	}
	more, err := createdID(ctx, create, "{{http_response_backend_id}}", "/backends/http_response", map[string]any{"status_code": 503})
	if err != nil {
		return nil, err
	}
	vars["{{http_response_backend_id}}"] = more["{{http_response_backend_id}}"]
	return vars, nil
}

// sshSetup makes the SSH CA and the public key that certificate samples refer to.
func sshSetup(ctx context.Context, create Creator) (map[string]string, error) {
	vars, err := createdID(ctx, create, "{{ssh_ca_id}}", "/ssh_certificate_authorities", map[string]any{"private_key_type": "ed25519"})
	if err != nil {
		return nil, err
	}
	key, err := sshPublicKey(ctx, create)
	if err != nil {
		return nil, err
	}
	vars["{{ssh_public_key}}"] = key["{{ssh_public_key}}"]
	return vars, nil
}

// sshPublicKey is a fresh {{ssh_public_key}} in authorized-keys form: SSH credentials hold a key
// once across accounts, and runs of the samples may share a table.
func sshPublicKey(context.Context, Creator) (map[string]string, error) {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil, err
	}
	return map[string]string{"{{ssh_public_key}}": strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp))) + " sample@ci"}, nil
}

// selfSigned returns a fresh self-signed ECDSA certificate (a CA when ca) and its PKCS#8 key.
func selfSigned(ca bool) (certPEM, keyPEM string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	tpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "sample.example.com"},
		DNSNames: []string{"sample.example.com"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(1, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: ca,
	}
	if ca {
		tpl.KeyUsage |= x509.KeyUsageCertSign
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, key.Public(), key)
	if err != nil {
		return "", "", err
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})), nil
}
