// Package trafficpolicy validates traffic policy documents, shared by endpoints and edges: a
// JSON or YAML document of phases, each a list of rules with optional CEL expressions (compiled
// against the variables the platform documents for that phase) and actions of known types with
// config objects. Validation only: the document is stored exactly as given.
package trafficpolicy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/iprestrict"
)

// Phases of a traffic policy.
const (
	PhaseTCPConnect   = "on_tcp_connect"
	PhaseHTTPRequest  = "on_http_request"
	PhaseHTTPResponse = "on_http_response"
)

var phases = []string{PhaseHTTPRequest, PhaseHTTPResponse, PhaseTCPConnect}

// MaxBytes bounds a document (the request body cap applies too; this keeps the error pointed).
const MaxBytes = 256 << 10

// Validate checks doc, the value of field, and returns a 400 naming field whose message says
// where the problem is (for example "on_http_request[0].actions[1].type").
func Validate(field, doc string) error {
	v := &validator{field: field}
	v.document(doc)
	return v.err
}

type validator struct {
	field string
	err   error
}

func (v *validator) fail(path, format string, args ...any) {
	if v.err != nil {
		return
	}
	for _, a := range args {
		if e, ok := a.(error); ok && errors.As(e, new(envError)) {
			v.err = e // not the document's fault: an opaque 500
			return
		}
	}
	msg := fmt.Sprintf(format, args...)
	where := v.field
	if path != "" {
		where += ": " + path
	}
	e := api.Invalid(v.field, "%s: %s", where, msg)
	if path != "" {
		e.Details = map[string]string{"path": path}
	}
	v.err = e
}

func (v *validator) document(doc string) {
	if strings.TrimSpace(doc) == "" {
		v.fail("", "the traffic policy is empty; it needs at least one of the phases %s", strings.Join(phases, ", "))
		return
	}
	if len(doc) > MaxBytes {
		v.fail("", "the traffic policy is %d bytes; the limit is %d", len(doc), MaxBytes)
		return
	}
	var root any
	if t := strings.TrimSpace(doc); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		dec := json.NewDecoder(strings.NewReader(doc))
		dec.UseNumber()
		if err := dec.Decode(&root); err != nil {
			v.fail("", "not valid JSON: %s", jsonError(doc, err))
			return
		}
		if dec.More() {
			v.fail("", "not valid JSON: data after the document")
			return
		}
	} else {
		dec := yaml.NewDecoder(bytes.NewReader([]byte(doc)))
		if err := dec.Decode(&root); err != nil {
			v.fail("", "not a valid YAML or JSON document: %s", strings.TrimPrefix(err.Error(), "yaml: "))
			return
		}
		var extra any
		if err := dec.Decode(&extra); err == nil {
			v.fail("", "the YAML has more than one document")
			return
		}
	}
	top, ok := root.(map[string]any)
	if !ok {
		v.fail("", "the document must be a mapping of phases (%s), not %s", strings.Join(phases, ", "), kind(root))
		return
	}
	for _, k := range sortedKeys(top) {
		if !slices.Contains(phases, k) {
			hint := ""
			switch k {
			case "inbound":
				hint = " (the legacy name of on_http_request / on_tcp_connect)"
			case "outbound":
				hint = " (the legacy name of on_http_response)"
			}
			v.fail(k, "unknown phase %q%s; the phases are %s", k, hint, strings.Join(phases, ", "))
			return
		}
	}
	for _, p := range phases {
		if raw, ok := top[p]; ok {
			v.phase(p, raw)
		}
	}
}

func (v *validator) phase(phase string, raw any) {
	if raw == nil {
		return
	}
	rules, ok := raw.([]any)
	if !ok {
		v.fail(phase, "a phase must be a list of rules, not %s", kind(raw))
		return
	}
	for i, r := range rules {
		v.rule(phase, fmt.Sprintf("%s[%d]", phase, i), r)
	}
}

