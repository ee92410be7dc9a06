package trafficpolicy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
)

// The acceptance table, generated from the facts (testdata/traffic-policy.yaml), not from the
// embedded model: for every action, in every phase it runs in, a config holding every documented
// field validates, and so does each field at its default, each enum value, each bound, each
// legacy name and each shape the documentation's examples use; a mutated copy (unknown field,
// wrong type, bad enum, out-of-range value, broken CEL) is refused naming the path of the
// mutated value.

// fromReference generates the model from the project's copy of the documentation's facts.
func fromReference(t *testing.T) *model {
	t.Helper()
	out := generated(t)
	m := &model{phases: map[string]*phaseRef{}, actions: map[string]*actionRef{}}
	if err := json.Unmarshal(out, &m.reference); err != nil {
		t.Fatal(err)
	}
	for i := range m.Phases {
		m.phases[m.Phases[i].Name] = &m.Phases[i]
	}
	return m
}

// sample returns a valid value for f (the smallest one the bounds allow).
func sample(f *fieldRef, inList bool) any {
	switch f.Kind {
	case kindString:
		switch {
		case len(f.Enum) > 0:
			return f.Enum[0]
		case f.Format == formatCIDR:
			return "10.0.0.0/8"
		case f.Format == formatIPPolicy:
			return ids.New(ids.IPPolicy)
		case f.Format == formatRegex:
			return "^/products/?(.*)$"
		case f.Format == formatCEL && inList:
			return "conn.client_ip"
		case f.Format == formatCEL:
			return "size(conn.client_ip) > 0"
		case f.Format == formatCredential:
			return "user:password123"
		case f.CEL:
			return "v-${conn.client_ip}"
		}
		return "value"
	case kindBool:
		return true
	case kindInt:
		return int(firstNumber(1, append(f.Enum, f.Min)...))
	case kindFloat:
		return firstNumber(0.5, f.Min)
	case kindDuration:
		if f.Min != "" {
			return f.Min
		}
		return "10s"
	case kindList:
		n := max(1, f.MinEntries)
		out := make([]any, n)
		for i := range out {
			out[i] = sample(f.Elem, true)
			if len(f.Elem.Enum) > i {
				out[i] = f.Elem.Enum[i]
			}
		}
		return out
	case kindStringMap:
		if f.CEL {
			return map[string]any{"x-key": "v-${conn.client_ip}"}
		}
		return map[string]any{"x-key": "value"}
	case kindAnyMap:
		if f.CEL {
			return map[string]any{"key": "v-${conn.client_ip}"}
		}
		return map[string]any{"key": "value"}
	case kindObject:
		out := map[string]any{}
		for i := range f.Fields {
			out[f.Fields[i].Name] = sample(&f.Fields[i], false)
		}
		return out
	}
	return "value"
}

// firstNumber is the first of texts that is a number, else fallback.
func firstNumber(fallback float64, texts ...string) float64 {
	for _, t := range texts {
		var n float64
		if _, err := fmt.Sscan(t, &n); err == nil {
			return n
		}
	}
	return fallback
}

// minimal holds only the required fields.
func minimal(fields []fieldRef) map[string]any {
	out := map[string]any{}
	for i := range fields {
		if fields[i].Required {
			out[fields[i].Name] = sample(&fields[i], false)
		}
	}
	return out
}

// policy wraps one action in a rule of phase (as JSON).
func policy(phase, typ string, config any) string {
	action := map[string]any{"type": typ}
	if config != nil {
		action["config"] = config
	}
	b, _ := json.Marshal(map[string]any{phase: []any{map[string]any{"name": "rule", "actions": []any{action}}}})
	return string(b)
}

func clone(v any) any {
	b, _ := json.Marshal(v)
	var out any
	json.Unmarshal(b, &out)
	return out
}

// mutation is a refused variant: the path of the mutated value and its replacement.
type mutation struct {
	kind, path string
	value      any
	remove     bool
}

