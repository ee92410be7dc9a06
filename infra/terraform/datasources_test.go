package terraform

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/testing/frptest"
	"tunnelapi/shared/testing/testkit"
)

// dataCase is one data source of the provider and what it reads: the example resource of a
// resource type (Reads), or an item created through the API (Create) for a data source no
// resource type manages, skipped while the service has no family at its path.
type dataCase struct {
	Type   string
	Reads  string
	Create *apiItem
	// Unordered are the lists the resource sorts and the data source keeps in the API's order
	// (which the platform does not fix): compared as sets.
	Unordered []string
	// Live makes what the data source reads when no POST can (a tunnel session, reported by a
	// real agent) and returns it as the API's GET does.
	Live func(t *testing.T, s *testkit.Stack, a *testkit.Account) map[string]any
	// ProviderFails is the error the provider's read fails with after the API answered,
	// whatever the answer (a defect of the provider): the case checks that it is that error and
	// not one of the API's, and fails once the provider reads the item.
	ProviderFails string
}

// apiItem is an item created with POST Path and Body.
type apiItem struct {
	Path string
	Body map[string]any
}

// dataCases are the provider's data sources that can run here.
var dataCases = []dataCase{
	{Type: "ngrok_agent_ingress", Reads: "ngrok_agent_ingress", Unordered: []string{"ns_targets", "region_domains"}},
	{Type: "ngrok_api_key", Reads: "ngrok_api_key"},
	{Type: "ngrok_certificate_authority", Reads: "ngrok_certificate_authority"},
	{Type: "ngrok_cloud_endpoint", Reads: "ngrok_cloud_endpoint"},
	{Type: "ngrok_credential", Reads: "ngrok_credential"},
	{Type: "ngrok_domain", Reads: "ngrok_domain"},
	{Type: "ngrok_event_destination", Reads: "ngrok_event_destination"},
	{Type: "ngrok_event_subscription", Reads: "ngrok_event_subscription"},
	{Type: "ngrok_ip_policy", Reads: "ngrok_ip_policy"},
	{Type: "ngrok_ip_policy_rule", Reads: "ngrok_ip_policy_rule"},
	{Type: "ngrok_ip_restriction", Reads: "ngrok_ip_restriction"},
	{Type: "ngrok_secret", Reads: "ngrok_secret"},
	{Type: "ngrok_service_user", Reads: "ngrok_service_user"},
	{Type: "ngrok_ssh_certificate_authority", Reads: "ngrok_ssh_certificate_authority"},
	{Type: "ngrok_ssh_credential", Reads: "ngrok_ssh_credential"},
	{Type: "ngrok_tcp_address", Reads: "ngrok_tcp_address"},
	{Type: "ngrok_tls_certificate", Reads: "ngrok_tls_certificate"},
	{Type: "ngrok_vault", Reads: "ngrok_vault"},
	// The provider's read builds its deployment object from a map, which its framework cannot
	// convert: it fails after every successful GET.
	{Type: "ngrok_kubernetes_operator", Create: &apiItem{Path: "/kubernetes_operators", Body: map[string]any{
		"description": "Example Kubernetes Operator", "metadata": `{"environment": "staging"}`, "enabled_features": []string{"ingress"},
		"region": "global", "deployment": map[string]any{"name": "ngrok-operator", "namespace": "ngrok-operator"}}},
		ProviderFails: "cannot use type map[string]basetypes.StringValue as schema type basetypes.ObjectType"},
	{Type: "ngrok_tunnel_session", Live: liveTunnelSession},
}

// liveTunnelSession is a session of real frpc through real frps (frptest.Plane), whose plugin
// answers from s's table, as a's agent: the session as GET /tunnel_sessions/{id} returns it.
func liveTunnelSession(t *testing.T, s *testkit.Stack, a *testkit.Account) map[string]any {
	p := frptest.StartPlane(t, s, frptest.PlaneConfig{})
	cred := a.Do(t, "POST", "/credentials", map[string]any{}).Expect(t, http.StatusCreated)
	session := p.Agent(t, cred["token"].(string)).WaitLogin(t)
	return a.Do(t, "GET", "/tunnel_sessions/"+session, nil).Expect(t, http.StatusOK)
}

// withoutCase are the provider's data sources that cannot run here, and why.
var withoutCase = map[string]string{
	"ngrok_application_session": "application sessions are made by the data plane's traffic, which the service does not have",
	"ngrok_application_user":    "application users are made by the data plane's traffic, which the service does not have",
}

