package trafficpolicy

import (
	"fmt"
	"math/bits"
	"sort"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/decls"
	"github.com/google/cel-go/ext"

	"tunnelapi/shared/platform/derrors"
)

// envError is a failure to build an environment: a defect of this package, not of the input.
type envError struct{ error }

// phaseEnv is a phase's CEL environment with its variable tree, built once per process on first
// use rather than at package initialisation, so that a cold start that never validates a policy
// does not pay for it.
type phaseEnv struct {
	once sync.Once
	env  *cel.Env
	tree *varNode
	err  error
}

var (
	baseOnce sync.Once
	base     *cel.Env
	baseErr  error
	envs     sync.Map // phase, or phase+"|"+scope, → *phaseEnv
)

// baseEnv is what every phase shares: the standard library, the string, list and encoder
// extensions (which provide many of the documented functions), the parser's and checker's
// limits, and every documented function without a phase of its own that cel-go lacks.
func baseEnv(m *model) (_ *cel.Env, err error) {
	defer derrors.Wrap(&err, "trafficpolicy.baseEnv")
	baseOnce.Do(func() {
		e, err := cel.NewEnv(ext.Strings(), ext.Lists(), ext.Encoders(),
			cel.ParserRecursionLimit(MaxExpressionDepth), cel.ParserExpressionSizeLimit(MaxExpressionBytes),
			cel.ExpressionNodeLimit(MaxExpressionNodes),
			cel.ASTValidators(cel.ValidateComprehensionNestingLimit(MaxComprehensionNesting)))
		if err != nil {
			baseErr = fmt.Errorf("build the environment: %w", err)
			return
		}
		opts := append(declarations(e, m.Functions, ""), cel.CostEstimatorOptions(costOverrides()...))
		if base, err = e.Extend(opts...); err != nil {
			baseErr = fmt.Errorf("declare the documented functions: %w", err)
		}
	})
	return base, baseErr
}

// envFor returns the environment of phase; scope adds variables of one field (retry_condition).
func envFor(m *model, phase string, scope []string) (_ *cel.Env, _ *varNode, err error) {
	defer derrors.Wrap(&err, "trafficpolicy.envFor(%s)", phase)
	key := phase
	if len(scope) > 0 {
		key += "|" + strings.Join(scope, ",")
	}
	v, _ := envs.LoadOrStore(key, &phaseEnv{})
	pe := v.(*phaseEnv)
	pe.once.Do(func() {
		b, err := baseEnv(m)
		if err != nil {
			pe.err = err
			return
		}
		p := m.phases[phase]
		var opts []cel.EnvOption
		for _, r := range append(append([]string{}, p.Roots...), scope...) {
			opts = append(opts, cel.Variable(r, cel.DynType))
		}
		opts = append(opts, declarations(b, m.Functions, phase)...)
		if pe.env, err = b.Extend(opts...); err != nil {
			pe.err = fmt.Errorf("extend the base environment: %w", err)
			return
		}
		pe.tree = variableTree(m, p.Roots, scope)
	})
	return pe.env, pe.tree, pe.err
}

