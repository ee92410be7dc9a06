package terraform

import (
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"tunnelapi/shared/testing/testkit"
)

// edit is one change of the update step: Old, a regular expression matching exactly once in
// the configuration, is replaced with New (regexp.ReplaceAllString's template); Arg is the
// top-level argument it changes.
type edit struct {
	Arg string
	Old *regexp.Regexp
	New string
}

// lit is the edit replacing the text old with new.
func lit(arg, old, new string) edit {
	return edit{arg, regexp.MustCompile(regexp.QuoteMeta(old)), strings.ReplaceAll(new, "$", "$$")}
}

// setTo is the edit giving a one-line top-level argument the value expr.
func setTo(arg, expr string) edit {
	return edit{arg, regexp.MustCompile(`(?m)^(  ` + arg + `\s*=\s*).*$`), "${1}" + strings.ReplaceAll(expr, "$", "$$")}
}

// describe and meta are the edits of the two free-text arguments most examples set.
var (
	describe = setTo("description", `"updated by terraform"`)
	meta     = setTo("metadata", `jsonencode({ updated = "by terraform" })`)
)

// resourceCase is one resource type of the provider, driven from its example.
type resourceCase struct {
	Type string
	// Name names a case beyond the example (Type's otherwise); Set adds to the example's
	// resource an optional argument it leaves out.
	Name, Set string
	// Path is the API collection the resource lives in, for the 404 after destroy.
	Path string
	// Needs are the resource types whose examples the config includes first: the example
	// references their example resources.
	Needs []string
	// Setup creates through the API what the example assumes the account has.
	Setup func(*testing.T, *testkit.Account, hosts)
	// Update changes every updatable argument the example sets; Also is added to the update's
	// configuration (a second resource an argument then references).
	Update []edit
	Also   string
	// Kept are the arguments the example sets that the update leaves, and why.
	Kept map[string]string
	// WriteOnly are the arguments the API never shows back (a private key, a secret's value, a
	// key's parameters): a plan after import sets them again, as it does against the platform.
	WriteOnly []string
}

// replaced is why an argument the update leaves is kept: changing it replaces the resource.
const replaced = "changing it replaces the resource"

