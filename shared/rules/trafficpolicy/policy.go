package trafficpolicy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"

	"tunnelapi/shared/platform/api"
)

// Validate checks doc, the value of field, within ctx (its deadline, and Budget, bound the
// work). A bad document is a 400 naming field whose message says where the problem is (for
// example "on_http_request[0].actions[1].type") and, for a limit, which limit.
//   - A document is YAML or JSON: a mapping of phases (on_tcp_connect, on_http_request,
//     on_http_response, on_event_stream_message), each a list of rules (name, expressions,
//     actions); an action is a type and a config.
//   - Each action type runs only in its documented phases (the action page's and the action
//     hub's lists together), and its config holds only documented fields, each of its
//     documented type, enum, bounds (numbers, durations, entries, characters) and format (CIDR,
//     IP policy id, RE2 regular expression, username:password, whole CEL expression).
//   - CEL: rule expressions must be conditions; fields the documentation marks as interpolated
//     may hold ${…}, each compiled in the rule's phase. An expression sees its phase's documented
//     variables (conn, endpoint, time, vars and actions.ngrok results everywhere; req from
//     on_http_request; res from on_http_response) and functions (the request-header and cookie
//     macros from on_http_request, the response ones in on_http_response); a member the
//     documentation does not list under a documented object is refused. The fourth phase,
//     on_event_stream_message, whose variables are not documented, gets on_http_response's.
//     Each distinct expression is compiled once per document.
//   - secrets.get(vault_name, secret_name) is checked against its one documented signature
//     (two strings in, a string out) and nothing else: a vault or secret that does not exist
//     is accepted, as the policy reads it at request time, the reference documents no check
//     when a policy is stored, and infrastructure as code creates endpoints and secrets in any
//     order.
func Validate(ctx context.Context, field, doc string) error {
	m, err := theModel()
	if err != nil {
		return err
	}
	// The budget is CPU time of this validation: the goroutine keeps its thread meanwhile.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	v := &validator{ctx: ctx, field: field, m: m, check: checkExpression, compiled: map[compileKey]error{}, start: threadCPU()}
	v.document(doc)
	return v.err
}

type validator struct {
	ctx   context.Context
	field string
	m     *model
	err   error
	// check compiles one expression (checkExpression; tests put the former validator's here).
	check func(m *model, phase string, scope []string, expr string, boolean bool) error
	// compiled caches each distinct expression's outcome for this document.
	compiled  map[compileKey]error
	exprBytes int
	start     time.Duration // the thread's CPU time when validation began
}

// spent fails (naming the budget) when the request is gone or the validation has used its CPU
// budget; it is called before each step that may take long.
func (v *validator) spent(path string) bool {
	if v.err != nil {
		return true
	}
	if err := v.ctx.Err(); err != nil {
		v.failLimit(path, "Budget", "validation stopped here: %s", cause(err))
		return true
	}
	if used := threadCPU() - v.start; used > Budget {
		v.failLimit(path, "Budget", "validation stopped here: it used more than %s of CPU (Budget); the document is too complex", Budget)
		return true
	}
	return false
}

type compileKey struct {
	phase, scope, expr string
	boolean            bool
}

func (v *validator) fail(path, format string, args ...any) {
	v.failWith(path, "", format, args...)
}

// failLimit fails naming limit (also put in the error's details).
func (v *validator) failLimit(path, limit, format string, args ...any) {
	v.failWith(path, limit, format, args...)
}

func (v *validator) failWith(path, limit, format string, args ...any) {
	if v.err != nil {
		return
	}
	msg := fmt.Sprintf(format, args...)
	where := v.field
	if path != "" {
		where += ": " + path
	}
	e := api.Invalid(v.field, "%s: %s", where, msg)
	if path != "" || limit != "" {
		e.Details = map[string]string{}
	}
	if path != "" {
		e.Details["path"] = path
	}
	if limit != "" {
		e.Details["limit"] = limit
	}
	v.err = e
}

