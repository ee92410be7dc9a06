package api_test

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

// onlyFirstHoldsHostports keeps the sample's hostports on the first edge only: a hostport
// belongs to one edge.
func onlyFirstHoldsHostports(i int, body map[string]any) {
	if i > 0 {
		delete(body, "hostports")
	}
}

// jsMangled are the members whose object keys are data (ids, header names) that the client
// mangles: it rewrites every key of what it sends from camelCase to snake_case, a map's keys
// included, so a weighted backend's ids and a header named Content-Type arrive changed (package api's
// doc). The client's forms leave them out.
var jsMangled = map[string][]string{
	"/backends/weighted":      {"backends"},
	"/backends/http_response": {"headers"},
}

// jsFamily is one family as testdata/jsclient.cjs drives it: three creates, then an update of
// the last item created.
type jsFamily struct {
	Path    string           `json:"path"`
	Creates []map[string]any `json:"creates"`
	Update  map[string]any   `json:"update"`
	Modules []jsModule       `json:"modules"`
	// Operations are those the family serves of update, list and delete (create and get it
	// always does); the script drives only these and checks the others answer 404.
	Operations []string `json:"operations"`
}

// jsModule is an edge module the script replaces, reads and deletes on the updated item.
type jsModule struct {
	Name string         `json:"name"`
	Body map[string]any `json:"body"`
}

// Every family works through the platform's official JavaScript client from npm (the version
// infra/stack/stack.sh installs), run by Node: create, get, update (the client sends the path's
// id in the body), list in pages of one (the client pages with beforeId), delete, and not found
// after the delete; and so does each edge module. The client's own delete is not used: it
// parses the empty 204 body as JSON and rejects, so testdata/jsclient.cjs calls that endpoint
// directly (see its header). The create and update bodies are the sample events' (events/<dir>/),
// with their setups. The script finds each family's service in the client's source by the path
// it requests; a family the client has none for (it predates vaults, secrets and Kubernetes
// operators, and its bot users are our service users' only service) is skipped, and covered
// by the official Go client (TestOfficialGoClient).
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
	for _, form := range testkit.SampleForms(t, root, a) {
		fam := jsFamily{Path: form.Path, Update: form.Update}
		for name, op := range map[string]resource.Operation{"update": resource.OpUpdate, "list": resource.OpList, "delete": resource.OpDelete} {
			if form.Family.Offers(op) {
				fam.Operations = append(fam.Operations, name)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(form.Modules)) {
			fam.Modules = append(fam.Modules, jsModule{Name: name, Body: form.Modules[name]})
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
	type result struct {
		Path, Error string
		Absent      bool
		Modules     []string
	}
	results := map[string]result{}
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	for sc.Scan() {
		var r result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("node printed %q: %v", sc.Text(), err)
		}
		results[r.Path] = r
	}
	driven, modules := 0, 0
	for _, f := range append([]jsFamily{{Path: "/event_subscriptions/{subscription_id}/sources"}}, families...) {
		r, ran := results[f.Path]
		if r.Absent {
			t.Logf("%s: the JavaScript client has no service requesting %s/{id}", f.Path, f.Path)
			continue
		}
		driven++
		for _, m := range f.Modules {
			if slices.Contains(r.Modules, m.Name) {
				modules++
			} else if ran && r.Error == "" {
				t.Logf("%s: the JavaScript client has no service for its %s module", f.Path, m.Name)
			}
		}
		t.Run(strings.TrimPrefix(f.Path, "/"), func(t *testing.T) {
			if !ran {
				t.Fatalf("not run by the JavaScript client script")
			}
			if r.Error != "" {
				t.Fatal(r.Error)
			}
		})
	}
	if driven <= 1 || modules == 0 {
		t.Errorf("the script found a service for %d of %d families and %d edge modules: it no longer finds the client's services", driven-1, len(families), modules)
	}
}