func (v *validator) rule(phase, path string, raw any) {
	m, ok := v.mapping(path, raw, "a rule", "name, expressions and actions", "name", "expressions", "actions")
	if !ok {
		return
	}
	name := ""
	if n, ok := m["name"]; ok && n != nil {
		s, ok := n.(string)
		if !ok {
			v.fail(path+".name", "name must be a string, not %s", kind(n))
			return
		}
		name = s
	}
	named := ""
	if name != "" {
		named = fmt.Sprintf(" (rule %q)", name)
	}
	if exprs, ok := m["expressions"]; ok && exprs != nil {
		list, ok := exprs.([]any)
		if !ok {
			v.fail(path+".expressions", "expressions must be a list of CEL expressions, not %s", kind(exprs))
			return
		}
		for i, e := range list {
			s, ok := e.(string)
			if !ok {
				v.fail(fmt.Sprintf("%s.expressions[%d]", path, i), "an expression must be a string, not %s", kind(e))
				return
			}
			if err := compile(phase, s, true); err != nil {
				v.fail(fmt.Sprintf("%s.expressions[%d]%s", path, i, named), "CEL expression %s does not compile: %v", api.Describe(s), err)
				return
			}
		}
	}
	actions, ok := m["actions"].([]any)
	if !ok || len(actions) == 0 {
		v.fail(path+".actions", "a rule needs a list of at least one action")
		return
	}
	for i, a := range actions {
		v.action(phase, fmt.Sprintf("%s.actions[%d]", path, i), a)
	}
}

// mapping checks that raw, at path, is a mapping of only the given fields; what names the
// element with its article ("a rule") and has lists its fields in words.
func (v *validator) mapping(path string, raw any, what, has string, fields ...string) (map[string]any, bool) {
	m, ok := raw.(map[string]any)
	if !ok {
		v.fail(path, "%s must be a mapping with %s, not %s", what, has, kind(raw))
		return nil, false
	}
	for _, k := range sortedKeys(m) {
		if !slices.Contains(fields, k) {
			v.fail(path+"."+k, "unknown field %q in %s; %s has %s", k, what, what, has)
			return nil, false
		}
	}
	return m, true
}

func (v *validator) action(phase, path string, raw any) {
	m, ok := v.mapping(path, raw, "an action", "type and config", "type", "config")
	if !ok {
		return
	}
	typ, ok := m["type"].(string)
	if !ok || typ == "" {
		v.fail(path+".type", "an action needs a type (%s)", strings.Join(actionTypes(), ", "))
		return
	}
	spec, known := actions[typ]
	if !known {
		v.fail(path+".type", "unknown action type %q; the action types are %s", typ, strings.Join(actionTypes(), ", "))
		return
	}
	if !slices.Contains(spec.phases, phase) {
		v.fail(path+".type", "action %q cannot run in %s; it runs in %s", typ, phase, strings.Join(spec.phases, ", "))
		return
	}
	cfg := map[string]any{}
	if c, ok := m["config"]; ok && c != nil {
		if cfg, ok = c.(map[string]any); !ok {
			v.fail(path+".config", "config must be a mapping, not %s", kind(c))
			return
		}
	}
	v.config(phase, path+".config", typ, spec, cfg)
}

func (v *validator) config(phase, path, typ string, spec actionSpec, cfg map[string]any) {
	if spec.fields != nil {
		for _, k := range sortedKeys(cfg) {
			if _, ok := spec.fields[k]; !ok {
				v.fail(path+"."+k, "unknown field %q in the config of %s; it has %s", k, typ, strings.Join(sortedKeys(spec.fields), ", "))
				return
			}
		}
		for _, k := range sortedKeys(spec.fields) {
			f := spec.fields[k]
			val, present := cfg[k]
			if !present || val == nil {
				if f.required {
					v.fail(path+"."+k, "%s requires %s", typ, k)
					return
				}
				continue
			}
			if msg := f.check(val); msg != "" {
				v.fail(path+"."+k, "%s", msg)
				return
			}
		}
		if spec.check != nil {
			if p, msg := spec.check(cfg); msg != "" {
				v.fail(path+p, "%s", msg)
				return
			}
		}
	}
	v.interpolations(phase, path, cfg)
}

// interpolations compiles every ${…} in the config's strings (CEL interpolation).
func (v *validator) interpolations(phase, path string, val any) {
	switch x := val.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			v.interpolations(phase, path+"."+k, x[k])
		}
	case []any:
		for i, e := range x {
			v.interpolations(phase, fmt.Sprintf("%s[%d]", path, i), e)
		}
	case string:
		exprs, err := splitInterpolations(x)
		if err != nil {
			v.fail(path, "%v", err)
			return
		}
		for _, e := range exprs {
			if err := compile(phase, e, false); err != nil {
				v.fail(path, "interpolation ${%s} does not compile: %v", e, err)
				return
			}
		}
	}
}

