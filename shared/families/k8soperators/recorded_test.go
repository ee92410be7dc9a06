package k8soperators_test

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"testing"

	"tunnelapi/shared/families/k8soperators"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/testing/testkit"
)

// reference is the platform's reference of the family, with its recorded examples, relative to
// this package.
const reference = "../../../../shared/reference/kubernetes-operators.md"

// recorded are the reference's examples: each operation's request body (the curl's -d) and
// response (JSON), by operation.
type recorded struct {
	requests  map[string]string
	responses map[string]any
}

var (
	exampleHeading = regexp.MustCompile(`(?m)^### ([a-z_]+) \((request|response)\)$`)
	curlBody       = regexp.MustCompile(`(?m)^-d '(.*)' \\$`)
	jsonBlock      = regexp.MustCompile("(?s)```json\n(.*?)\n```")
)

func readRecorded(t *testing.T) recorded {
	b, err := os.ReadFile(reference)
	if err != nil {
		t.Skip("the platform's Kubernetes operators reference is not beside the checkout")
	}
	text := string(b)
	out := recorded{requests: map[string]string{}, responses: map[string]any{}}
	locs := exampleHeading.FindAllStringSubmatchIndex(text, -1)
	for i, loc := range locs {
		end := len(text)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		op, kind, section := text[loc[2]:loc[3]], text[loc[4]:loc[5]], text[loc[1]:end]
		if kind == "request" {
			if m := curlBody.FindStringSubmatch(section); m != nil {
				out.requests[op] = m[1]
			}
			continue
		}
		if m := jsonBlock.FindStringSubmatch(section); m != nil {
			var v any
			if err := json.Unmarshal([]byte(m[1]), &v); err != nil {
				t.Fatalf("the recorded %s response: %v", op, err)
			}
			out.responses[op] = v
		}
	}
	for _, op := range []string{"create", "update", "get", "list", "get_bound_endpoints"} {
		if out.responses[op] == nil {
			t.Fatalf("the reference records no %s response", op)
		}
	}
	return out
}

// varies are the members whose values differ between deployments (ids, times, hosts): their
// kind is compared, not their value.
var varies = []string{"id", "uri", "created_at", "updated_at", "principal.id", "binding.ingress_endpoint"}

// The platform's recorded examples of /kubernetes_operators replay here with the same shape and
// values: the recorded create, get, list, bound endpoints, update and delete requests, in a
// fresh account, answer what the platform answered, but for ids, times and hosts. The recorded
// update answers binding.ingress_endpoint, which its request does not send: the platform's own
// ingress endpoint, here the deployment's (k8soperators.IngressEndpoint), shown from then on.
func TestRecordedExamplesReplay(t *testing.T) {
	rec := readRecorded(t)
	_, a := suite.AppAccount(t)
	check := func(op string, got map[string]any) {
		t.Helper()
		for _, p := range testkit.CompareRecorded("", got, rec.responses[op], varies...) {
			t.Errorf("%s: %s", op, p)
		}
	}
	var create map[string]any
	if err := json.Unmarshal([]byte(rec.requests["create"]), &create); err != nil {
		t.Fatalf("the recorded create request: %v", err)
	}
	created := a.Do(t, "POST", path, create).Expect(t, http.StatusCreated)
	check("create", created)
	item := path + "/" + created["id"].(string)
	check("get", a.Do(t, "GET", item, nil).Expect(t, http.StatusOK))
	check("list", a.Do(t, "GET", path, nil).Expect(t, http.StatusOK))
	check("get_bound_endpoints", a.Do(t, "GET", item+"/bound_endpoints", nil).Expect(t, http.StatusOK))
	var update map[string]any
	if err := json.Unmarshal([]byte(rec.requests["update"]), &update); err != nil {
		t.Fatalf("the recorded update request: %v", err)
	}
	updated := a.Do(t, "PATCH", item, update).Expect(t, http.StatusOK)
	check("update", updated)
	want := k8soperators.IngressEndpoint(config.Default("BASE_DOMAIN"))
	for what, got := range map[string]map[string]any{"update": updated, "get after the update": a.Do(t, "GET", item, nil).Expect(t, http.StatusOK)} {
		if ie := got["binding"].(map[string]any)["ingress_endpoint"]; ie != want {
			t.Errorf("%s: binding.ingress_endpoint %v, want the deployment's %s", what, ie, want)
		}
	}
	if res := a.Do(t, "DELETE", item, nil); res.Status != http.StatusNoContent || len(res.Body) != 0 {
		t.Errorf("delete: %d %q, recorded an empty 204", res.Status, res.Body)
	}
}

// An ingress endpoint the operator sets is its own: an update keeps it.
func TestIngressEndpointKept(t *testing.T) {
	_, a := suite.AppAccount(t)
	got := a.Do(t, "POST", path, map[string]any{"binding": map[string]any{"ingress_endpoint": "ingress.example.com:8443"}}).Expect(t, http.StatusCreated)
	item := path + "/" + got["id"].(string)
	got = a.Do(t, "PATCH", item, map[string]any{"metadata": "m"}).Expect(t, http.StatusOK)
	if ie := got["binding"].(map[string]any)["ingress_endpoint"]; ie != "ingress.example.com:8443" {
		t.Errorf("binding.ingress_endpoint %v after a PATCH of metadata, want the operator's own", ie)
	}
}