// mutations lists, for the field at path, every way to make it invalid.
func mutations(path string, f *fieldRef, inList bool) []mutation {
	var out []mutation
	wrong := map[string]any{kindString: 12345, kindBool: "yes", kindInt: "ten", kindFloat: "half", kindDuration: 10,
		kindList: 12345, kindStringMap: []any{1}, kindAnyMap: []any{1}, kindObject: []any{1}}
	if w, ok := wrong[f.Kind]; ok {
		out = append(out, mutation{kind: "wrong type", path: path, value: w})
	}
	switch f.Kind {
	case kindString:
		if len(f.Enum) > 0 {
			out = append(out, mutation{kind: "bad enum", path: path, value: "not-" + f.Enum[0]})
		}
		if f.MaxChars > 0 {
			out = append(out, mutation{kind: "out of range", path: path, value: strings.Repeat("n", f.MaxChars+1)})
		}
		switch {
		case f.Format == formatCEL:
			out = append(out, mutation{kind: "broken CEL", path: path, value: "conn.client_ip =="})
		case f.CEL && len(f.Enum) == 0:
			out = append(out, mutation{kind: "broken CEL", path: path, value: "v-${conn.client_ip ==}"})
		}
		if f.Format == formatCIDR {
			out = append(out, mutation{kind: "bad value", path: path, value: "10.0.0.1/33"})
		}
		if f.Format == formatRegex {
			out = append(out, mutation{kind: "bad value", path: path, value: "(unclosed"})
		}
	case kindInt, kindFloat:
		if len(f.Enum) > 0 {
			out = append(out, mutation{kind: "bad enum", path: path, value: 299})
		}
		if f.Min != "" {
			var n float64
			fmt.Sscan(f.Min, &n)
			out = append(out, mutation{kind: "out of range", path: path, value: n - 1})
		}
		if f.Max != "" {
			var n float64
			fmt.Sscan(f.Max, &n)
			out = append(out, mutation{kind: "out of range", path: path, value: n + 1})
		}
	case kindDuration:
		out = append(out, mutation{kind: "wrong type", path: path, value: "ten seconds"})
		if f.Min != "" {
			d, _ := time.ParseDuration(f.Min)
			out = append(out, mutation{kind: "out of range", path: path, value: (d / 2).String()})
		}
		if f.Max != "" {
			d, _ := time.ParseDuration(f.Max)
			out = append(out, mutation{kind: "out of range", path: path, value: (d * 2).String()})
		}
		if f.MultipleOf != "" {
			d, _ := time.ParseDuration(f.Min)
			out = append(out, mutation{kind: "out of range", path: path, value: (d + time.Second).String()})
		}
	case kindList:
		if f.MaxEntries > 0 {
			list := make([]any, f.MaxEntries+1)
			for i := range list {
				list[i] = sample(f.Elem, true)
			}
			out = append(out, mutation{kind: "out of range", path: path, value: list})
		}
		if f.MinEntries > 0 {
			out = append(out, mutation{kind: "out of range", path: path, value: []any{}})
		}
		out = append(out, mutations(path+"[0]", f.Elem, true)...)
	case kindStringMap, kindAnyMap:
		if f.MaxEntries > 0 {
			m := map[string]any{}
			for i := 0; i <= f.MaxEntries; i++ {
				m[fmt.Sprintf("k%d", i)] = "v"
			}
			out = append(out, mutation{kind: "out of range", path: path, value: m})
		}
		if f.MinEntries > 0 {
			out = append(out, mutation{kind: "out of range", path: path, value: map[string]any{}})
		}
		if f.CEL {
			key := "x-key"
			if f.Kind == kindAnyMap {
				key = "key"
			}
			out = append(out, mutation{kind: "broken CEL", path: path + "." + key, value: "v-${conn.client_ip ==}"})
		}
		if f.Kind == kindStringMap {
			out = append(out, mutation{kind: "wrong type", path: path + ".x-key", value: 12345})
		}
		if f.OneKey {
			out = append(out, mutation{kind: "out of range", path: path, value: map[string]any{"a": "1", "b": "2"}})
		}
	case kindObject:
		out = append(out, mutation{kind: "unknown field", path: path + ".not_a_field", value: "x"})
		for i := range f.Fields {
			fd := &f.Fields[i]
			out = append(out, mutations(path+"."+fd.Name, fd, false)...)
			if fd.Required {
				out = append(out, mutation{kind: "missing", path: path + "." + fd.Name, remove: true})
			}
		}
	}
	return out
}

