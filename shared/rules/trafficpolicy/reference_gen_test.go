package trafficpolicy

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The generator: it turns the documentation's facts into reference.json, the model the validator
// embeds. The facts are the project's copy, testdata/traffic-policy.yaml: the documentation's
// YAML reduced to what the generator reads (TestFactsMatchTheReference makes and checks it when
// the documentation's YAML is beside the checkout). After the documentation changes, run
//
//	go test ./shared/rules/trafficpolicy -run 'TestFactsMatchTheReference|TestReferenceIsCurrent' -update
//
// and commit both files. Interpretations that are decisions rather than transcriptions (legacy
// names, the examples that disagree with the tables, the undocumented fourth phase's variables)
// are made here, each once, and a fact this generator does not know fails the generation so that
// a new discrepancy gets a decision too.

var update = flag.Bool("update", false, "rewrite testdata/traffic-policy.yaml from the documentation's YAML, and reference.json from it")

// referencePath is the documentation's facts beside the checkout, relative to this package.
const referencePath = "../../../../shared/reference/traffic-policy.yaml"

// factsPath is the project's copy of them.
const factsPath = "testdata/traffic-policy.yaml"

// generated generates the model's JSON from the project's copy of the facts.
func generated(t *testing.T) []byte {
	t.Helper()
	src, err := os.ReadFile(factsPath)
	if err != nil {
		t.Fatal(err)
	}
	out, err := generate(src)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The project's copy of the facts is what the documentation's YAML reduces to.
func TestFactsMatchTheReference(t *testing.T) {
	src, err := os.ReadFile(referencePath)
	if err != nil {
		t.Skip("the documentation's traffic policy YAML is not beside the checkout: the tests use " + factsPath + " as it is")
	}
	got, err := reduce(src)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(factsPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(factsPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, have) {
		t.Fatal(factsPath + " differs from what the documentation's YAML reduces to: run this test with -update and commit it")
	}
}

func TestReferenceIsCurrent(t *testing.T) {
	got := generated(t)
	if *update {
		if err := os.WriteFile("reference.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(got, referenceJSON) {
		t.Fatal("reference.json differs from what " + factsPath + " generates: run this test with -update and commit it")
	}
}

// reduce keeps of the documentation's YAML what the generator reads.
func reduce(src []byte) ([]byte, error) {
	var raw rawRef
	if err := yaml.Unmarshal(src, &raw); err != nil {
		return nil, fmt.Errorf("parse the reference: %w", err)
	}
	var buf bytes.Buffer
	buf.WriteString("# The facts of the platform's traffic policy documentation that reference_gen_test.go reads.\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(raw); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

type rawRef struct {
	Document struct {
		TopLevelFields []struct {
			Name string `yaml:"name,omitempty"`
		} `yaml:"top_level_fields,omitempty"`
	} `yaml:"document,omitempty"`
	RuleFields   []struct{ Name string } `yaml:"rule_fields,omitempty"`
	ActionFields []struct{ Name string } `yaml:"action_fields,omitempty"`
	Phases       map[string]struct {
		Order                    any      `yaml:"order"`
		Actions                  []string `yaml:"actions,omitempty"`
		ActionsAlsoPerActionHub  []string `yaml:"actions_also_per_ActionHub,omitempty"`
		ActionsOnlyPerActionPage []string `yaml:"actions_only_per_action_page,omitempty"`
	} `yaml:"phases,omitempty"`
	Actions   map[string]rawAction `yaml:"actions,omitempty"`
	Variables struct {
		Namespaces map[string]struct {
			Variables []struct {
				Name string `yaml:"name,omitempty"`
				Type string `yaml:"type,omitempty"`
			} `yaml:"variables,omitempty"`
		} `yaml:"namespaces,omitempty"`
		ByPhase      map[string]any          `yaml:"variables_by_phase_inferred"`
		Undocumented []struct{ Name string } `yaml:"undocumented_but_referenced,omitempty"`
	} `yaml:"variables,omitempty"`
	Functions struct {
		Categories map[string][]string `yaml:"categories,omitempty"`
	} `yaml:"functions,omitempty"`
	NameVariants []struct {
		Action string         `yaml:"action,omitempty"`
		What   string         `yaml:"what,omitempty"`
		Names  map[string]any `yaml:"names"`
	} `yaml:"name_variants,omitempty"`
	Discrepancies []struct {
		Fact  string            `yaml:"fact,omitempty"`
		Items map[string]string `yaml:"items,omitempty"`
	} `yaml:"discrepancies,omitempty"`
}

type rawAction struct {
	Status             string                `yaml:"status,omitempty"`
	Phases             any                   `yaml:"phases"`
	PhasesPerActionHub []string              `yaml:"phases_per_ActionHub,omitempty"`
	Config             []rawField            `yaml:"config,omitempty"`
	ConfigByPhase      map[string][]rawField `yaml:"config_by_phase,omitempty"`
	OtherNames         []string              `yaml:"other_names_mentioned,omitempty"`
	Results            []rawResult           `yaml:"result_variables,omitempty"`
}

type rawField struct {
	Name       string         `yaml:"name,omitempty"`
	Type       string         `yaml:"type,omitempty"`
	Required   any            `yaml:"required"`
	Default    any            `yaml:"default"`
	Enum       []any          `yaml:"enum"`
	Bounds     map[string]any `yaml:"bounds"`
	CEL        bool           `yaml:"cel,omitempty"`
	Notes      []string       `yaml:"notes,omitempty"`
	Fields     []rawField     `yaml:"fields,omitempty"`
	ItemFields []rawField     `yaml:"item_fields,omitempty"`
}

type rawResult struct {
	Name   string      `yaml:"name,omitempty"`
	Type   string      `yaml:"type,omitempty"`
	Fields []rawResult `yaml:"fields,omitempty"`
}

func generate(src []byte) ([]byte, error) {
	var raw rawRef
	if err := yaml.Unmarshal(src, &raw); err != nil {
		return nil, fmt.Errorf("parse the reference: %w", err)
	}
	g := &generator{raw: raw}
	ref, err := g.reference()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(ref); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

type generator struct {
	raw rawRef
}

// responsePhases are the phases that run once a response exists; the fourth phase
// (on_event_stream_message, a message of a server-sent event stream) has no documented variables
// or functions, and as it runs inside an HTTP response it gets what on_http_response has.
const streamPhase = "on_event_stream_message"

func (g *generator) reference() (*reference, error) {
	ref := &reference{}
	// Document shape: the validator knows these names; a change in the reference must be seen.
	var rule, action []string
	for _, f := range g.raw.RuleFields {
		rule = append(rule, f.Name)
	}
	for _, f := range g.raw.ActionFields {
		action = append(action, f.Name)
	}
	if !slices.Equal(rule, []string{"name", "expressions", "actions"}) || !slices.Equal(action, []string{"type", "config"}) {
		return nil, fmt.Errorf("rule fields %v or action fields %v changed: update the validator", rule, action)
	}
	// Phases in their documented order (the undocumented order of the fourth goes last).
	var names []string
	for _, f := range g.raw.Document.TopLevelFields {
		names = append(names, f.Name)
	}
	order := func(p string) int {
		if o, ok := g.raw.Phases[p].Order.(int); ok {
			return o
		}
		return 1 << 20
	}
	sort.SliceStable(names, func(i, j int) bool { return order(names[i]) < order(names[j]) })
	roots, err := g.roots(names)
	if err != nil {
		return nil, err
	}
	for _, p := range names {
		if _, ok := g.raw.Phases[p]; !ok {
			return nil, fmt.Errorf("phase %s has no entry under phases", p)
		}
		ref.Phases = append(ref.Phases, phaseRef{Name: p, Roots: roots[p]})
	}
	// Actions: phases from the action page, the ActionHub and the phase lists together.
	inPhase := map[string][]string{}
	for _, p := range names {
		ph := g.raw.Phases[p]
		for _, a := range slices.Concat(ph.Actions, ph.ActionsAlsoPerActionHub, ph.ActionsOnlyPerActionPage) {
			inPhase[a] = append(inPhase[a], p)
		}
	}
	for _, typ := range sortedKeys(g.raw.Actions) {
		a, err := g.action(typ, g.raw.Actions[typ], inPhase[typ], names)
		if err != nil {
			return nil, fmt.Errorf("action %s: %w", typ, err)
		}
		ref.Actions = append(ref.Actions, a)
	}
	for a := range inPhase {
		if _, ok := g.raw.Actions[a]; !ok {
			return nil, fmt.Errorf("a phase lists action %s, which has no entry under actions", a)
		}
	}
	if err := g.nameVariants(ref); err != nil {
		return nil, err
	}
	if err := g.discrepancies(ref); err != nil {
		return nil, err
	}
	if ref.Variables, err = g.variables(ref); err != nil {
		return nil, err
	}
	if ref.Functions, err = g.functions(names); err != nil {
		return nil, err
	}
	return ref, nil
}

// roots reads variables_by_phase_inferred ("conn.*", …) into each phase's namespaces.
func (g *generator) roots(phases []string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, p := range phases {
		switch v := g.raw.Variables.ByPhase[p].(type) {
		case []any:
			for _, e := range v {
				s, _ := e.(string)
				root, _, _ := strings.Cut(strings.TrimSuffix(s, ".*"), ".")
				if root == "" || !strings.HasSuffix(s, ".*") {
					return nil, fmt.Errorf("variables_by_phase_inferred.%s: %q is not a namespace.*", p, s)
				}
				if !slices.Contains(out[p], root) {
					out[p] = append(out[p], root)
				}
			}
		case string:
			if p != streamPhase {
				return nil, fmt.Errorf("variables_by_phase_inferred.%s is %q", p, v)
			}
		default:
			return nil, fmt.Errorf("variables_by_phase_inferred.%s is missing", p)
		}
	}
	out[streamPhase] = slices.Clone(out["on_http_response"])
	return out, nil
}

func (g *generator) action(typ string, a rawAction, listed, allPhases []string) (actionRef, error) {
	out := actionRef{Type: typ}
	var phases []string
	switch p := a.Phases.(type) {
	case []any:
		for _, e := range p {
			phases = append(phases, fmt.Sprint(e))
		}
	case string:
		// Undocumented phases (ai-gateway, saml): their examples use on_http_request.
		if !strings.Contains(p, "on_http_request") {
			return out, fmt.Errorf("phases %q", p)
		}
		phases = []string{"on_http_request"}
	}
	for _, p := range slices.Concat(phases, a.PhasesPerActionHub, listed) {
		if !slices.Contains(allPhases, p) {
			return out, fmt.Errorf("unknown phase %s", p)
		}
		if !slices.Contains(out.Phases, p) {
			out.Phases = append(out.Phases, p)
		}
	}
	sort.Slice(out.Phases, func(i, j int) bool {
		return slices.Index(allPhases, out.Phases[i]) < slices.Index(allPhases, out.Phases[j])
	})
	var err error
	if out.Config, err = g.fields(a.Config); err != nil {
		return out, err
	}
	for _, p := range sortedKeys(a.ConfigByPhase) {
		f, err := g.fields(a.ConfigByPhase[p])
		if err != nil {
			return out, err
		}
		if out.ConfigByPhase == nil {
			out.ConfigByPhase = map[string][]fieldRef{}
		}
		if f == nil {
			f = []fieldRef{}
		}
		out.ConfigByPhase[p] = f
	}
	for _, n := range a.OtherNames {
		out.Config = append(out.Config, fieldRef{Name: n, Kind: kindAny, Undocumented: true})
	}
	// A page without a config section: what is listed is checked, the rest is accepted.
	out.OpenConfig = strings.Contains(a.Status, "no config")
	for _, r := range a.Results {
		out.Results = append(out.Results, results("", "", r)...)
	}
	return out, nil
}

// results flattens a result variable and its documented members into paths. Members are
// written relative to their parent ("attempts[i].resolved_ip" under
// actions.ngrok.http_request.attempts, "replacement_index" under a list) or in full.
func results(parent, parentType string, r rawResult) []string {
	name := r.Name
	if parent != "" && !strings.HasPrefix(name, "actions.") {
		head := name
		if i := strings.IndexAny(name, ".["); i >= 0 {
			head = name[:i]
		}
		last := parent[strings.LastIndex(parent, ".")+1:]
		switch {
		case head == last:
			name = parent[:len(parent)-len(last)] + name
		case strings.HasPrefix(parentType, "array"):
			name = parent + "[i]." + name
		default:
			name = parent + "." + name
		}
	}
	out := []string{normalisePath(name)}
	for _, f := range r.Fields {
		out = append(out, results(name, r.Type, f)...)
	}
	return out
}

var indexPart = regexp.MustCompile(`\[[a-z]\]`)

// normalisePath writes an index ([i], [k]) as a path segment "[]".
func normalisePath(p string) string { return indexPart.ReplaceAllString(p, ".[]") }

// fields converts documented config fields.
func (g *generator) fields(raw []rawField) ([]fieldRef, error) {
	var out []fieldRef
	for _, r := range raw {
		f, err := g.field(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.Name, err)
		}
		out = append(out, f)
	}
	return out, nil
}

func (g *generator) field(r rawField) (fieldRef, error) {
	f := fieldRef{Name: r.Name, CEL: r.CEL, Default: r.Default}
	t := r.Type
	elem := ""
	if rest, ok := strings.CutPrefix(t, "array of "); ok {
		f.Kind, elem = kindList, rest
	} else {
		var err error
		if f.Kind, f.Format, err = scalarKind(t); err != nil {
			return f, err
		}
	}
	// Required only when marked so without a default: a documented default makes a field
	// optional whatever the marker says (the pages that mark both are listed as conflicts).
	f.Required = r.Required == true && r.Default == nil
	for _, e := range r.Enum {
		f.Enum = append(f.Enum, fmt.Sprint(e))
	}
	for _, n := range r.Notes {
		if strings.Contains(n, "CEL interpolation supported") || strings.Contains(n, "values may use CEL interpolation") {
			f.CEL = true
		}
		if rest, ok := strings.CutPrefix(n, "variables in scope: "); ok {
			for _, v := range strings.Split(rest, ", ") {
				root, _, _ := strings.Cut(strings.Fields(v)[0], ".")
				if !slices.Contains(f.Scope, root) {
					f.Scope = append(f.Scope, root)
				}
			}
		}
	}
	sub, err := g.fields(r.Fields)
	if err != nil {
		return f, err
	}
	items, err := g.fields(r.ItemFields)
	if err != nil {
		return f, err
	}
	if len(sub) > 0 {
		if f.Kind != kindObject && f.Kind != kindAnyMap {
			return f, fmt.Errorf("members on a %s", t)
		}
		f.Kind, f.Fields = kindObject, sub
	}
	if f.Kind == kindList {
		e := fieldRef{}
		switch {
		case elem == "object":
			e.Kind = kindObject
			if len(items) == 0 {
				e.Kind = kindAnyMap
			}
			e.Fields = items
		case elem == "map[string]any":
			e.Kind = kindAnyMap
		default:
			if e.Kind, e.Format, err = scalarKind(elem); err != nil {
				return f, err
			}
		}
		if e.Kind == kindString && f.CEL {
			e.CEL = true
		}
		// A whole-CEL list (bucket_key) holds expressions; its elements are not interpolated.
		if e.Format == formatCEL {
			f.CEL, e.CEL = false, false
		}
		// A list's enum and item bounds constrain its elements.
		e.Enum, f.Enum = f.Enum, nil
		f.Elem = &e
	}
	for _, n := range r.Notes {
		if strings.HasPrefix(n, "each map has exactly one key") && f.Elem != nil {
			f.Elem.OneKey = true
		}
	}
	if f.Format == formatCEL {
		f.CEL = false // the whole value is an expression
	}
	for _, k := range sortedKeys(r.Bounds) {
		v := fmt.Sprint(r.Bounds[k])
		n := 0
		fmt.Sscan(v, &n)
		switch k {
		case "min_entries":
			f.MinEntries = n
		case "max_entries":
			f.MaxEntries = n
		case "min":
			f.Min = v
		case "max":
			f.Max = v
		case "multiple_of":
			f.MultipleOf = v
		case "max_chars":
			f.MaxChars = n
		case "max_chars_exclusive":
			f.MaxChars = n - 1
		case "password_min_chars":
			f.PasswordMinChars, f.Elem.Format = n, formatCredential
		case "password_max_chars":
			f.PasswordMaxChars, f.Elem.Format = n, formatCredential
		case "item_min":
			f.Elem.Min = v
		case "item_max":
			f.Elem.Max = v
		case "key_max_chars", "value_max_chars":
			name := strings.TrimSuffix(k, "_max_chars")
			found := false
			for i := range f.Elem.Fields {
				if f.Elem.Fields[i].Name == name {
					f.Elem.Fields[i].MaxChars, found = n, true
				}
			}
			if !found {
				return f, fmt.Errorf("bound %s without an item field %s", k, name)
			}
		case "max_retries":
			// A behaviour of the retries, not a bound on the value.
		default:
			return f, fmt.Errorf("unknown bound %s", k)
		}
	}
	if f.PasswordMinChars > 0 || f.PasswordMaxChars > 0 {
		f.Elem.PasswordMinChars, f.Elem.PasswordMaxChars = f.PasswordMinChars, f.PasswordMaxChars
		f.PasswordMinChars, f.PasswordMaxChars = 0, 0
	}
	return f, nil
}

// scalarKind normalises a documented type ("string (CIDR)", "boolean", "map[string]string").
func scalarKind(t string) (kind, format string, err error) {
	base, note, _ := strings.Cut(t, " (")
	note = strings.TrimSuffix(note, ")")
	switch base {
	case "string", "strings":
		kind = kindString
	case "boolean", "bool":
		kind = kindBool
	case "integer", "int", "integers":
		kind = kindInt
	case "float":
		kind = kindFloat
	case "duration":
		kind = kindDuration
	case "map[string]string":
		kind = kindStringMap
	case "map[string]any", "object":
		kind = kindAnyMap
	default:
		return "", "", fmt.Errorf("unknown type %q", t)
	}
	switch note {
	case "":
	case "regex", "RE2 regex":
		format = formatRegex
	case "CIDR":
		format = formatCIDR
	case "IP Policy IDs":
		format = formatIPPolicy
	case "CEL expression", "CEL expressions":
		format = formatCEL
	case "PEM":
		format = formatPEM
	default:
		return "", "", fmt.Errorf("unknown type note %q", t)
	}
	return kind, format, nil
}

// nameVariants turns the documentation's two names for one thing into aliases.
func (g *generator) nameVariants(ref *reference) error {
	for _, v := range g.raw.NameVariants {
		names := sortedKeys(v.Names)
		switch {
		case v.What == "action type string":
			a := findAction(ref, v.Action)
			if a == nil {
				return fmt.Errorf("name_variants: action %s", v.Action)
			}
			for _, n := range names {
				if n != a.Type {
					a.Aliases = append(a.Aliases, n)
				}
			}
		case strings.HasSuffix(v.What, " field"):
			for _, typ := range strings.Split(v.Action, " vs ") {
				a := findAction(ref, typ)
				if a == nil {
					return fmt.Errorf("name_variants: action %s", typ)
				}
				f := findField(a.Config, names)
				if f == nil {
					return fmt.Errorf("name_variants: %s has none of %v", typ, names)
				}
				for _, n := range names {
					if n != f.Name {
						f.Aliases = append(f.Aliases, n)
					}
				}
			}
		case strings.HasPrefix(v.What, "result variable"):
			a := findAction(ref, v.Action)
			if a == nil {
				return fmt.Errorf("name_variants: action %s", v.Action)
			}
			for _, n := range names {
				if !strings.HasPrefix(n, "actions.") {
					continue
				}
				alts := strings.Split(n, " / ")
				for _, alt := range alts {
					if strings.HasPrefix(alt, ".") {
						// ".error.message" after "….error.code" replaces as many segments.
						drop := strings.Count(alt, ".")
						segs := strings.Split(alts[0], ".")
						alt = strings.Join(segs[:len(segs)-drop], ".") + alt
					}
					if !strings.HasSuffix(alt, "*") && !slices.Contains(a.Results, normalisePath(alt)) {
						a.Results = append(a.Results, normalisePath(alt))
					}
				}
			}
		default:
			return fmt.Errorf("name_variants: unknown kind %q", v.What)
		}
	}
	return nil
}

func findAction(ref *reference, typ string) *actionRef {
	for i := range ref.Actions {
		if ref.Actions[i].Type == typ {
			return &ref.Actions[i]
		}
	}
	return nil
}

func findField(fields []fieldRef, names []string) *fieldRef {
	for i := range fields {
		if slices.Contains(names, fields[i].Name) {
			return &fields[i]
		}
	}
	return nil
}

// discrepancies applies, for each documented disagreement, the decision to accept both forms.
func (g *generator) discrepancies(ref *reference) error {
	for _, d := range g.raw.Discrepancies {
		switch {
		case strings.HasPrefix(d.Fact, "http-request max_redirects"):
			// The table's range (0–100) contains the behaviour section's (0–5): nothing to add.
		case strings.HasPrefix(d.Fact, "compress-response phases"), strings.HasPrefix(d.Fact, "restrict-ips phases"):
			// Both lists are already joined in each action's phases.
		case strings.HasPrefix(d.Fact, "ActionHub omits ai-gateway"):
			// The "oidc" name is an alias (name_variants); ai-gateway and saml are kept.
		case strings.HasPrefix(d.Fact, "custom-response body: cel marker"):
			// The field carries the marker; interpolation is accepted.
		case strings.HasPrefix(d.Fact, "forward-internal result variables"):
			// They are the action's result variables.
		case strings.HasPrefix(d.Fact, "jwt-validation keys/sources typed as arrays"):
			jws := findField(findAction(ref, "jwt-validation").Config, []string{"jws"})
			keys := findField(jws.Fields, []string{"keys"})
			sources := findField(keys.Elem.Fields, []string{"sources"})
			for _, f := range []*fieldRef{sources, keys} { // sources first: keys' copy includes it
				f.Alt = append(f.Alt, fieldRef{Kind: f.Elem.Kind, Fields: f.Elem.Fields})
			}
		case strings.HasPrefix(d.Fact, "examples using undocumented config keys"):
			for _, k := range sortedKeys(d.Items) {
				if err := undocumentedExample(ref, k); err != nil {
					return err
				}
			}
		case strings.HasPrefix(d.Fact, "snippets/traffic-policy/actions/*/{index,config}.mdx are not imported"),
			strings.HasPrefix(d.Fact, "legacy url-rewrite named variables"),
			strings.HasPrefix(d.Fact, "forward-internal behavior text"),
			strings.HasPrefix(d.Fact, "rand.int docs"):
			// Prose only: nothing a document can differ in.
		case strings.HasPrefix(d.Fact, "ai-gateway examples put type/config directly in the phase list"):
			ref.BareActions = true
		default:
			return fmt.Errorf("discrepancy %q has no decision in the generator", d.Fact)
		}
	}
	return nil
}

// undocumentedExample accepts what one documentation example writes beside the tables.
func undocumentedExample(ref *reference, item string) error {
	extra := func(typ, phase string, f fieldRef) {
		a := findAction(ref, typ)
		f.Undocumented = true
		if phase != "" {
			a.ConfigByPhase[phase] = append(a.ConfigByPhase[phase], f)
			return
		}
		a.Config = append(a.Config, f)
	}
	switch item {
	case "basic-auth credentials as {username,password} objects":
		creds := findField(findAction(ref, "basic-auth").Config, []string{"credentials"})
		creds.Elem.Alt = append(creds.Elem.Alt, fieldRef{Kind: kindObject, Undocumented: true, Fields: []fieldRef{
			{Name: "username", Kind: kindString, Required: true, CEL: true},
			{Name: "password", Kind: kindString, Required: true, CEL: true},
		}})
	case "deny.config.body":
		extra("deny", "on_http_request", fieldRef{Name: "body", Kind: kindString, CEL: true})
	case "forward-internal.config.binding":
		extra("forward-internal", "", fieldRef{Name: "binding", Kind: kindString})
	case "redirect.config.location":
		extra("redirect", "", fieldRef{Name: "location", Kind: kindString, CEL: true})
	case "set-vars.config.vars as a plain map":
		vars := findField(findAction(ref, "set-vars").Config, []string{"vars"})
		vars.Alt = append(vars.Alt, fieldRef{Kind: kindAnyMap, CEL: true, Undocumented: true})
	case "set-vars.config keys outside vars (allowed_subdomains, subdomain)":
		for _, n := range []string{"allowed_subdomains", "subdomain"} {
			extra("set-vars", "", fieldRef{Name: n, Kind: kindAny, CEL: true})
		}
	case "type add-header (singular) under on_http_respons":
		// Two typos in one example: the action name is accepted as an alias; the phase name
		// "on_http_respons" is not (it is no phase on the platform either).
		a := findAction(ref, "add-headers")
		a.Aliases = append(a.Aliases, "add-header")
	default:
		return fmt.Errorf("undocumented example %q has no decision in the generator", item)
	}
	return nil
}

// variables lists every documented variable path with its type.
func (g *generator) variables(ref *reference) ([]variableRef, error) {
	seen := map[string]bool{}
	var out []variableRef
	add := func(path, typ string) {
		path = normalisePath(path)
		if !seen[path] {
			seen[path] = true
			out = append(out, variableRef{Path: path, Type: typ})
		}
	}
	for _, ns := range sortedKeys(g.raw.Variables.Namespaces) {
		for _, v := range g.raw.Variables.Namespaces[ns].Variables {
			switch {
			case strings.Contains(v.Name, "<"):
				// vars.<name> and actions.ngrok.<action>: open namespaces, results come below.
				add(v.Name[:strings.Index(v.Name, ".<")], "any")
			default:
				add(v.Name, v.Type)
			}
		}
	}
	for _, v := range g.raw.Variables.Undocumented {
		add(v.Name, "any")
	}
	for _, a := range ref.Actions {
		for _, r := range a.Results {
			add(r, "any")
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

var signature = regexp.MustCompile(`^(?:<([^>]*>?)>\.)?([A-Za-z_][A-Za-z0-9_.]*)\((.*)\) -> (.+)$`)

// typeWords are the value types signatures use; anything else names a macro's parameter.
var typeWords = map[string]string{
	"string": "string", "regex": "string", "bytes": "bytes", "int": "int", "double": "double", "bool": "bool",
	"list": "list", "list<string>": "list<string>", "list(T)": "list", "list(int)": "list", "map": "map",
	"list | map": "dyn", "map | list": "dyn", "cookie": "dyn", "URL": "dyn", "timestamp": "timestamp", "duration": "duration",
}

func (g *generator) functions(phases []string) ([]functionRef, error) {
	var out []functionRef
	for _, cat := range sortedKeys(g.raw.Functions.Categories) {
		var only []string
		if _, list, ok := strings.Cut(cat, " ("); ok && strings.Contains(list, "on_") {
			for _, p := range strings.Split(strings.TrimSuffix(strings.TrimSuffix(list, ")"), " only"), ", ") {
				if !slices.Contains(phases, p) {
					return nil, fmt.Errorf("function category %q: unknown phase %s", cat, p)
				}
				only = append(only, p)
			}
			if slices.Contains(only, "on_http_response") {
				only = append(only, streamPhase)
			}
		}
		for _, s := range g.raw.Functions.Categories[cat] {
			f, err := parseSignature(s)
			if err != nil {
				return nil, fmt.Errorf("function %q: %w", s, err)
			}
			f.Phases = only
			out = append(out, f)
		}
	}
	return out, nil
}

func parseSignature(s string) (functionRef, error) {
	sig, _, _ := strings.Cut(s, "  #")
	sig = strings.TrimSpace(sig)
	m := signature.FindStringSubmatch(sig)
	if m == nil {
		return functionRef{}, fmt.Errorf("not a signature")
	}
	f := functionRef{Signature: sig, Name: m[2]}
	if m[1] != "" {
		r, ok := typeWords[m[1]]
		if !ok {
			return f, fmt.Errorf("receiver type %q", m[1])
		}
		f.Receiver = r
	}
	res, ok := typeWords[strings.TrimSpace(m[4])]
	if !ok {
		return f, fmt.Errorf("result type %q", m[4])
	}
	f.Result = res
	if strings.TrimSpace(m[3]) == "" {
		return f, nil
	}
	for _, p := range strings.Split(m[3], ", ") {
		words := strings.Fields(p)
		t := words[len(words)-1] // "username string": the type is the last word
		if opt, ok := strings.CutSuffix(t, "?"); ok {
			t = opt
			f.Optional++
		} else if f.Optional > 0 {
			return f, fmt.Errorf("a required parameter after an optional one")
		}
		norm, ok := typeWords[t]
		if !ok {
			f.Macro = true
			norm = t
		}
		f.Params = append(f.Params, norm)
	}
	return f, nil
}
