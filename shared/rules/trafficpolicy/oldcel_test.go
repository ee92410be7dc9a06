package trafficpolicy

// The cel-go validator this package used before celcheck, kept to prove that the two agree
// (TestAgreesWithCelGo).

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

// oldPhaseEnv is a phase's CEL environment with its variable tree, built on first use.
type oldPhaseEnv struct {
	once sync.Once
	env  *cel.Env
	tree *varNode
	err  error
}

var (
	oldBaseOnce sync.Once
	oldBase     *cel.Env
	oldBaseErr  error
	oldEnvs     sync.Map // phase, or phase+"|"+scope, → *oldPhaseEnv
)

// oldBaseEnv is what every phase shares: the standard library, the string, list and encoder
// extensions (which provide many of the documented functions), the parser's and checker's
// limits, and every documented function without a phase of its own that cel-go lacks.
func oldBaseEnv(m *model) (_ *cel.Env, err error) {
	defer derrors.Wrap(&err, "trafficpolicy.baseEnv")
	oldBaseOnce.Do(func() {
		e, err := cel.NewEnv(ext.Strings(), ext.Lists(), ext.Encoders(),
			cel.ParserRecursionLimit(MaxExpressionDepth), cel.ParserExpressionSizeLimit(MaxExpressionBytes),
			cel.ExpressionNodeLimit(MaxExpressionNodes),
			cel.ASTValidators(cel.ValidateComprehensionNestingLimit(MaxComprehensionNesting)))
		if err != nil {
			oldBaseErr = fmt.Errorf("build the environment: %w", err)
			return
		}
		opts := append(oldDeclarations(e, m.Functions, ""), cel.CostEstimatorOptions(oldCostOverrides()...))
		if oldBase, err = e.Extend(opts...); err != nil {
			oldBaseErr = fmt.Errorf("declare the documented functions: %w", err)
		}
	})
	return oldBase, oldBaseErr
}

// oldEnvFor returns the environment of phase; scope adds variables of one field (retry_condition).
func oldEnvFor(m *model, phase string, scope []string) (_ *cel.Env, _ *varNode, err error) {
	defer derrors.Wrap(&err, "trafficpolicy.oldEnvFor(%s)", phase)
	key := phase
	if len(scope) > 0 {
		key += "|" + strings.Join(scope, ",")
	}
	v, _ := oldEnvs.LoadOrStore(key, &oldPhaseEnv{})
	pe := v.(*oldPhaseEnv)
	pe.once.Do(func() {
		b, err := oldBaseEnv(m)
		if err != nil {
			pe.err = err
			return
		}
		p := m.phases[phase]
		var opts []cel.EnvOption
		for _, r := range append(append([]string{}, p.Roots...), scope...) {
			opts = append(opts, cel.Variable(r, cel.DynType))
		}
		opts = append(opts, oldDeclarations(b, m.Functions, phase)...)
		if pe.env, err = b.Extend(opts...); err != nil {
			pe.err = fmt.Errorf("extend the base environment: %w", err)
			return
		}
		pe.tree = variableTree(m, p.Roots, scope)
	})
	return pe.env, pe.tree, pe.err
}