// TestDataSources reads every data source that can run in each of its lookup modes (each
// optional argument: the id, and a name the provider filters the list by), against the
// example resource it reads: every attribute both have is the same, and every mode reads the
// same.
func TestDataSources(t *testing.T) {
	ts := tools(t)
	s := testkit.App(t)
	sch := providerSchema(t, ts, s)
	covered := map[string]bool{}
	for _, c := range dataCases {
		covered[c.Type] = true
		if why, ok := withoutCase[c.Type]; ok {
			t.Errorf("%s has a case and is listed as one that cannot run (%s)", c.Type, why)
		}
	}
	for _, typ := range sch.dataSources() {
		if _, ok := withoutCase[typ]; !covered[typ] && !ok {
			t.Errorf("the provider's data source %s has no case in dataCases", typ)
		}
	}
	for _, c := range dataCases {
		t.Run(c.Type, func(t *testing.T) {
			t.Parallel()
			lookups := sch.lookups(c.Type)
			if len(lookups) == 0 {
				t.Fatalf("%s has no argument to look it up by", c.Type)
			}
			c.read(t, ts, s, lookups)
		})
	}
}

func (c dataCase) read(t *testing.T, ts toolset, s *testkit.Stack, lookups []string) {
	a := s.NewAccount(t)
	w := newWorkspace(t, ts, s, a)
	var config, target string
	var want map[string]any
	switch {
	case c.Live != nil:
		want = c.Live(t, s, a)
	case c.Create != nil:
		if !slices.ContainsFunc(app.Families, func(d *resource.Descriptor) bool { return d.Path == c.Create.Path }) {
			t.Skipf("the service has no %s family yet", c.Create.Path)
		}
		want = a.Do(t, "POST", c.Create.Path, c.Create.Body).Expect(t, http.StatusCreated)
	default:
		rc := resourceCaseOf(t, c.Reads)
		exampleFiles(t, w)
		h := newHosts()
		if rc.Setup != nil {
			rc.Setup(t, a, h)
		}
		needs, own := rc.config(t, ts, h)
		config, target = needs+own, c.Reads+".example"
	}
	for _, key := range lookups {
		value := target + "." + key
		if want != nil {
			b, err := json.Marshal(want[key])
			if err != nil || want[key] == nil {
				t.Fatalf("the item %s reads has no %s to look it up by: %v", c.Type, key, want)
			}
			value = string(b)
		}
		config += fmt.Sprintf("\ndata %q \"by_%s\" {\n  %s = %s\n}\n", c.Type, key, key, value)
	}
	w.write(config)
	if c.ProviderFails != "" {
		out, stderr, err := w.exec("apply", "-auto-approve", "-input=false", "-json")
		msg := readable(out) + stderr
		if err == nil || !strings.Contains(msg, c.ProviderFails) || strings.Contains(msg, "Error reading") {
			t.Fatalf("the provider was to fail with %q after the API answered; it ran: %v\n%s", c.ProviderFails, err, msg)
		}
		t.Logf("the API answered; the provider then fails as against any server: %s", c.ProviderFails)
		return
	}
	w.apply("apply")
	state := w.state("after apply")
	if want == nil {
		want = state[target]
	}
	var first map[string]any
	for _, key := range lookups {
		addr := fmt.Sprintf("data.%s.by_%s", c.Type, key)
		got := state[addr]
		if got == nil {
			t.Fatalf("the state has no %s", addr)
		}
		compared := 0
		for name, v := range got {
			if r, ok := want[name]; ok {
				compared++
				if slices.Contains(c.Unordered, name) {
					v, r = sorted(v), sorted(r)
				}
				if !reflect.DeepEqual(v, r) {
					t.Errorf("%s: %s is %s, the resource's %s", addr, name, show(v), show(r))
				}
			}
		}
		if got["id"] != want["id"] || compared < 4 {
			t.Errorf("%s read id %v (want %v), %d attributes in common", addr, got["id"], want["id"], compared)
		}
		if first == nil {
			first = got
		} else if !reflect.DeepEqual(first, got) {
			t.Errorf("the lookups by %s and by %s read differently:\n%s\n%s", lookups[0], key, show(first), show(got))
		}
	}
}

// resourceCaseOf returns the case of resource type typ.
func resourceCaseOf(t *testing.T, typ string) resourceCase {
	t.Helper()
	for _, c := range resourceCases {
		if c.Type == typ {
			return c
		}
	}
	t.Fatalf("no resource case for %s", typ)
	return resourceCase{}
}

// sorted returns a list of strings sorted, anything else as it is.
func sorted(v any) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	out := slices.Clone(list)
	slices.SortFunc(out, func(a, b any) int { return strings.Compare(show(a), show(b)) })
	return out
}

// show is v as JSON, for messages.
func show(v any) string {
	b, _ := json.Marshal(v)
	return strings.TrimSpace(string(b))
}
