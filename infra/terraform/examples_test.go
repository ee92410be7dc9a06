package terraform

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"tunnelapi/shared/testing/testkit"
)

// exampleFolders are the folders of examples/resources whose names are not the provider's
// types: the examples still use the types' older names, which the adaptation renames.
var exampleFolders = map[string]string{"ngrok_domain": "ngrok_reserved_domain", "ngrok_tcp_address": "ngrok_reserved_addr"}

// exampleHosts are the host names the examples use, each replaced with a name unique to the
// run: reserved names are unique across accounts.
var exampleHosts = []string{"app.example.com", "agents.example.com"}

// hosts maps each example host name to its unique stand-in for one configuration.
type hosts map[string]string

func newHosts() hosts {
	h := hosts{}
	for _, name := range exampleHosts {
		h[name] = testkit.UniqueName("tf", "example.com")
	}
	return h
}

// example returns the example of resource type typ, adapted: the types' current names, the
// unique host names.
func example(t *testing.T, ts toolset, typ string, h hosts) string {
	t.Helper()
	folder := typ
	if old, ok := exampleFolders[typ]; ok {
		folder = old
	}
	b, err := os.ReadFile(filepath.Join(ts.examples(), "resources", folder, "resource.tf"))
	if err != nil {
		t.Fatalf("the provider's example of %s: %v", typ, err)
	}
	text := string(b)
	for current, old := range exampleFolders {
		text = regexp.MustCompile(`\b`+old+`\b`).ReplaceAllString(text, current)
	}
	for name, unique := range h {
		text = strings.ReplaceAll(text, name, unique)
	}
	if !strings.Contains(text, `resource "`+typ+`" "example"`) {
		t.Fatalf("the example of %s declares no %s.example:\n%s", typ, typ, text)
	}
	return text
}

// topArguments are the arguments an example's resource block sets at its top level.
func topArguments(text string) []string {
	var args []string
	for _, m := range regexp.MustCompile(`(?m)^  ([a-z_0-9]+)\s*=`).FindAllStringSubmatch(text, -1) {
		args = append(args, m[1])
	}
	slices.Sort(args)
	return slices.Compact(args)
}

// exampleFiles writes the files the examples read with file(): a CA certificate, a
// certificate with its key, and an SSH public key made by OpenSSH.
func exampleFiles(t *testing.T, w *workspace) {
	t.Helper()
	ca, _, _ := testkit.SelfSigned(t, &x509.Certificate{Subject: pkix.Name{CommonName: "Example Root CA"},
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature})
	w.file("ca.pem", ca)
	cert, key, _ := testkit.SelfSigned(t, &x509.Certificate{Subject: pkix.Name{CommonName: "app.example.com"}, DNSNames: []string{"app.example.com"}})
	w.file("cert.pem", cert)
	w.file("key.pem", key)
	w.file("id_ed25519.pub", testkit.SSHKeygen(t, "-t", "ed25519"))
}

// reserveHost reserves the stand-in of an example's host name in the account, for an
// endpoint whose URL must be on a reserved domain of its account.
func reserveHost(name string) func(*testing.T, *testkit.Account, hosts) {
	return func(t *testing.T, a *testkit.Account, h hosts) {
		a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": h[name]}).Expect(t, http.StatusCreated)
	}
}