// resourceCases are the provider's eighteen resource types, each from its example, and the
// variants of an example that a user may write and the service must answer.
var resourceCases = []resourceCase{
	{Type: "ngrok_agent_ingress", Path: "/agent_ingresses",
		Update: []edit{describe, meta},
		Kept:   map[string]string{"domain": replaced}},
	{Type: "ngrok_api_key", Path: "/api_keys",
		Update: []edit{describe, meta}},
	{Type: "ngrok_certificate_authority", Path: "/certificate_authorities",
		Update: []edit{describe, meta},
		Kept:   map[string]string{"ca_pem": replaced}},
	{Type: "ngrok_cloud_endpoint", Path: "/endpoints", Setup: reserveHost("app.example.com"),
		Update: []edit{describe, meta,
			lit("traffic_policy", `"Hello from ngrok"`, `"Hello again"`)},
		Kept: map[string]string{"url": replaced}},
	{Type: "ngrok_credential", Path: "/credentials",
		Update: []edit{describe, meta,
			lit("acl", `["bind:`, `["bind:other.example.com", "bind:`)}},
	{Type: "ngrok_event_destination", Path: "/event_destinations",
		Update: []edit{describe, meta,
			lit("target", "deliverystream/ngrok-events", "deliverystream/ngrok-events-2"),
			lit("target", "role/ngrok-firehose", "role/ngrok-firehose-2")},
		Kept: map[string]string{"format": `"json" is the only format`}},
	{Type: "ngrok_event_subscription", Path: "/event_subscriptions", Needs: []string{"ngrok_event_destination"},
		Update: []edit{describe, meta,
			lit("destination_ids", "[ngrok_event_destination.example.id]", "[ngrok_event_destination.example.id, ngrok_event_destination.second.id]"),
			lit("sources", `"http_request_complete.v0"`, `"tcp_connection_closed.v0"`)},
		Also: `resource "ngrok_event_destination" "second" {
  format = "json"
  target = { kinesis = { stream_arn = "arn:aws:kinesis:us-east-1:123456789012:stream/ngrok", auth = { role = { role_arn = "arn:aws:iam::123456789012:role/ngrok" } } } }
}
`},
	{Type: "ngrok_ip_policy", Path: "/ip_policies",
		Update: []edit{describe, meta}},
	{Type: "ngrok_ip_policy_rule", Path: "/ip_policy_rules", Needs: []string{"ngrok_ip_policy"},
		Update: []edit{describe, meta,
			lit("cidr", `"203.0.113.0/24"`, `"198.51.100.0/24"`)},
		Kept: map[string]string{"ip_policy_id": replaced, "action": replaced}},
	{Type: "ngrok_ip_restriction", Path: "/ip_restrictions", Needs: []string{"ngrok_ip_policy"},
		Update: []edit{describe, meta,
			lit("ip_policy_ids", "[ngrok_ip_policy.example.id]", "[ngrok_ip_policy.example.id, ngrok_ip_policy.second.id]"),
			setTo("enforced", "false")},
		Also: "resource \"ngrok_ip_policy\" \"second\" {}\n",
		Kept: map[string]string{"type": replaced}},
	{Type: "ngrok_tcp_address", Path: "/reserved_addrs",
		Update: []edit{describe, meta},
		Kept:   map[string]string{"region": replaced}},
	{Type: "ngrok_domain", Path: "/reserved_domains",
		Update: []edit{describe, meta,
			lit("certificate_management_policy", `private_key_type = "ecdsa"`, `private_key_type = "rsa"`)},
		Kept: map[string]string{"domain": replaced}},
	{Type: "ngrok_secret", Path: "/vault_secrets", Needs: []string{"ngrok_vault"},
		Update: []edit{describe, meta,
			lit("name", `"datadog-api-key"`, `"datadog-api-key-2"`), lit("value", `"s3cr3t-value"`, `"r0tated-value"`)},
		Kept:      map[string]string{"vault_id": replaced},
		WriteOnly: []string{"value"}},
	// A secret may name its vault's name too, which the provider then expects back: the
	// response's vault_name (which the platform's recorded responses leave out) is needed.
	{Type: "ngrok_secret", Name: "ngrok_secret with vault_name", Path: "/vault_secrets", Needs: []string{"ngrok_vault"},
		Set:    "  vault_name = ngrok_vault.example.name\n",
		Update: []edit{describe, meta, lit("value", `"s3cr3t-value"`, `"r0tated-value"`)},
		Kept: map[string]string{"vault_id": replaced, "name": "the other case renames a secret",
			"vault_name": "an update sends no vault: a secret stays in its vault"},
		WriteOnly: []string{"value"}},
	{Type: "ngrok_service_user", Path: "/bot_users",
		Update: []edit{lit("name", `"ci-automation"`, `"ci-automation-2"`), setTo("active", "false")}},
	{Type: "ngrok_ssh_certificate_authority", Path: "/ssh_certificate_authorities",
		Update:    []edit{describe, meta},
		Kept:      map[string]string{"private_key_type": replaced, "elliptic_curve": replaced},
		WriteOnly: []string{"private_key_type", "elliptic_curve"}},
	{Type: "ngrok_ssh_credential", Path: "/ssh_credentials",
		Update: []edit{describe, meta,
			lit("acl", `["bind:`, `["bind:other.example.com", "bind:`)},
		Kept: map[string]string{"public_key": replaced}},
	{Type: "ngrok_tls_certificate", Path: "/tls_certificates",
		Update:    []edit{describe, meta},
		Kept:      map[string]string{"certificate_pem": replaced, "private_key_pem": replaced},
		WriteOnly: []string{"private_key_pem"}},
	{Type: "ngrok_vault", Path: "/vaults",
		Update: []edit{describe, meta,
			lit("name", `"production-secrets"`, `"staging-secrets"`)}},
}

// config returns the examples the case needs and its own, adapted.
func (c resourceCase) config(t *testing.T, ts toolset, h hosts) (needs, own string) {
	t.Helper()
	for _, need := range c.Needs {
		needs += example(t, ts, need, h) + "\n"
	}
	own = example(t, ts, c.Type, h)
	if c.Set != "" {
		end := strings.LastIndex(own, "}")
		own = own[:end] + c.Set + own[end:]
	}
	return needs, own
}

// updated applies the case's edits to its own example, each of which must match once, and adds
// what the update adds.
func (c resourceCase) updated(t *testing.T, own string) string {
	t.Helper()
	for _, e := range c.Update {
		if n := len(e.Old.FindAllStringIndex(own, -1)); n != 1 {
			t.Fatalf("update of %s: %s matches the example %d times, want once:\n%s", e.Arg, e.Old, n, own)
		}
		own = e.Old.ReplaceAllString(own, e.New)
	}
	return own + "\n" + c.Also
}

