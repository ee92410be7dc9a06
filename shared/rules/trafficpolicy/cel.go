package trafficpolicy

import (
	"fmt"
	"math/bits"
	"sort"
	"strings"
	"sync"

	"tunnelapi/shared/rules/celcheck"
)

// phaseEnv is a phase's CEL environment with its variable tree, built on first use.
type phaseEnv struct {
	once sync.Once
	env  *celcheck.Env
	tree *varNode
}

var (
	baseOnce sync.Once
	base     *celcheck.Env
	envs     sync.Map // phase, or phase+"|"+scope, → *phaseEnv
)

// limits are the parser's: MaxExpressionDepth, MaxExpressionBytes (in code points, as cel-go
// counts them), MaxExpressionNodes and MaxComprehensionNesting.
var limits = celcheck.Limits{Depth: MaxExpressionDepth, CodePoints: MaxExpressionBytes, Nodes: MaxExpressionNodes,
	Comprehensions: MaxComprehensionNesting}

// baseEnv is what every phase shares: the standard library, the string, list and encoder
// extensions (which provide many of the documented functions), and every documented function
// without a phase of its own that they lack.
func baseEnv(m *model) *celcheck.Env {
	baseOnce.Do(func() {
		std := celcheck.Standard()
		base = std.Extend(nil, declarations(std, m.Functions, ""))
	})
	return base
}

// envFor returns the environment of phase; scope adds variables of one field (retry_condition).
func envFor(m *model, phase string, scope []string) (*celcheck.Env, *varNode) {
	key := phase
	if len(scope) > 0 {
		key += "|" + strings.Join(scope, ",")
	}
	v, _ := envs.LoadOrStore(key, &phaseEnv{})
	pe := v.(*phaseEnv)
	pe.once.Do(func() {
		b := baseEnv(m)
		p := m.phases[phase]
		vars := map[string]*celcheck.Type{}
		for _, r := range append(append([]string{}, p.Roots...), scope...) {
			vars[r] = celcheck.Dyn
		}
		pe.env = b.Extend(vars, declarations(b, m.Functions, phase))
		pe.tree = variableTree(m, p.Roots, scope)
	})
	return pe.env, pe.tree
}

// checkExpression compiles expr in phase (scope adds variables of one field): nil, a
// limitError, or why it does not compile.
func checkExpression(m *model, phase string, scope []string, expr string, boolean bool) error {
	env, tree := envFor(m, phase, scope)
	return compile(env, tree, expr, boolean)
}