// splitInterpolations returns the expressions inside ${…} in s, matching braces outside quotes.
func splitInterpolations(s string) ([]string, error) {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) || s[i+1] != '{' {
			continue
		}
		depth, quote, j := 1, byte(0), i+2
		for ; j < len(s) && depth > 0; j++ {
			c := s[j]
			switch {
			case quote != 0:
				if c == '\\' {
					j++
				} else if c == quote {
					quote = 0
				}
			case c == '\'' || c == '"':
				quote = c
			case c == '{':
				depth++
			case c == '}':
				depth--
			}
		}
		if depth > 0 {
			return nil, errors.New("an interpolation ${ has no closing }")
		}
		out = append(out, s[i+2:j-1])
		i = j - 1
	}
	return out, nil
}

// field is the expected shape of one config field.
type field struct {
	kind     string // string, bool, int, strings, stringmap, object, cel
	required bool
	enum     []string
	min, max int64
}

func (f field) check(val any) string {
	switch f.kind {
	case "string":
		s, ok := val.(string)
		if !ok {
			return "must be a string, not " + kind(val)
		}
		if len(f.enum) > 0 && !slices.Contains(f.enum, s) {
			return fmt.Sprintf("must be one of %s, not %q", strings.Join(f.enum, ", "), s)
		}
	case "bool":
		if _, ok := val.(bool); !ok {
			return "must be true or false, not " + kind(val)
		}
	case "int":
		n, ok := integer(val)
		if !ok {
			return "must be a whole number, not " + kind(val)
		}
		if (f.min != 0 || f.max != 0) && (n < f.min || n > f.max) {
			return fmt.Sprintf("must be from %d to %d, not %d", f.min, f.max, n)
		}
	case "strings":
		list, ok := val.([]any)
		if !ok {
			return "must be a list of strings, not " + kind(val)
		}
		for i, e := range list {
			if _, ok := e.(string); !ok {
				return fmt.Sprintf("[%d] must be a string, not %s", i, kind(e))
			}
		}
		if f.max > 0 && int64(len(list)) > f.max {
			return fmt.Sprintf("has %d entries; the limit is %d", len(list), f.max)
		}
	case "stringmap":
		m, ok := val.(map[string]any)
		if !ok {
			return "must be a mapping of names to strings, not " + kind(val)
		}
		for _, k := range sortedKeys(m) {
			if _, ok := m[k].(string); !ok {
				return fmt.Sprintf("%s must be a string, not %s", k, kind(m[k]))
			}
		}
		if f.min > 0 && int64(len(m)) < f.min {
			return fmt.Sprintf("needs at least %d entries", f.min)
		}
		if f.max > 0 && int64(len(m)) > f.max {
			return fmt.Sprintf("has %d entries; the limit is %d", len(m), f.max)
		}
	case "object":
		if _, ok := val.(map[string]any); !ok {
			return "must be a mapping, not " + kind(val)
		}
	}
	return ""
}

// actionSpec is what the validator knows of an action type: the phases it runs in and, for the
// types whose configuration is checked field by field, its fields (nil: any mapping).
type actionSpec struct {
	phases []string
	fields map[string]field
	check  func(cfg map[string]any) (path, msg string)
}

var (
	req      = []string{PhaseHTTPRequest}
	reqRes   = []string{PhaseHTTPRequest, PhaseHTTPResponse}
	reqTCP   = []string{PhaseHTTPRequest, PhaseTCPConnect}
	all      = []string{PhaseHTTPRequest, PhaseHTTPResponse, PhaseTCPConnect}
	res      = []string{PhaseHTTPResponse}
	tcp      = []string{PhaseTCPConnect}
	anyShape = map[string]field(nil)
)

