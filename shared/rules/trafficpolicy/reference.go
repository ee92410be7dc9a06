package trafficpolicy

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"tunnelapi/shared/platform/derrors"
)

// referenceJSON is the documented surface of traffic policies (phases, actions and their config
// fields, variables, functions, legacy names), normalised from the platform's documentation by
// the generator in reference_gen_test.go from the project's copy of the documentation's facts
// (testdata/traffic-policy.yaml); TestReferenceIsCurrent proves it equals what the generator
// makes.
//
// Where the documentation names one thing twice both names are accepted (never both at once):
// custom-response content for body, oidc for openid-connect, webhook-validation for
// verify-webhook, idle_session_timeout and idle_session_duration in oauth and openid-connect,
// error_threshold_percentage and rolling_window in circuit-breaker. Where its examples disagree
// with its tables, both forms are accepted: jwt-validation keys and sources as one object or a
// list, basic-auth credentials as {username, password}, set-vars vars as a plain mapping and the
// example keys beside it, deny body, forward-internal binding, redirect location, an action
// written directly in a phase list, and add-header for add-headers. A field the documentation
// marks required but gives a default is optional. ai-gateway and saml have no documented config:
// their listed fields are checked and other fields accepted.
//
//go:embed reference.json
var referenceJSON []byte

// reference is the model referenceJSON decodes into.
type reference struct {
	// Phases in the order the platform runs them.
	Phases []phaseRef `json:"phases"`
	// Actions by documented type name.
	Actions []actionRef `json:"actions"`
	// Variables: every documented variable path and the phases it is available in.
	Variables []variableRef `json:"variables"`
	// Functions: every documented function signature, macros included.
	Functions []functionRef `json:"functions"`
	// BareActions: a phase list may hold actions directly (type and config, no rule around them),
	// as some documentation examples write it.
	BareActions bool `json:"bare_actions"`
}

// phaseRef is one phase of a policy.
type phaseRef struct {
	Name string `json:"name"`
	// Roots are the variable namespaces (conn, req, …) available in the phase.
	Roots []string `json:"roots"`
}

// actionRef is one action type.
type actionRef struct {
	Type    string   `json:"type"`
	Aliases []string `json:"aliases,omitempty"`
	Phases  []string `json:"phases"`
	// Config lists the config fields (the same in every phase unless ConfigByPhase names the phase).
	Config        []fieldRef            `json:"config,omitempty"`
	ConfigByPhase map[string][]fieldRef `json:"config_by_phase,omitempty"`
	// OpenConfig: the documentation lists no complete config, so unknown fields are accepted.
	OpenConfig bool `json:"open_config,omitempty"`
	// Results are the action's result variables (actions.ngrok.…), "[]" standing for an index.
	Results []string `json:"results,omitempty"`
}

// Kinds of values a field holds.
const (
	kindString    = "string"
	kindBool      = "bool"
	kindInt       = "int"
	kindFloat     = "float"
	kindDuration  = "duration"
	kindStringMap = "stringmap" // mapping of strings to strings
	kindAnyMap    = "anymap"    // mapping of strings to anything
	kindObject    = "object"    // mapping with the members Fields lists
	kindList      = "list"      // list of Elem
	kindAny       = "any"
)

// Formats refine a string kind.
const (
	formatRegex      = "regex"      // an RE2 regular expression
	formatCIDR       = "cidr"       // an IP address range
	formatIPPolicy   = "ip_policy"  // an IP policy id
	formatCEL        = "cel"        // a whole CEL expression (not an interpolation)
	formatCredential = "credential" // username:password
	formatPEM        = "pem"
)