// set replaces (or removes) the value at path (".a.b[0].c") inside doc.
func set(doc any, path string, value any, remove bool) bool {
	parts := splitPath(path)
	cur := doc
	for i, p := range parts {
		last := i == len(parts)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				if remove {
					delete(c, p)
				} else {
					c[p] = value
				}
				return true
			}
			cur = c[p]
		case []any:
			var n int
			fmt.Sscanf(p, "[%d]", &n)
			if n >= len(c) {
				return false
			}
			if last {
				c[n] = value
				return true
			}
			cur = c[n]
		default:
			return false
		}
	}
	return false
}

func splitPath(path string) []string {
	var out []string
	for _, seg := range strings.Split(strings.TrimPrefix(path, "."), ".") {
		name, rest, _ := strings.Cut(seg, "[")
		out = append(out, name)
		for rest != "" {
			idx, more, _ := strings.Cut(rest, "]")
			out = append(out, "["+idx+"]")
			rest = strings.TrimPrefix(more, "[")
		}
	}
	return out
}

func TestEveryDocumentedActionAndFieldValidates(t *testing.T) {
	m := fromReference(t)
	ctx := context.Background()
	ok := func(name, doc string) {
		t.Helper()
		if err := Validate(ctx, "traffic_policy", doc); err != nil {
			t.Errorf("%s: %v\n%s", name, err, doc)
		}
	}
	n := 0
	eachActionInPhase(m, func(a *actionRef, phase string, config *fieldRef, full any) {
		fields := config.Fields
		names := append([]string{a.Type}, a.Aliases...)
		for _, typ := range names {
			ok(fmt.Sprintf("%s in %s, every field", typ, phase), policy(phase, typ, full))
			ok(fmt.Sprintf("%s in %s, required fields only", typ, phase), policy(phase, typ, minimal(fields)))
			n += 2
		}
		if len(minimal(fields)) == 0 {
			ok(fmt.Sprintf("%s in %s without config", a.Type, phase), policy(phase, a.Type, nil))
		}
		// The same as YAML.
		y, _ := yaml.Marshal(map[string]any{phase: []any{map[string]any{"actions": []any{map[string]any{"type": a.Type, "config": full}}}}})
		ok(fmt.Sprintf("%s in %s as YAML", a.Type, phase), string(y))
		// Each field at each documented value (and each alias name, each example shape).
		for i := range fields {
			f := &fields[i]
			variants := map[string]any{}
			if f.Default != nil {
				variants["default"] = f.Default
			}
			for _, e := range f.Enum {
				variants["enum "+e] = e
				if f.Kind == kindInt {
					var num int
					fmt.Sscan(e, &num)
					variants["enum "+e] = num
				}
			}
			if f.Elem != nil {
				for _, e := range f.Elem.Enum {
					variants["enum "+e] = []any{e}
				}
			}
			if f.Min != "" {
				variants["min"] = boundValue(f, f.Min)
			}
			if f.Max != "" {
				variants["max"] = boundValue(f, f.Max)
			}
			for j := range f.Alt {
				variants[fmt.Sprintf("example shape %d", j)] = sample(&f.Alt[j], false)
			}
			if f.Elem != nil {
				for j := range f.Elem.Alt {
					variants[fmt.Sprintf("example element shape %d", j)] = []any{sample(&f.Elem.Alt[j], true)}
				}
			}
			for name, val := range variants {
				c := clone(full).(map[string]any)
				c[f.Name] = val
				ok(fmt.Sprintf("%s in %s, %s %s", a.Type, phase, f.Name, name), policy(phase, a.Type, c))
				n++
			}
			for _, alias := range f.Aliases {
				c := clone(full).(map[string]any)
				c[alias] = c[f.Name]
				delete(c, f.Name)
				ok(fmt.Sprintf("%s in %s, %s under its other name %s", a.Type, phase, f.Name, alias), policy(phase, a.Type, c))
				c[f.Name] = c[alias]
				refused(t, fmt.Sprintf("%s with both %s and %s", a.Type, f.Name, alias), policy(phase, a.Type, c), phase+"[0].actions[0].config."+alias)
				n++
			}
		}
	})
	t.Logf("%d documents from the reference validated", n)
}