// declarations declares the documented functions of phase ("" for those of every phase) that
// e does not provide, for type checking only: nothing is evaluated here.
func declarations(e *celcheck.Env, fns []functionRef, phase string) []celcheck.Overload {
	var out []celcheck.Overload
	for _, f := range fns {
		if f.Macro || (phase == "" && len(f.Phases) > 0) || (phase != "" && !contains(f.Phases, phase)) {
			continue
		}
		for n := len(f.Params) - f.Optional; n <= len(f.Params); n++ {
			if e.Provides(f.Name, f.Receiver != "", n) {
				continue
			}
			args := make([]*celcheck.Type, 0, n+1)
			if f.Receiver != "" {
				args = append(args, celType(f.Receiver))
			}
			for _, p := range f.Params[:n] {
				args = append(args, celType(p))
			}
			id := strings.NewReplacer(".", "_", "<", "_", ">", "_").Replace(fmt.Sprintf("tp_%s_%s_%d", f.Receiver, f.Name, n))
			out = append(out, celcheck.Overload{Name: f.Name, ID: id, Member: f.Receiver != "", Args: args, Result: celType(f.Result)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func celType(t string) *celcheck.Type {
	switch t {
	case "string":
		return celcheck.String
	case "bytes":
		return celcheck.Bytes
	case "int":
		return celcheck.Int
	case "double":
		return celcheck.Double
	case "bool":
		return celcheck.Bool
	case "list":
		return celcheck.ListOf(celcheck.Dyn)
	case "list<string>":
		return celcheck.ListOf(celcheck.String)
	case "map":
		return celcheck.MapOf(celcheck.Dyn, celcheck.Dyn)
	case "timestamp":
		return celcheck.Timestamp
	case "duration":
		return celcheck.Duration
	}
	return celcheck.Dyn
}

// varNode is a documented variable and the members documented under it. A node with members
// admits only those; a scalar without members admits none; anything else (maps, lists, objects
// without documented members, vars.*) admits any member.
type varNode struct {
	name     string
	typ      string
	children map[string]*varNode
}

func variableTree(m *model, roots, scope []string) *varNode {
	top := &varNode{children: map[string]*varNode{}}
	for _, r := range roots {
		top.children[r] = &varNode{name: r, typ: "any"}
	}
	for _, r := range scope {
		top.children[r] = &varNode{name: r, typ: "any"}
	}
	for _, v := range m.Variables {
		segs := strings.Split(v.Path, ".")
		n := top.children[segs[0]]
		if n == nil {
			continue // a namespace this phase does not have
		}
		for _, s := range segs[1:] {
			c := n.children[s]
			if c == nil {
				if n.children == nil {
					n.children = map[string]*varNode{}
				}
				c = &varNode{name: n.name + "." + s, typ: "object"}
				n.children[s] = c
			}
			n = c
		}
		n.typ = v.Type
	}
	return top
}

var scalars = map[string]bool{"string": true, "bool": true, "boolean": true, "int32": true, "int64": true, "integer": true,
	"int": true, "timestamp": true, "duration": true}

// member checks the select of field on n: "" when allowed, else why not.
func (n *varNode) member(field string) (*varNode, string) {
	if len(n.children) == 0 {
		if scalars[n.typ] {
			return nil, fmt.Sprintf("%s is a %s; it has no member %s", n.name, n.typ, field)
		}
		return nil, ""
	}
	c := n.children[field]
	if c == nil {
		var names []string
		for k := range n.children {
			if k != "[]" {
				names = append(names, k)
			}
		}
		sort.Strings(names)
		return nil, fmt.Sprintf("%s.%s is not a documented variable (%s has %s)", n.name, field, n.name, strings.Join(names, ", "))
	}
	return c, ""
}

// compile checks one CEL expression against env: it must parse, type-check, name only
// documented variables, be a condition when boolean, and have a bounded estimated cost.
func compile(env *celcheck.Env, tree *varNode, expr string, boolean bool) error {
	root, err := celcheck.Parse(expr, limits)
	if err != nil {
		return err
	}
	t, err := env.Check(root)
	if err != nil {
		return err
	}
	if boolean && !t.IsBool() && !t.IsDyn() {
		return fmt.Errorf("the expression is of type %s; an expression must be a condition (bool)", t)
	}
	if msg := checkVariables(root, tree); msg != "" {
		return fmt.Errorf("%s", msg)
	}
	if cost := celcheck.Cost(root, costs); cost > MaxExpressionCost {
		return limitError{fmt.Sprintf("its estimated evaluation cost is %d; the limit is %d (MaxExpressionCost)", cost, MaxExpressionCost)}
	}
	return nil
}

// limitError is a refusal for a limit (reported as such in the error details).
type limitError struct{ msg string }

func (e limitError) Error() string { return e.msg }

// checkVariables walks the selects and indexes hanging off each documented namespace.
func checkVariables(root *celcheck.Expr, tree *varNode) string {
	var bad string
	root.Selects(func(path []string) bool {
		n := tree.children[path[0]]
		if n == nil {
			return true // a comprehension variable, or a root the checker refused already
		}
		for _, seg := range path[1:] {
			next, msg := n.member(seg)
			if msg != "" {
				bad = msg
				return false
			}
			if next == nil {
				return true
			}
			n = next
		}
		return true
	})
	return bad
}

// costs is the cost estimator's view of the platform's values: every string, list and map a
// request can supply is bounded by the request size the platform accepts. The lists
// extension's sorts and distinct and json.encode, which cel-go leaves to its callers, cost
// n·log₂n comparisons (n² for distinct) and a constant per entry.
var costs = celcheck.Costs{Unknown: maxValueSize, Overloads: map[string]celcheck.CallCost{
	"json_encode_dyn": func(_ uint64, args []uint64) (uint64, uint64) {
		return args[0]*16 + 1, args[0]*maxValueSize + 2
	},
	"list_distinct": func(n uint64, _ []uint64) (uint64, uint64) { return n * n, n },
	"list_int_sort": sorted, "list_uint_sort": sorted, "list_double_sort": sorted, "list_bool_sort": sorted,
	"list_google.protobuf.Duration_sort": sorted, "list_google.protobuf.Timestamp_sort": sorted,
	"list_string_sort": sorted, "list_bytes_sort": sorted,
	"list_int_sortByAssociatedKeys": sorted, "list_uint_sortByAssociatedKeys": sorted,
	"list_double_sortByAssociatedKeys": sorted, "list_bool_sortByAssociatedKeys": sorted,
	"list_google.protobuf.Duration_sortByAssociatedKeys":  sorted,
	"list_google.protobuf.Timestamp_sortByAssociatedKeys": sorted,
	"list_string_sortByAssociatedKeys":                    sorted, "list_bytes_sortByAssociatedKeys": sorted,
}}

func sorted(n uint64, _ []uint64) (uint64, uint64) { return n * uint64(bits.Len64(n)+1), n }

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