// fieldRef is one config field (or a list element or object member).
type fieldRef struct {
	Name    string   `json:"name,omitempty"`
	Aliases []string `json:"aliases,omitempty"`
	Kind    string   `json:"kind"`
	Format  string   `json:"format,omitempty"`
	// Required: the documentation marks it required and gives no default.
	Required bool `json:"required,omitempty"`
	// Default is the documented default (informational; the tests prove it validates).
	Default any      `json:"default,omitempty"`
	Enum    []string `json:"enum,omitempty"`
	// Min and Max bound numbers and durations (written as documented: "1s", "0.5", "100").
	Min        string `json:"min,omitempty"`
	Max        string `json:"max,omitempty"`
	MultipleOf string `json:"multiple_of,omitempty"`
	MinEntries int    `json:"min_entries,omitempty"`
	MaxEntries int    `json:"max_entries,omitempty"`
	MaxChars   int    `json:"max_chars,omitempty"`
	// PasswordMinChars and PasswordMaxChars bound the password of a credential.
	PasswordMinChars int `json:"password_min_chars,omitempty"`
	PasswordMaxChars int `json:"password_max_chars,omitempty"`
	// CEL: strings in the value may hold ${…} interpolations, compiled in the rule's phase.
	CEL bool `json:"cel,omitempty"`
	// Scope adds variables a whole-CEL field sees beside its phase's (retry_condition: attempts).
	Scope  []string   `json:"scope,omitempty"`
	Elem   *fieldRef  `json:"elem,omitempty"`
	Fields []fieldRef `json:"fields,omitempty"`
	// OneKey: each mapping in the list has exactly one key (set-vars).
	OneKey bool `json:"one_key,omitempty"`
	// Alt are other shapes the documentation's examples use for the same value.
	Alt []fieldRef `json:"alt,omitempty"`
	// Undocumented: only the documentation's examples use it (accepted, not in the tables).
	Undocumented bool `json:"undocumented,omitempty"`
	// open: an object that also accepts members it does not list (an action's open config).
	open bool
}

// variableRef is one documented variable: its path ("req.cookies.[].[].name") and type.
type variableRef struct {
	Path string `json:"path"`
	Type string `json:"type"`
}

// functionRef is one documented function signature.
type functionRef struct {
	Signature string `json:"signature"`
	Name      string `json:"name"`
	// Receiver is the type of the value the function is called on ("" for a global function).
	Receiver string   `json:"receiver,omitempty"`
	Params   []string `json:"params,omitempty"`
	// Optional counts the trailing parameters that may be left out.
	Optional int    `json:"optional,omitempty"`
	Result   string `json:"result"`
	// Macro: a CEL macro (its parameters are names and expressions, not values).
	Macro bool `json:"macro,omitempty"`
	// Phases limits the function to these phases (empty: every phase).
	Phases []string `json:"phases,omitempty"`
}

// model is reference with lookups, built once per process on first use.
type model struct {
	reference
	phases  map[string]*phaseRef
	actions map[string]*actionRef // by type and alias
	names   []string              // phase names in order
	types   []string              // documented action types
}

var (
	modelOnce sync.Once
	loaded    *model
	modelErr  error
)

// theModel decodes the embedded reference (lazily: not in package init, for cold starts).
func theModel() (_ *model, err error) {
	defer derrors.Wrap(&err, "trafficpolicy.theModel")
	modelOnce.Do(func() {
		m := &model{phases: map[string]*phaseRef{}, actions: map[string]*actionRef{}}
		if err := json.Unmarshal(referenceJSON, &m.reference); err != nil {
			modelErr = fmt.Errorf("decode the reference: %w", err)
			return
		}
		for i := range m.Phases {
			p := &m.Phases[i]
			m.phases[p.Name] = p
			m.names = append(m.names, p.Name)
		}
		for i := range m.Actions {
			a := &m.Actions[i]
			m.types = append(m.types, a.Type)
			for _, n := range append([]string{a.Type}, a.Aliases...) {
				m.actions[n] = a
			}
		}
		loaded = m
	})
	return loaded, modelErr
}

// config returns the action's config fields in phase.
func (a *actionRef) config(phase string) []fieldRef {
	if f, ok := a.ConfigByPhase[phase]; ok {
		return f
	}
	return a.Config
}

// fieldNames lists fields' names for messages.
func fieldNames(fields []fieldRef) string {
	out := make([]string, 0, len(fields))
	for _, f := range fields {
		out = append(out, f.Name)
	}
	if len(out) == 0 {
		return "no fields"
	}
	return strings.Join(out, ", ")
}