// oldDeclarations declares the documented functions of phase ("" for those of every phase) that
// e does not provide, for type checking only: nothing is evaluated here.
func oldDeclarations(e *cel.Env, fns []functionRef, phase string) []cel.EnvOption {
	have := e.Functions()
	byName := map[string][]cel.FunctionOpt{}
	for _, f := range fns {
		if f.Macro || (phase == "" && len(f.Phases) > 0) || (phase != "" && !contains(f.Phases, phase)) {
			continue
		}
		for n := len(f.Params) - f.Optional; n <= len(f.Params); n++ {
			if oldProvided(have[f.Name], f.Receiver != "", n) {
				continue
			}
			args := make([]*cel.Type, 0, n+1)
			if f.Receiver != "" {
				args = append(args, oldCelType(f.Receiver))
			}
			for _, p := range f.Params[:n] {
				args = append(args, oldCelType(p))
			}
			id := strings.NewReplacer(".", "_", "<", "_", ">", "_").Replace(fmt.Sprintf("tp_%s_%s_%d", f.Receiver, f.Name, n))
			if f.Receiver != "" {
				byName[f.Name] = append(byName[f.Name], cel.MemberOverload(id, args, oldCelType(f.Result)))
			} else {
				byName[f.Name] = append(byName[f.Name], cel.Overload(id, args, oldCelType(f.Result)))
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

// oldProvided says whether d has an overload of the same style taking n arguments.
func oldProvided(d *decls.FunctionDecl, member bool, n int) bool {
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

func oldCelType(t string) *cel.Type {
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

// oldCompile checks one CEL expression against env: it must parse, type-check, name only
// documented variables, be a condition when boolean, and have a bounded estimated cost.
func oldCompile(env *cel.Env, tree *varNode, expr string, boolean bool) error {
	ast, iss := env.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return fmt.Errorf("%s", oldOneLine(iss.Err().Error()))
	}
	if boolean {
		if t := ast.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) {
			return fmt.Errorf("the expression is of type %s; an expression must be a condition (bool)", t)
		}
	}
	if msg := oldCheckVariables(ast.NativeRep().Expr(), tree); msg != "" {
		return fmt.Errorf("%s", msg)
	}
	cost, err := env.EstimateCost(ast, oldSizes{})
	if err != nil {
		return fmt.Errorf("its cost cannot be estimated: %v", err)
	}
	if cost.Max > MaxExpressionCost {
		return limitError{fmt.Sprintf("its estimated evaluation cost is %d; the limit is %d (MaxExpressionCost)", cost.Max, MaxExpressionCost)}
	}
	return nil
}

// oldCheckVariables walks the selects and indexes hanging off each documented namespace.
func oldCheckVariables(root celast.Expr, tree *varNode) string {
	var bad string
	celast.PreOrderVisit(root, celast.NewExprVisitor(func(x celast.Expr) {
		if bad != "" || x.Kind() != celast.SelectKind {
			return
		}
		// Only the outermost select of a chain is resolved, from its root down.
		path, ok := oldChain(x)
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

// oldChain returns the segments of a select/index chain from its identifier ("[]" for an index).
func oldChain(x celast.Expr) ([]string, bool) {
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

// oldSizes is the cost estimator's view of the platform's values: every string, list and map a
// request can supply is bounded by the request size the platform accepts.
type oldSizes struct{}

// EstimateSize bounds values whose size the expression does not show.
func (oldSizes) EstimateSize(checker.AstNode) *checker.SizeEstimate {
	return &checker.SizeEstimate{Min: 0, Max: maxValueSize}
}

// EstimateCallCost leaves calls to cel-go's defaults.
func (oldSizes) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// oldCostOverrides replace cel-go's estimates for the documented functions it leaves unknown (so
// that they would pass any limit): a sort or distinct of n items costs n·log₂n comparisons
// (n² for distinct), a JSON encoding a constant per entry.
func oldCostOverrides() []checker.CostOption {
	sorted := func(square bool) checker.FunctionEstimator {
		return func(est checker.CostEstimator, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
			if target == nil {
				return nil
			}
			n := oldSizeOf(est, *target)
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
		n := oldSizeOf(est, args[0])
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

func oldSizeOf(est checker.CostEstimator, n checker.AstNode) checker.SizeEstimate {
	if s := n.ComputedSize(); s != nil {
		return *s
	}
	if s := est.EstimateSize(n); s != nil {
		return *s
	}
	return checker.SizeEstimate{Min: 0, Max: maxValueSize}
}

// oldOneLine folds cel-go's multi-line error (with its caret diagram) into one line.
func oldOneLine(s string) string {
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