// declarations declares the documented functions of phase ("" for those of every phase) that
// e does not provide, for type checking only: nothing is evaluated here.
func declarations(e *cel.Env, fns []functionRef, phase string) []cel.EnvOption {
	have := e.Functions()
	byName := map[string][]cel.FunctionOpt{}
	for _, f := range fns {
		if f.Macro || (phase == "" && len(f.Phases) > 0) || (phase != "" && !contains(f.Phases, phase)) {
			continue
		}
		for n := len(f.Params) - f.Optional; n <= len(f.Params); n++ {
			if provided(have[f.Name], f.Receiver != "", n) {
				continue
			}
			args := make([]*cel.Type, 0, n+1)
			if f.Receiver != "" {
				args = append(args, celType(f.Receiver))
			}
			for _, p := range f.Params[:n] {
				args = append(args, celType(p))
			}
			id := strings.NewReplacer(".", "_", "<", "_", ">", "_").Replace(fmt.Sprintf("tp_%s_%s_%d", f.Receiver, f.Name, n))
			if f.Receiver != "" {
				byName[f.Name] = append(byName[f.Name], cel.MemberOverload(id, args, celType(f.Result)))
			} else {
				byName[f.Name] = append(byName[f.Name], cel.Overload(id, args, celType(f.Result)))
			}
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []cel.EnvOption
	for _, n := range names {
		out = append(out, cel.Function(n, byName[n]...))
	}
	return out
}

// provided says whether d has an overload of the same style taking n arguments.
func provided(d *decls.FunctionDecl, member bool, n int) bool {
	if d == nil {
		return false
	}
	if member {
		n++
	}
	for _, o := range d.OverloadDecls() {
		if o.IsMemberFunction() == member && len(o.ArgTypes()) == n {
			return true
		}
	}
	return false
}

func celType(t string) *cel.Type {
	switch t {
	case "string":
		return cel.StringType
	case "bytes":
		return cel.BytesType
	case "int":
		return cel.IntType
	case "double":
		return cel.DoubleType
	case "bool":
		return cel.BoolType
	case "list":
		return cel.ListType(cel.DynType)
	case "list<string>":
		return cel.ListType(cel.StringType)
	case "map":
		return cel.MapType(cel.DynType, cel.DynType)
	case "timestamp":
		return cel.TimestampType
	case "duration":
		return cel.DurationType
	}
	return cel.DynType
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
func compile(env *cel.Env, tree *varNode, expr string, boolean bool) error {
	ast, iss := env.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return fmt.Errorf("%s", oneLine(iss.Err().Error()))
	}
	if boolean {
		if t := ast.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) {
			return fmt.Errorf("the expression is of type %s; an expression must be a condition (bool)", t)
		}
	}
	if msg := checkVariables(ast.NativeRep().Expr(), tree); msg != "" {
		return fmt.Errorf("%s", msg)
	}
	cost, err := env.EstimateCost(ast, sizes{})
	if err != nil {
		return fmt.Errorf("its cost cannot be estimated: %v", err)
	}
	if cost.Max > MaxExpressionCost {
		return limitError{fmt.Sprintf("its estimated evaluation cost is %d; the limit is %d (MaxExpressionCost)", cost.Max, MaxExpressionCost)}
	}
	return nil
}

// limitError is a refusal for a limit (reported as such in the error details).
type limitError struct{ msg string }

func (e limitError) Error() string { return e.msg }

// checkVariables walks the selects and indexes hanging off each documented namespace.
func checkVariables(root celast.Expr, tree *varNode) string {
	var bad string
	celast.PreOrderVisit(root, celast.NewExprVisitor(func(x celast.Expr) {
		if bad != "" || x.Kind() != celast.SelectKind {
			return
		}
		// Only the outermost select of a chain is resolved, from its root down.
		path, ok := chain(x)
		if !ok {
			return
		}
		n := tree.children[path[0]]
		if n == nil {
			return // a comprehension variable, or a root the checker refused already
		}
		for _, seg := range path[1:] {
			next, msg := n.member(seg)
			if msg != "" {
				bad = msg
				return
			}
			if next == nil {
				return
			}
			n = next
		}
	}))
	return bad
}

// chain returns the segments of a select/index chain from its identifier ("[]" for an index).
func chain(x celast.Expr) ([]string, bool) {
	var rev []string
	for {
		switch x.Kind() {
		case celast.SelectKind:
			rev = append(rev, x.AsSelect().FieldName())
			x = x.AsSelect().Operand()
		case celast.CallKind:
			c := x.AsCall()
			if c.FunctionName() != "_[_]" || len(c.Args()) != 2 {
				return nil, false
			}
			rev = append(rev, "[]")
			x = c.Args()[0]
		case celast.IdentKind:
			rev = append(rev, x.AsIdent())
			for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
				rev[i], rev[j] = rev[j], rev[i]
			}
			return rev, true
		default:
			return nil, false
		}
	}
}

// sizes is the cost estimator's view of the platform's values: every string, list and map a
// request can supply is bounded by the request size the platform accepts.
type sizes struct{}

// EstimateSize bounds values whose size the expression does not show.
func (sizes) EstimateSize(checker.AstNode) *checker.SizeEstimate {
	return &checker.SizeEstimate{Min: 0, Max: maxValueSize}
}

// EstimateCallCost leaves calls to cel-go's defaults.
func (sizes) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// costOverrides replace cel-go's estimates for the documented functions it leaves unknown (so
// that they would pass any limit): a sort or distinct of n items costs n·log₂n comparisons
// (n² for distinct), a JSON encoding a constant per entry.
func costOverrides() []checker.CostOption {
	sorted := func(square bool) checker.FunctionEstimator {
		return func(est checker.CostEstimator, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
			if target == nil {
				return nil
			}
			n := sizeOf(est, *target)
			cost := n.Max * uint64(bits.Len64(n.Max)+1)
			if square {
				cost = n.Max * n.Max
			}
			return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 1, Max: cost}, ResultSize: &n}
		}
	}
	encode := func(est checker.CostEstimator, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
		if len(args) != 1 {
			return nil
		}
		n := sizeOf(est, args[0])
		out := checker.SizeEstimate{Min: 2, Max: n.Max*maxValueSize + 2}
		return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 1, Max: n.Max*16 + 1}, ResultSize: &out}
	}
	opts := []checker.CostOption{
		checker.OverloadCostEstimate("json_encode_dyn", encode),
		checker.OverloadCostEstimate("list_distinct", sorted(true)),
	}
	for _, t := range []string{"int", "uint", "double", "bool", "google.protobuf.Duration", "google.protobuf.Timestamp", "string", "bytes"} {
		opts = append(opts, checker.OverloadCostEstimate("list_"+t+"_sort", sorted(false)),
			checker.OverloadCostEstimate("list_"+t+"_sortByAssociatedKeys", sorted(false)))
	}
	return opts
}

func sizeOf(est checker.CostEstimator, n checker.AstNode) checker.SizeEstimate {
	if s := n.ComputedSize(); s != nil {
		return *s
	}
	if s := est.EstimateSize(n); s != nil {
		return *s
	}
	return checker.SizeEstimate{Min: 0, Max: maxValueSize}
}

// oneLine folds cel-go's multi-line error (with its caret diagram) into one line.
func oneLine(s string) string {
	lines := strings.Split(s, "\n")
	var keep []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "|") {
			continue
		}
		keep = append(keep, t)
	}
	return strings.Join(keep, "; ")
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