// TestResources drives every resource example of the provider: apply, an empty plan, an update
// of every updatable argument the example sets (in place: the id stays), an empty plan, import
// into a state that forgot it, an empty plan but for write-only arguments, destroy, and a 404
// from the API.
func TestResources(t *testing.T) {
	ts := tools(t)
	s := testkit.App(t)
	covered := map[string]bool{}
	for _, c := range resourceCases {
		covered[c.Type] = true
	}
	for _, typ := range providerSchema(t, ts, s).resources() {
		if !covered[typ] {
			t.Errorf("the provider's resource type %s has no case in resourceCases", typ)
		}
	}
	for _, c := range resourceCases {
		name := c.Name
		if name == "" {
			name = c.Type
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c.lifecycle(t, ts, s)
		})
	}
}

func (c resourceCase) lifecycle(t *testing.T, ts toolset, s *testkit.Stack) {
	a := s.NewAccount(t)
	w := newWorkspace(t, ts, s, a)
	exampleFiles(t, w)
	h := newHosts()
	if c.Setup != nil {
		c.Setup(t, a, h)
	}
	needs, own := c.config(t, ts, h)
	c.checkCoversArguments(t, own)
	addr := c.Type + ".example"

	w.write(needs + own)
	created := w.apply("apply")[addr]
	id := created.ID
	if created.Action != "create" || id == "" {
		t.Fatalf("apply: %s %+v, want created with an id", addr, created)
	}
	w.emptyPlan("after apply")

	w.write(needs + c.updated(t, own))
	if got := w.apply("update")[addr]; got != (applied{"update", id}) {
		t.Fatalf("update: %s %+v, want updated in place (id %s)", addr, got, id)
	}
	w.emptyPlan("after update")

	w.must("state rm", "state", "rm", "-no-color", addr)
	w.must("import", "import", "-input=false", "-no-color", addr, id)
	c.checkPlanAfterImport(t, w, addr)

	w.must("destroy", "destroy", "-auto-approve", "-input=false", "-no-color")
	if res := a.Do(t, "GET", c.Path+"/"+id, nil); res.Status != http.StatusNotFound {
		t.Fatalf("after destroy GET %s/%s answered %d, want 404: %s", c.Path, id, res.Status, res.Body)
	}
}

// checkCoversArguments fails the test unless the update changes or keeps, with a reason, each
// top-level argument the example sets.
func (c resourceCase) checkCoversArguments(t *testing.T, own string) {
	t.Helper()
	handled := map[string]bool{}
	for _, e := range c.Update {
		handled[e.Arg] = true
	}
	for arg := range c.Kept {
		handled[arg] = true
	}
	for _, arg := range topArguments(own) {
		if !handled[arg] {
			t.Errorf("the example of %s sets %s, which the update neither changes nor keeps with a reason", c.Type, arg)
		}
		delete(handled, arg)
	}
	for arg := range handled {
		t.Errorf("the case of %s names %s, which its example does not set", c.Type, arg)
	}
}

// checkPlanAfterImport fails the test unless the plan after import is empty or, for a resource
// with write-only arguments, sets only those again: every other planned value is the imported
// one or one the change leaves to the provider (unknown), and a replacement is forced only by
// write-only arguments (which the imported state cannot hold).
func (c resourceCase) checkPlanAfterImport(t *testing.T, w *workspace, addr string) {
	t.Helper()
	if len(c.WriteOnly) == 0 {
		w.emptyPlan("after import")
		return
	}
	for _, ch := range w.plan("after import") {
		if ch.Address != addr {
			t.Errorf("after import: the plan changes %s %v", ch.Address, ch.Change.Actions)
			continue
		}
		if slices.Contains(ch.Change.Actions, "delete") && len(ch.Change.ReplacePaths) == 0 {
			t.Errorf("after import: the plan %v %s", ch.Change.Actions, addr)
		}
		for _, p := range ch.Change.ReplacePaths {
			if len(p) == 0 || !slices.Contains(c.WriteOnly, fmt.Sprint(p[0])) {
				t.Errorf("after import: the plan replaces %s for %v, which is not write-only", addr, p)
			}
		}
		for name, after := range ch.Change.After {
			if before := ch.Change.Before[name]; !reflect.DeepEqual(before, after) && !slices.Contains(c.WriteOnly, name) {
				t.Errorf("after import: the plan changes %s of %s (%s → %s), which is not write-only", name, addr, show(before), show(after))
			}
		}
	}
}
