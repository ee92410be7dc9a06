package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/testing/testkit"
)

// jsServices names the official JavaScript client's service for each collection.
var jsServices = map[string]string{
	"/api_keys":                    "apiKeys",
	"/credentials":                 "credentials",
	"/bot_users":                   "botUsers",
	"/ssh_credentials":             "sshCredentials",
	"/ip_policies":                 "ipPolicies",
	"/ip_policy_rules":             "ipPolicyRules",
	"/ip_restrictions":             "ipRestrictions",
	"/backends/tunnel_group":       "backends.tunnelGroupBackends",
	"/backends/static":             "backends.staticBackends",
	"/backends/http_response":      "backends.httpResponseBackends",
	"/backends/failover":           "backends.failoverBackends",
	"/backends/weighted":           "backends.weightedBackends",
	"/endpoints":                   "endpoints",
	"/event_destinations":          "eventDestinations",
	"/event_subscriptions":         "eventSubscriptions",
	"/tls_certificates":            "tlsCertificates",
	"/certificate_authorities":     "certificateAuthorities",
	"/ssh_certificate_authorities": "sshCertificateAuthorities",
	"/ssh_user_certificates":       "sshUserCertificates",
	"/ssh_host_certificates":       "sshHostCertificates",
	"/reserved_addrs":              "reservedAddrs",
	"/reserved_domains":            "reservedDomains",
	"/agent_ingresses":             "agentIngresses",
	"/edges/tls":                   "edges.edgesTls",
	"/edges/tcp":                   "edges.edgesTcp",
	"/edges/https":                 "edges.edgesHttps",
	"/abuse_reports":               "abuseReports",
}

// jsModules names the JavaScript client's service of each edge module of a collection, by
// module; the client (0.11) has none for traffic_policy modules.
var jsModules = map[string]map[string]string{
	"/edges/tls": {"backend": "edgeModules.tlsEdgeBackendModule", "ip_restriction": "edgeModules.tlsEdgeIpRestrictionModule",
		"mutual_tls": "edgeModules.tlsEdgeMutualTlsModule", "tls_termination": "edgeModules.tlsEdgeTlsTerminationModule"},
	"/edges/tcp": {"backend": "edgeModules.tcpEdgeBackendModule", "ip_restriction": "edgeModules.tcpEdgeIpRestrictionModule"},
}

// jsDistinct makes the i-th of the three items a family test creates differ from the others
// where the family refuses duplicates.
var jsDistinct = map[string]func(i int, body map[string]any){
	"/ip_policy_rules":  func(i int, body map[string]any) { body["cidr"] = fmt.Sprintf("198.51.%d.0/24", 100+i) },
	"/reserved_domains": func(i int, body map[string]any) { body["domain"] = fmt.Sprintf("js%d.%s", i, body["domain"]) },
	"/agent_ingresses":  func(i int, body map[string]any) { body["domain"] = fmt.Sprintf("js%d.%s", i, body["domain"]) },
	"/edges/tls":        onlyFirstHoldsHostports,
	"/edges/tcp":        onlyFirstHoldsHostports,
	"/edges/https":      onlyFirstHoldsHostports,
	"/ssh_credentials": func(i int, body map[string]any) {
		if i > 0 {
			body["public_key"] = testkit.SSHPublicKey()
		}
	},
}

// jsAbsent are the families the JavaScript client (0.11) has no service for, and what covers
// them instead.
var jsAbsent = map[string]string{
	"/service_users": "the client's bot users service (botUsers) serves the same principals",
	"/vaults":        "the client predates vaults; the vaults package's tests send the official Go client's shapes",
	"/vault_secrets": "the client predates secrets; the vaults package's tests send the official Go client's shapes",
	"/kubernetes_operators": "the client predates Kubernetes operators; TestOfficialGoClient drives the official Go client's " +
		"kubernetes_operators package",
}

// onlyFirstHoldsHostports keeps the sample's hostports on the first edge only: a hostport
// belongs to one edge.
func onlyFirstHoldsHostports(i int, body map[string]any) {
	if i > 0 {
		delete(body, "hostports")
	}
}

// jsMangled are the members whose object keys are data (ids, header names) that the client
// mangles: it rewrites every key of what it sends from camelCase to snake_case, a map's keys
// included, so a weighted backend's ids and a header named Content-Type arrive changed (package api,
// "The official clients"). The client's forms leave them out.
var jsMangled = map[string][]string{
	"/backends/weighted":      {"backends"},
	"/backends/http_response": {"headers"},
}