func (v *validator) document(doc string) {
	phases := strings.Join(v.m.names, ", ")
	if strings.TrimSpace(doc) == "" {
		v.fail("", "the traffic policy is empty; it needs at least one of the phases %s", phases)
		return
	}
	if len(doc) > MaxBytes {
		v.failLimit("", "MaxBytes", "the traffic policy is %d bytes; the limit is %d (MaxBytes)", len(doc), MaxBytes)
		return
	}
	root, path, limit, msg := parse(doc)
	if msg != "" {
		v.failWith(path, limit, "%s", msg)
		return
	}
	top, ok := root.(map[string]any)
	if !ok {
		v.fail("", "the document must be a mapping of phases (%s), not %s", phases, kind(root))
		return
	}
	for _, k := range sortedKeys(top) {
		if _, ok := v.m.phases[k]; !ok {
			hint := ""
			switch k {
			case "inbound":
				hint = " (the legacy name of on_http_request / on_tcp_connect)"
			case "outbound":
				hint = " (the legacy name of on_http_response)"
			}
			v.fail(k, "unknown phase %q%s; the phases are %s", k, hint, phases)
			return
		}
	}
	for _, p := range v.m.names {
		if raw, ok := top[p]; ok && v.err == nil {
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
		path := fmt.Sprintf("%s[%d]", phase, i)
		if m, ok := r.(map[string]any); ok && v.m.BareActions && m["type"] != nil && m["actions"] == nil {
			v.action(phase, path, m) // an action written without its rule, as some examples do
			continue
		}
		v.rule(phase, path, r)
	}
}

func (v *validator) rule(phase, path string, raw any) {
	m, ok := v.mapping(path, raw, "a rule", "name, expressions and actions", "name", "expressions", "actions")
	if !ok {
		return
	}
	named := ""
	if n, ok := m["name"]; ok && n != nil {
		s, ok := n.(string)
		if !ok {
			v.fail(path+".name", "name must be a string, not %s", kind(n))
			return
		}
		if s != "" {
			named = fmt.Sprintf(" (rule %s)", api.Describe(s))
		}
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
			v.expression(phase, nil, fmt.Sprintf("%s.expressions[%d]%s", path, i, named), "CEL expression", s, true)
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
		if !contains(fields, k) {
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
		v.fail(path+".type", "an action needs a type (%s)", strings.Join(v.m.types, ", "))
		return
	}
	spec, known := v.m.actions[typ]
	if !known {
		v.fail(path+".type", "unknown action type %s; the action types are %s", api.Describe(typ), strings.Join(v.m.types, ", "))
		return
	}
	if !contains(spec.Phases, phase) {
		v.fail(path+".type", "action %q cannot run in %s; it runs in %s", typ, phase, strings.Join(spec.Phases, ", "))
		return
	}
	config := fieldRef{Kind: kindObject, Fields: spec.config(phase), open: spec.OpenConfig}
	c, present := m["config"]
	if !present || c == nil {
		c = map[string]any{}
	}
	v.value(phase, path+".config", spec.Type, &config, c, false)
}

// value checks val against f; typ names the action for messages, inList says val is an element.
func (v *validator) value(phase, path, typ string, f *fieldRef, val any, inList bool) {
	if v.err != nil {
		return
	}
	f = form(f, val)
	switch f.Kind {
	case kindString:
		s, ok := val.(string)
		if !ok {
			v.fail(path, "must be a string, not %s", kind(val))
			return
		}
		v.str(phase, path, f, s, inList)
	case kindBool:
		if _, ok := val.(bool); !ok {
			v.fail(path, "must be true or false, not %s", kind(val))
		}
	case kindInt:
		n, ok := integer(val)
		if !ok {
			v.fail(path, "must be a whole number, not %s", describeValue(val))
			return
		}
		if len(f.Enum) > 0 && !contains(f.Enum, fmt.Sprint(n)) {
			v.fail(path, "must be one of %s, not %d", strings.Join(f.Enum, ", "), n)
			return
		}
		v.bounds(path, f, float64(n), fmt.Sprint(n), parseNumber)
	case kindFloat:
		n, ok := number(val)
		if !ok {
			v.fail(path, "must be a number, not %s", describeValue(val))
			return
		}
		v.bounds(path, f, n, fmt.Sprint(n), parseNumber)
	case kindDuration:
		s, ok := val.(string)
		if !ok {
			v.fail(path, "must be a duration such as 10s or 2m, not %s", describeValue(val))
			return
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			v.fail(path, "%s is not a duration such as 10s or 2m", api.Describe(s))
			return
		}
		v.bounds(path, f, float64(d), s, parseDuration)
		if f.MultipleOf != "" {
			if step, err := time.ParseDuration(f.MultipleOf); err == nil && step > 0 && d%step != 0 {
				v.fail(path, "must be a multiple of %s, not %s", f.MultipleOf, s)
			}
		}
	case kindList:
		list, ok := val.([]any)
		if !ok {
			v.fail(path, "must be a list, not %s", kind(val))
			return
		}
		if !v.entries(path, f, len(list)) {
			return
		}
		for i, e := range list {
			v.value(phase, fmt.Sprintf("%s[%d]", path, i), typ, f.Elem, e, true)
		}
	case kindStringMap, kindAnyMap, kindObject:
		m, ok := val.(map[string]any)
		if !ok {
			v.fail(path, "must be a mapping, not %s", kind(val))
			return
		}
		if !v.entries(path, f, len(m)) {
			return
		}
		if f.OneKey && len(m) != 1 {
			v.fail(path, "must have exactly one key (the variable's name), not %d", len(m))
			return
		}
		switch f.Kind {
		case kindObject:
			v.object(phase, path, typ, f, m)
		case kindStringMap:
			for _, k := range sortedKeys(m) {
				s, ok := m[k].(string)
				if !ok {
					v.fail(path+"."+k, "must be a string, not %s", kind(m[k]))
					return
				}
				v.interpolations(phase, path+"."+k, f.CEL, k, s)
			}
		default:
			v.any(phase, path, f.CEL, m)
		}
	case kindAny:
		v.any(phase, path, f.CEL, val)
	}
}

// form picks, among f and its alternative shapes, the one whose kind suits val's.
func form(f *fieldRef, val any) *fieldRef {
	if len(f.Alt) == 0 || suits(f.Kind, val) {
		return f
	}
	for i := range f.Alt {
		if suits(f.Alt[i].Kind, val) {
			return &f.Alt[i]
		}
	}
	return f
}

func suits(k string, val any) bool {
	switch val.(type) {
	case []any:
		return k == kindList
	case map[string]any:
		return k == kindObject || k == kindAnyMap || k == kindStringMap
	case string:
		return k == kindString || k == kindDuration
	}
	return false
}

// object checks a mapping's members against the documented fields (aliases included).
func (v *validator) object(phase, path, typ string, f *fieldRef, m map[string]any) {
	byName := map[string]*fieldRef{}
	for i := range f.Fields {
		fd := &f.Fields[i]
		for _, n := range append([]string{fd.Name}, fd.Aliases...) {
			byName[n] = fd
		}
	}
	for _, k := range sortedKeys(m) {
		if byName[k] == nil && !f.open {
			what := "the config of " + typ
			if path != "" && !strings.HasSuffix(path, ".config") {
				what = path[strings.LastIndexAny(path, ".]")+1:]
			}
			v.fail(path+"."+k, "unknown field %s in %s; it has %s", api.Describe(k), what, fieldNames(f.Fields))
			return
		}
	}
	for i := range f.Fields {
		fd := &f.Fields[i]
		name, present := fd.Name, false
		for _, n := range append([]string{fd.Name}, fd.Aliases...) {
			if val, ok := m[n]; ok && val != nil {
				if present {
					v.fail(path+"."+n, "%s and %s are two names of one field; give one", name, n)
					return
				}
				name, present = n, true
			}
		}
		if !present {
			if fd.Required {
				v.fail(path+"."+fd.Name, "%s requires %s", typ, fd.Name)
				return
			}
			continue
		}
		v.value(phase, path+"."+name, typ, fd, m[name], false)
	}
}

// any checks the strings anywhere inside val for interpolations when cel is set.
func (v *validator) any(phase, path string, cel bool, val any) {
	if !cel || v.err != nil {
		return
	}
	switch x := val.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			v.any(phase, path+"."+k, cel, x[k])
		}
	case []any:
		for i, e := range x {
			v.any(phase, fmt.Sprintf("%s[%d]", path, i), cel, e)
		}
	case string:
		v.interpolations(phase, path, cel, "", x)
	}
}

