package trafficpolicy

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/rules/trafficpolicy/policytest"
)

// oldCheck is the cel-go validator's checkExpression.
func oldCheck(t *testing.T) func(m *model, phase string, scope []string, expr string, boolean bool) error {
	return func(m *model, phase string, scope []string, expr string, boolean bool) error {
		env, tree, err := oldEnvFor(m, phase, scope)
		if err != nil {
			t.Fatal(err)
		}
		return oldCompile(env, tree, expr, boolean)
	}
}

// outcome sums up a compilation: accepted, refused for a limit, or refused.
func outcome(err error) string {
	var le limitError
	switch {
	case err == nil:
		return "accepted"
	case errors.As(err, &le):
		return "over a limit"
	}
	return "refused"
}

// strs collects every string of a YAML or JSON tree, and the expressions of its ${…}.
func strs(v any, out map[string]bool) {
	switch v := v.(type) {
	case string:
		out[v] = true
		if exprs, err := splitInterpolations(v); err == nil {
			for _, e := range exprs {
				out[e] = true
			}
		}
	case []any:
		for _, e := range v {
			strs(e, out)
		}
	case map[string]any:
		for k, e := range v {
			strs(k, out)
			strs(e, out)
		}
	}
}

// expressionCorpus is every string of the documentation's facts and, when it is beside the
// checkout, of the documentation's own traffic policy YAML, with the expressions of their
// interpolations; every documented function's and variable's probe; and the expressions of
// this package's accepted examples and of the limits.
func expressionCorpus(t *testing.T) []string {
	set := map[string]bool{}
	for _, path := range []string{factsPath, referencePath} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Logf("%s: %v (skipped)", path, err)
			continue
		}
		var v any
		if err := yaml.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		strs(v, set)
	}
	m := fromReference(t)
	for _, f := range m.Functions {
		for _, p := range probes(f) {
			set[p] = true
		}
	}
	for _, v := range m.Variables {
		set[strings.ReplaceAll(v.Path, ".[]", "[0]")+" != null"] = true
	}
	for _, doc := range accepted {
		var v any
		if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatal(err)
		}
		strs(v, set)
	}
	for _, e := range []string{"conn.geo.cty != null", "conn.client_port.x != null", "conn.tls.client.subject.cn != null",
		"req.headers.all(a, req.headers.all(b, req.headers.all(c, a.matches(b + c))))",
		"req.headers.all(a, req.headers.all(b, a.matches(b)))", "req.headers.all(a, a.matches('x'))",
		"req.url.query_params['foo'].exists(v, v.matches('^b'))", "json.encode(req.headers) != ''",
		"getReqHeader('x').sort().distinct().size() > 0", "req.headers.map(k, k).sortBy(k, k)[0] == 'a'",
		"attempts < 3 && last_attempt.res.status_code >= 500", "'%d'.format([req.method])", "'%d'.format(['x'])",
		"secrets.get('v', 's')", "secrets.get('v')", "secrets.get(1, 's')", "size(secrets.get('v', 's')) > 0"} {
		set[e] = true
	}
	out := make([]string, 0, len(set))
	for e := range set {
		if len(e) <= MaxExpressionBytes {
			out = append(out, e)
		}
	}
	return out
}

// documentCorpus is every document of this package's tests.
func documentCorpus() []string {
	var out []string
	for _, d := range accepted {
		out = append(out, d)
	}
	for _, c := range policytest.Cases() {
		out = append(out, c.Doc)
	}
	return out
}

// The validator agrees with the cel-go one it replaced on every expression of the corpus, in
// every phase, as a condition and as a value: accepted, refused, or refused for a limit.
func TestAgreesWithCelGo(t *testing.T) {
	m, err := theModel()
	if err != nil {
		t.Fatal(err)
	}
	old := oldCheck(t)
	exprs := expressionCorpus(t)
	n := 0
	for _, p := range m.Phases {
		for _, scope := range [][]string{nil, {"attempts", "last_attempt"}} {
			for _, e := range exprs {
				for _, boolean := range []bool{true, false} {
					if scope != nil && !boolean {
						continue
					}
					want, got := old(m, p.Name, scope, e, boolean), checkExpression(m, p.Name, scope, e, boolean)
					if outcome(got) != outcome(want) {
						t.Errorf("%s %v %q (condition %v): %s (%v), cel-go %s (%v)", p.Name, scope, e, boolean, outcome(got), got, outcome(want), want)
					}
					n++
				}
			}
		}
	}
	t.Logf("%d expressions, %d compilations agree", len(exprs), n)
}

// The validator answers every document of the tests as the cel-go one did: the same status, path
// and limit. Where either stops on its CPU budget, which depends on its speed and on the
// machine's, the two are not compared.
func TestDocumentsAgreeWithCelGo(t *testing.T) {
	m, err := theModel()
	if err != nil {
		t.Fatal(err)
	}
	compared, budget := 0, 0
	for _, doc := range documentCorpus() {
		validate := func(check func(*model, string, []string, string, bool) error) string {
			v := &validator{ctx: context.Background(), field: "traffic_policy", m: m, check: check, compiled: map[compileKey]error{}, start: threadCPU()}
			v.document(doc)
			if v.err == nil {
				return "accepted"
			}
			e, ok := api.AsError(v.err)
			if !ok {
				return v.err.Error()
			}
			return e.Details["path"] + " " + e.Details["limit"]
		}
		got, want := validate(checkExpression), validate(oldCheck(t))
		if strings.HasSuffix(got, " Budget") || strings.HasSuffix(want, " Budget") {
			budget++
			continue
		}
		compared++
		if got != want {
			short := doc
			if len(short) > 120 {
				short = short[:120] + "…"
			}
			t.Errorf("%q: %s, cel-go %s", short, got, want)
		}
	}
	t.Logf("%d documents answered alike, %d stopped on the CPU budget", compared, budget)
}