// jsFamily is one family as testdata/jsclient.cjs drives it: three creates, then an update of
// the last item created.
type jsFamily struct {
	Path    string           `json:"path"`
	Service string           `json:"service"`
	Creates []map[string]any `json:"creates"`
	Update  map[string]any   `json:"update"`
	Modules []jsModule       `json:"modules"`
	// Operations are those the family serves of update, list and delete (create and get it
	// always does); the script drives only these and checks the others answer 404.
	Operations []string `json:"operations"`
}

// jsModule is an edge module the script replaces, reads and deletes on the updated item.
type jsModule struct {
	Name    string         `json:"name"`
	Service string         `json:"service"`
	Body    map[string]any `json:"body"`
}

// Every family works through the platform's official JavaScript client from npm (the version
// infra/stack/stack.sh installs), run by Node: create, get, update (the client sends the path's
// id in the body), list in pages of one (the client pages with beforeId), delete, and not found
// after the delete. The client's own delete is not used: it parses the empty 204 body as JSON
// and rejects, so testdata/jsclient.cjs calls that endpoint directly (see its header). The
// create and update bodies are the sample events' (events/<dir>/), with their setups.
func TestJavaScriptClient(t *testing.T) {
	s := testkit.App(t)
	module, err := filepath.Abs(filepath.Join(root, ".local", "npm", "node_modules", "@ngrok", "ngrok-api"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(module, "package.json")); err != nil {
		t.Fatalf("the JavaScript client is not installed (infra/stack/stack.sh install): %v", err)
	}
	out, err := exec.Command("node", "--version").Output()
	major, _ := strconv.Atoi(strings.TrimPrefix(strings.SplitN(strings.TrimSpace(string(out)), ".", 2)[0], "v"))
	if err != nil || major < 20 {
		t.Fatalf("node 20 or later is required: %q %v", out, err)
	}
	t.Logf("node %s", strings.TrimSpace(string(out)))

	a := s.NewAccount(t)
	var families []jsFamily
	var subscription map[string]any
	for _, form := range sampleForms(t, a) {
		if why, absent := jsAbsent[form.Path]; absent {
			t.Logf("%s: not in the JavaScript client; %s", form.Path, why)
			continue
		}
		fam := jsFamily{Path: form.Path, Update: form.Update, Service: jsServices[form.Path]}
		for name, op := range map[string]resource.Operation{"update": resource.OpUpdate, "list": resource.OpList, "delete": resource.OpDelete} {
			if form.Family.Offers(op) {
				fam.Operations = append(fam.Operations, name)
			}
		}
		if fam.Service == "" {
			t.Fatalf("%s: no JavaScript client service is known for it; add it to jsServices", fam.Path)
		}
		for _, name := range slices.Sorted(maps.Keys(form.Modules)) {
			if svc := jsModules[form.Path][name]; svc != "" {
				fam.Modules = append(fam.Modules, jsModule{Name: name, Service: svc, Body: form.Modules[name]})
			}
		}
		for i := range 3 {
			body := maps.Clone(form.Create)
			if distinct := jsDistinct[fam.Path]; distinct != nil {
				distinct(i, body)
			}
			for _, m := range jsMangled[fam.Path] {
				delete(body, m)
			}
			fam.Creates = append(fam.Creates, body)
		}
		fam.Update = maps.Clone(fam.Update)
		for _, m := range jsMangled[fam.Path] {
			delete(fam.Update, m)
		}
		if fam.Path == "/event_subscriptions" {
			subscription = form.Create
		}
		families = append(families, fam)
	}
	spec, err := json.Marshal(map[string]any{"module": module, "baseUrl": s.Server.URL, "token": a.Token,
		"families": families, "subscription": map[string]any{"create": subscription}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join("testdata", "jsclient.cjs"))
	cmd.Stdin = bytes.NewReader(spec)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.Bytes())
	}
	results := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	for sc.Scan() {
		var r struct{ Path, Error string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("node printed %q: %v", sc.Text(), err)
		}
		results[r.Path] = r.Error
	}
	paths := []string{"/event_subscriptions/{subscription_id}/sources"}
	for _, f := range families {
		paths = append(paths, f.Path)
	}
	for _, p := range paths {
		t.Run(strings.TrimPrefix(p, "/"), func(t *testing.T) {
			msg, ran := results[p]
			if !ran {
				t.Fatalf("not run by the JavaScript client script")
			}
			if msg != "" {
				t.Fatal(msg)
			}
		})
	}
}