func (v *validator) entries(path string, f *fieldRef, n int) bool {
	if f.MinEntries > 0 && n < f.MinEntries {
		v.fail(path, "needs at least %d entries, not %d", f.MinEntries, n)
		return false
	}
	if f.MaxEntries > 0 && n > f.MaxEntries {
		v.fail(path, "has %d entries; the limit is %d", n, f.MaxEntries)
		return false
	}
	return true
}

func (v *validator) bounds(path string, f *fieldRef, n float64, shown string, parse func(string) (float64, bool)) {
	if lo, ok := parse(f.Min); ok && n < lo {
		v.fail(path, "must be at least %s, not %s", f.Min, shown)
	} else if hi, ok := parse(f.Max); ok && n > hi {
		v.fail(path, "must be at most %s, not %s", f.Max, shown)
	}
}

func parseNumber(s string) (float64, bool) {
	var n float64
	_, err := fmt.Sscan(s, &n)
	return n, s != "" && err == nil
}

func parseDuration(s string) (float64, bool) {
	d, err := time.ParseDuration(s)
	return float64(d), s != "" && err == nil
}

// str checks a string field: enum, length, format and interpolations.
func (v *validator) str(phase, path string, f *fieldRef, s string, inList bool) {
	if len(f.Enum) > 0 && !contains(f.Enum, s) {
		v.fail(path, "must be one of %s, not %s", strings.Join(f.Enum, ", "), api.Describe(s))
		return
	}
	if f.MaxChars > 0 && len([]rune(s)) > f.MaxChars {
		v.fail(path, "is %d characters; the limit is %d", len([]rune(s)), f.MaxChars)
		return
	}
	if f.Format == formatCEL {
		// A whole expression: a condition unless it is one of a list of keys (bucket_key).
		v.expression(phase, f.Scope, path, "CEL expression", s, !inList)
		return
	}
	if !v.interpolations(phase, path, f.CEL, "", s) {
		return
	}
	interpolated := f.CEL && strings.Contains(s, "${")
	switch f.Format {
	case formatRegex:
		v.regex(path, s, interpolated)
	case formatCIDR:
		if !interpolated {
			v.cidr(path, s)
		}
	case formatIPPolicy:
		v.ipPolicy(path, s)
	case formatCredential:
		if !interpolated {
			v.credential(path, f, s)
		}
	}
}