// eachActionInPhase calls f for every action in every phase it runs in, with its config's
// shape and a sample config holding every field.
func eachActionInPhase(m *model, f func(a *actionRef, phase string, config *fieldRef, full any)) {
	for ai := range m.Actions {
		a := &m.Actions[ai]
		for _, phase := range a.Phases {
			config := fieldRef{Kind: kindObject, Fields: a.config(phase)}
			f(a, phase, &config, sample(&config, false))
		}
	}
}

func boundValue(f *fieldRef, b string) any {
	if f.Kind == kindDuration {
		return b
	}
	var x float64
	fmt.Sscan(b, &x)
	return x
}

// refused checks doc is a 400 naming traffic_policy whose details point at path (or, for a
// value whose own key is the problem, inside it).
func refused(t *testing.T, name, doc, path string) {
	t.Helper()
	err := Validate(context.Background(), "traffic_policy", doc)
	e, ok := api.AsError(err)
	if !ok || e.Status != 400 || e.Field != "traffic_policy" {
		t.Errorf("%s: %v, want a 400 naming traffic_policy\n%s", name, err, doc)
		return
	}
	got := e.Details["path"]
	if got != path && !strings.HasPrefix(got, path+".") && !strings.HasPrefix(got, path+"[") && !strings.HasPrefix(path, got+".") {
		t.Errorf("%s: refused at %q, want %q: %s", name, got, path, e.Msg)
	}
	if !strings.Contains(e.Msg, got) {
		t.Errorf("%s: message %q does not name the path %q", name, e.Msg, got)
	}
}

func TestEveryMutationIsRefusedNamingThePath(t *testing.T) {
	m := fromReference(t)
	kinds := map[string]int{}
	eachActionInPhase(m, func(a *actionRef, phase string, config *fieldRef, full any) {
		base := phase + "[0].actions[0].config"
		ms := mutations("", config, false)
		for _, mu := range ms {
			if a.OpenConfig && mu.kind == "unknown field" && strings.Count(mu.path, ".") == 1 {
				continue // accepted where the documentation lists no complete config
			}
			if mu.path == "" {
				continue // the config itself: covered below
			}
			c := clone(full)
			if !set(c, mu.path, mu.value, mu.remove) {
				t.Fatalf("%s: cannot set %s", a.Type, mu.path)
			}
			refused(t, fmt.Sprintf("%s in %s, %s at %s", a.Type, phase, mu.kind, mu.path), policy(phase, a.Type, c), base+mu.path)
			kinds[mu.kind]++
		}
		refused(t, a.Type+" config not a mapping", policy(phase, a.Type, []any{1}), base)
		kinds["wrong type"]++
		// An action in a phase it does not run in.
		for _, other := range m.Phases {
			if !contains(a.Phases, other.Name) {
				refused(t, fmt.Sprintf("%s in %s", a.Type, other.Name), policy(other.Name, a.Type, full), other.Name+"[0].actions[0].type")
				kinds["wrong phase"]++
				break
			}
		}
	})
	for _, p := range m.Phases {
		doc, _ := json.Marshal(map[string]any{p.Name: []any{map[string]any{"expressions": []any{"conn.client_ip =="},
			"actions": []any{map[string]any{"type": "log", "config": map[string]any{"metadata": map[string]any{"a": "b"}}}}}}})
		refused(t, "broken rule expression in "+p.Name, string(doc), p.Name+"[0].expressions[0]")
		kinds["broken CEL"]++
	}
	for _, k := range []string{"unknown field", "wrong type", "bad enum", "out of range", "broken CEL", "missing"} {
		if kinds[k] == 0 {
			t.Errorf("no %s mutation was generated", k)
		}
	}
	t.Logf("mutations refused: %v", kinds)
}

// samples of each documented type, for function probes.
var typeSample = map[string]string{
	"string": "'a'", "bytes": "b'a'", "int": "1", "double": "1.0", "bool": "true", "list": "['a']", "list<string>": "['a']",
	"map": "{'a': 'b'}", "dyn": "['a']", "timestamp": "timestamp('2024-01-01T00:00:00Z')", "duration": "duration('1s')",
}