var actions = map[string]actionSpec{
	"add-headers":    {phases: reqRes, fields: map[string]field{"headers": {kind: "stringmap", required: true, min: 1, max: 10}}},
	"remove-headers": {phases: reqRes, fields: map[string]field{"headers": {kind: "strings", required: true, max: 10}}},
	"custom-response": {phases: reqRes, fields: map[string]field{
		"status_code": {kind: "int", min: 100, max: 999}, "content": {kind: "string"}, "headers": {kind: "stringmap", max: 10}}},
	"deny": {phases: reqTCP, fields: map[string]field{"status_code": {kind: "int", min: 100, max: 999}}},
	"rate-limit": {phases: req, fields: map[string]field{
		"name":       {kind: "string", required: true},
		"algorithm":  {kind: "string", required: true, enum: []string{"sliding_window"}},
		"capacity":   {kind: "int", required: true, min: 1, max: 2_000_000_000},
		"rate":       {kind: "string", required: true},
		"bucket_key": {kind: "strings", required: true, max: 10},
	}, check: checkRateLimit},
	"restrict-ips": {phases: all, fields: map[string]field{
		"enforce": {kind: "bool"}, "allow": {kind: "strings"}, "deny": {kind: "strings"}, "ip_policies": {kind: "strings"},
	}, check: checkRestrictIPs},
	"url-rewrite": {phases: req, fields: map[string]field{"from": {kind: "string"}, "to": {kind: "string", required: true}}},
	"redirect": {phases: req, fields: map[string]field{"from": {kind: "string"}, "to": {kind: "string", required: true},
		"status_code": {kind: "int", min: 300, max: 399}, "headers": {kind: "stringmap", max: 10}}},
	"log":                        {phases: all, fields: map[string]field{"metadata": {kind: "object", required: true}}},
	"basic-auth":                 {phases: req, fields: anyShape},
	"circuit-breaker":            {phases: req, fields: anyShape},
	"close-connection":           {phases: reqTCP, fields: anyShape},
	"compress-response":          {phases: reqRes, fields: anyShape},
	"forward-internal":           {phases: reqTCP, fields: anyShape},
	"http-request":               {phases: reqRes, fields: anyShape},
	"jwt-validation":             {phases: req, fields: anyShape},
	"oauth":                      {phases: req, fields: anyShape},
	"oidc":                       {phases: req, fields: anyShape},
	"owasp-crs-request":          {phases: req, fields: anyShape},
	"owasp-crs-response":         {phases: res, fields: anyShape},
	"request-body-find-replace":  {phases: req, fields: anyShape},
	"response-body-find-replace": {phases: res, fields: anyShape},
	"set-vars":                   {phases: all, fields: anyShape},
	"terminate-tls":              {phases: tcp, fields: anyShape},
	"verify-webhook":             {phases: req, fields: anyShape},
	"ai-gateway":                 {phases: req, fields: anyShape},
	"saml":                       {phases: req, fields: anyShape},
}

func actionTypes() []string { return sortedKeys(actions) }

func checkRateLimit(cfg map[string]any) (string, string) {
	rate := cfg["rate"].(string)
	d, err := time.ParseDuration(rate)
	if err != nil {
		return ".rate", fmt.Sprintf("rate %q is not a duration such as 60s or 10m", rate)
	}
	if d < time.Minute || d > 24*time.Hour || d%(10*time.Second) != 0 {
		return ".rate", fmt.Sprintf("rate %q must be from 60s to 24h and a multiple of 10s", rate)
	}
	for i, k := range cfg["bucket_key"].([]any) {
		if err := compile(PhaseHTTPRequest, k.(string), false); err != nil {
			return fmt.Sprintf(".bucket_key[%d]", i), fmt.Sprintf("bucket key %s does not compile: %v", api.Describe(k.(string)), err)
		}
	}
	return "", ""
}

func checkRestrictIPs(cfg map[string]any) (string, string) {
	n := 0
	for _, k := range []string{"allow", "deny"} {
		list, _ := cfg[k].([]any)
		n += len(list)
		for i, e := range list {
			s := e.(string)
			if strings.Contains(s, "${") {
				continue // interpolated at run time; compiled with the other interpolations
			}
			if _, err := iprestrict.ParseCIDR(k, s); err != nil {
				msg := err.Error()
				if e, ok := api.AsError(err); ok {
					msg = e.Msg
				}
				return fmt.Sprintf(".%s[%d]", k, i), msg
			}
		}
	}
	list, _ := cfg["ip_policies"].([]any)
	n += len(list)
	for i, e := range list {
		if !ids.Is(e.(string), ids.IPPolicy) {
			return fmt.Sprintf(".ip_policies[%d]", i), fmt.Sprintf("%s is not an IP policy id (ipp_…)", api.Describe(e.(string)))
		}
	}
	if n == 0 {
		return "", "restrict-ips needs at least one of allow, deny or ip_policies"
	}
	return "", ""
}

func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case uint64:
		if n <= math.MaxInt64 {
			return int64(n), true
		}
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n), true
		}
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int64, uint64, float64, json.Number:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	case map[any]any:
		return "a mapping with keys that are not strings"
	default:
		return fmt.Sprintf("%T", v)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func jsonError(doc string, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := 1 + strings.Count(doc[:min(int(se.Offset), len(doc))], "\n")
		return fmt.Sprintf("%s (line %d)", se.Error(), line)
	}
	return err.Error()
}