// interpolations compiles each ${…} in key and s when cel is set; false when it failed.
func (v *validator) interpolations(phase, path string, cel bool, key, s string) bool {
	if !cel {
		return true
	}
	for _, text := range []string{key, s} {
		if !strings.Contains(text, "${") {
			continue
		}
		exprs, err := splitInterpolations(text)
		if err != nil {
			v.fail(path, "%v", err)
			return false
		}
		for _, e := range exprs {
			if !v.expression(phase, nil, path, "interpolation", e, false) {
				return false
			}
		}
	}
	return true
}

// expression compiles one CEL expression once per document, within the document's limits.
func (v *validator) expression(phase string, scope []string, path, what, expr string, boolean bool) bool {
	if v.err != nil {
		return false
	}
	shown := api.Describe(expr)
	if what == "interpolation" {
		shown = "${" + strings.TrimSuffix(strings.TrimPrefix(shown, `"`), `"`) + "}"
		if len(expr) > 64 {
			shown = "${" + api.Describe(expr) + "}"
		}
	}
	if len(expr) > MaxExpressionBytes {
		v.failLimit(path, "MaxExpressionBytes", "the %s is %d bytes; the limit is %d (MaxExpressionBytes)", what, len(expr), MaxExpressionBytes)
		return false
	}
	key := compileKey{phase: phase, scope: strings.Join(scope, ","), expr: expr, boolean: boolean}
	err, done := v.compiled[key]
	if !done {
		if len(v.compiled) >= MaxExpressions {
			v.failLimit(path, "MaxExpressions", "the document has more than %d distinct CEL expressions (MaxExpressions)", MaxExpressions)
			return false
		}
		if v.exprBytes += len(expr); v.exprBytes > MaxExpressionBytesTotal {
			v.failLimit(path, "MaxExpressionBytesTotal", "the document's distinct CEL expressions exceed %d bytes (MaxExpressionBytesTotal)", MaxExpressionBytesTotal)
			return false
		}
		if v.spent(path) {
			return false
		}
		err = v.check(v.m, phase, scope, expr, boolean)
		v.compiled[key] = err
	}
	if err != nil {
		var le limitError
		if errors.As(err, &le) {
			v.failLimit(path, "MaxExpressionCost", "the %s %s is refused: %v", what, shown, err)
			return false
		}
		v.fail(path, "the %s %s does not compile: %v", what, shown, err)
		return false
	}
	return true
}

func cause(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "the request's deadline passed"
	}
	return "the request was cancelled"
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

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, !math.IsInf(n, 0) && !math.IsNaN(n)
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
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

// describeValue is kind, with the value when it is a short scalar.
func describeValue(v any) string {
	switch x := v.(type) {
	case string:
		return "the string " + api.Describe(x)
	case json.Number, float64, int, int64, uint64:
		return fmt.Sprintf("%v", x)
	}
	return kind(v)
}

// sortedKeys is m's keys in order, so that checks and messages do not depend on map order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