var macroProbe = map[string]string{
	"all": "%s.all(x, true)", "exists": "%s.exists(x, true)", "exists_one": "%s.exists_one(x, true)", "filter": "%s.filter(x, true)",
	"map": "%s.map(x, x)", "sortBy": "%s.sortBy(x, x)", "has": "has(conn.geo)",
}

// probes returns expressions calling f with every documented arity.
func probes(f functionRef) []string {
	recv := ""
	if f.Receiver != "" {
		recv = typeSample[f.Receiver] + "."
	}
	switch f.Name { // receivers the function needs more precisely than its documented type
	case "flatten":
		recv = "[['a']]."
	case "format":
		recv = "'%s'."
	}
	if f.Macro {
		p := macroProbe[f.Name]
		if f.Name == "map" && len(f.Params) == 3 {
			p = "%s.map(x, true, x)"
		}
		if strings.Contains(p, "%s") {
			return []string{fmt.Sprintf(p, typeSample[f.Receiver])}
		}
		return []string{p}
	}
	var out []string
	for n := len(f.Params) - f.Optional; n <= len(f.Params); n++ {
		var args []string
		for _, p := range f.Params[:n] {
			args = append(args, typeSample[p])
		}
		out = append(out, fmt.Sprintf("%s%s(%s)", recv, f.Name, strings.Join(args, ", ")))
	}
	return out
}

func TestEveryDocumentedFunctionCompilesInItsPhases(t *testing.T) {
	m := fromReference(t)
	real, err := theModel()
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for _, f := range m.Functions {
		for _, p := range m.Phases {
			env, tree := envFor(real, p.Name, nil)
			for _, probe := range probes(f) {
				err := compile(env, tree, probe, false)
				if len(f.Phases) == 0 || contains(f.Phases, p.Name) {
					if err != nil {
						t.Errorf("%s in %s: %s: %v", f.Signature, p.Name, probe, err)
					}
					count++
				} else if err == nil {
					t.Errorf("%s in %s: %s compiles, but the function is not of that phase", f.Signature, p.Name, probe)
				}
			}
		}
	}
	t.Logf("%d function probes compiled", count)
}

func TestEveryDocumentedVariableCompilesInItsPhases(t *testing.T) {
	m := fromReference(t)
	real, _ := theModel()
	for _, p := range m.Phases {
		env, tree := envFor(real, p.Name, nil)
		for _, v := range m.Variables {
			expr := strings.ReplaceAll(v.Path, ".[]", "[0]")
			root, _, _ := strings.Cut(v.Path, ".")
			err := compile(env, tree, expr+" != null", true)
			if contains(p.Roots, root) && err != nil {
				t.Errorf("%s in %s: %v", expr, p.Name, err)
			}
			if !contains(p.Roots, root) && err == nil {
				t.Errorf("%s compiles in %s, which has no %s", expr, p.Name, root)
			}
		}
		// A misspelt member of a documented object, and a member of a documented scalar.
		if contains(p.Roots, "conn") {
			for _, bad := range []string{"conn.geo.cty", "conn.client_port.x", "conn.tls.client.subject.cn"} {
				if err := compile(env, tree, bad+" != null", true); err == nil {
					t.Errorf("%s compiles in %s", bad, p.Name)
				}
			}
		}
	}
}

// Every phase of the reference, the fourth included, takes rules.
func TestEveryPhase(t *testing.T) {
	m := fromReference(t)
	for _, p := range m.Phases {
		var typ string
		for _, a := range m.Actions {
			if contains(a.Phases, p.Name) && len(minimal(a.config(p.Name))) == 0 {
				typ = a.Type
			}
		}
		if typ == "" {
			for _, a := range m.Actions {
				if contains(a.Phases, p.Name) {
					typ = a.Type
				}
			}
		}
		a := m.Actions[0]
		for _, x := range m.Actions {
			if x.Type == typ {
				a = x
			}
		}
		doc, _ := json.Marshal(map[string]any{p.Name: []any{map[string]any{"name": "r", "expressions": []any{"size(conn.client_ip) > 0"},
			"actions": []any{map[string]any{"type": typ, "config": minimal(a.config(p.Name))}}}}})
		if err := Validate(context.Background(), "traffic_policy", string(doc)); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
	}
}
