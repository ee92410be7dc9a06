package celcheck

import (
	"fmt"
	"math/bits"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	celchecker "github.com/google/cel-go/checker"
)

// limits as the traffic policy validator sets them.
var testLimits = Limits{Depth: 24, CodePoints: 2048, Nodes: 1000, Comprehensions: 3}

type unknownSizes struct{}

func (unknownSizes) EstimateSize(celchecker.AstNode) *celchecker.SizeEstimate {
	return &celchecker.SizeEstimate{Min: 0, Max: 1024}
}

func (unknownSizes) EstimateCallCost(string, string, *celchecker.AstNode, []celchecker.AstNode) *celchecker.CallEstimate {
	return nil
}

// oldEnv is cel-go's environment for the corpus: the standard library and extensions, two
// dyn variables and a typed function.
func oldEnv(t testing.TB) *cel.Env {
	e, err := celGoEnv(t).Extend(cel.Variable("req", cel.DynType), cel.Variable("conn", cel.DynType),
		cel.Function("getReqHeader", cel.Overload("tp_getReqHeader", []*cel.Type{cel.StringType}, cel.ListType(cel.StringType))),
		cel.ParserRecursionLimit(testLimits.Depth), cel.ParserExpressionSizeLimit(testLimits.CodePoints),
		cel.ExpressionNodeLimit(testLimits.Nodes),
		cel.ASTValidators(cel.ValidateComprehensionNestingLimit(testLimits.Comprehensions)),
		cel.CostEstimatorOptions(celGoOverrides()...))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func newEnv() *Env {
	return Standard().Extend(map[string]*Type{"req": Dyn, "conn": Dyn},
		[]Overload{{Name: "getReqHeader", ID: "tp_getReqHeader", Args: []*Type{String}, Result: ListOf(String)}})
}

// celGoOverrides and testOverrides estimate what cel-go leaves to its callers as the traffic
// policy validator does: sorts n·log₂n, distinct n², a JSON encoding a constant per entry.
func celGoOverrides() []celchecker.CostOption {
	sorted := func(square bool) celchecker.FunctionEstimator {
		return func(est celchecker.CostEstimator, target *celchecker.AstNode, args []celchecker.AstNode) *celchecker.CallEstimate {
			if target == nil {
				return nil
			}
			n := sizeOf(est, *target)
			cost := n.Max * uint64(bits.Len64(n.Max)+1)
			if square {
				cost = n.Max * n.Max
			}
			return &celchecker.CallEstimate{CostEstimate: celchecker.CostEstimate{Min: 1, Max: cost}, ResultSize: &n}
		}
	}
	encode := func(est celchecker.CostEstimator, target *celchecker.AstNode, args []celchecker.AstNode) *celchecker.CallEstimate {
		if len(args) != 1 {
			return nil
		}
		n := sizeOf(est, args[0])
		out := celchecker.SizeEstimate{Min: 2, Max: n.Max*1024 + 2}
		return &celchecker.CallEstimate{CostEstimate: celchecker.CostEstimate{Min: 1, Max: n.Max*16 + 1}, ResultSize: &out}
	}
	opts := []celchecker.CostOption{
		celchecker.OverloadCostEstimate("json_encode_dyn", encode),
		celchecker.OverloadCostEstimate("list_distinct", sorted(true)),
	}
	for _, t := range []string{"int", "uint", "double", "bool", "google.protobuf.Duration", "google.protobuf.Timestamp", "string", "bytes"} {
		opts = append(opts, celchecker.OverloadCostEstimate("list_"+t+"_sort", sorted(false)),
			celchecker.OverloadCostEstimate("list_"+t+"_sortByAssociatedKeys", sorted(false)))
	}
	return opts
}

func sizeOf(est celchecker.CostEstimator, n celchecker.AstNode) celchecker.SizeEstimate {
	if s := n.ComputedSize(); s != nil {
		return *s
	}
	if s := est.EstimateSize(n); s != nil {
		return *s
	}
	return celchecker.SizeEstimate{Min: 0, Max: 1024}
}

func testOverrides() map[string]CallCost {
	sorted := func(square bool) CallCost {
		return func(n uint64, _ []uint64) (uint64, uint64) {
			if square {
				return n * n, n
			}
			return n * uint64(bits.Len64(n)+1), n
		}
	}
	m := map[string]CallCost{
		"json_encode_dyn": func(_ uint64, args []uint64) (uint64, uint64) { return args[0]*16 + 1, args[0]*1024 + 2 },
		"list_distinct":   sorted(true),
	}
	for _, t := range []string{"int", "uint", "double", "bool", "google.protobuf.Duration", "google.protobuf.Timestamp", "string", "bytes"} {
		m["list_"+t+"_sort"] = sorted(false)
		m["list_"+t+"_sortByAssociatedKeys"] = sorted(false)
	}
	return m
}

// outcome is what the validator needs of a compilation: refused or not, the type, the cost.
func oldOutcome(e *cel.Env, src string) string {
	ast, iss := e.Compile(src)
	if iss != nil && iss.Err() != nil {
		return "refused"
	}
	cost, err := e.EstimateCost(ast, unknownSizes{})
	if err != nil {
		return "cost error " + err.Error()
	}
	return fmt.Sprintf("%s cost %d", ast.OutputType(), cost.Max)
}

func newOutcome(e *Env, src string) (string, error) {
	root, err := Parse(src, testLimits)
	if err != nil {
		return "refused", err
	}
	t, err := e.Check(root)
	if err != nil {
		return "refused", err
	}
	return fmt.Sprintf("%s cost %d", t, Cost(root, Costs{Unknown: 1024, Overloads: testOverrides()})), nil
}

var corpus = []string{
	// literals and operators
	"1", "-1", "1u", "1.5", "1e3", ".5", "0x1F", "0xFFu", "'a'", `"a"`, "'''a\nb'''", `r'\d'`, `b'ab'`, "true", "null",
	"1 + 2", "1 + 2u", "1 + 2.0", "'a' + 'b'", "b'a' + b'b'", "[1] + [2]", "[1] + ['a']", "1 - 2 * 3 / 4 % 5",
	"1 < 2", "1 < 2u", "1 < 2.0", "'a' < 'b'", "true < false", "1 == 1", "1 == 'a'", "1 != null", "null == null",
	"!true", "!!true", "!1", "-'a'", "--1", "-(1)", "true && false", "true || 1", "1 && true", "true ? 1 : 2",
	"true ? 1 : 'a'", "1 ? 1 : 2", "1 in [1, 2]", "'a' in {'a': 1}", "1 in 1",
	"[1, 'a']", "[1, 2][0]", "{'a': 1}['a']", "{'a': 1, 1: 'b'}", "{}", "[]", "[].size()", "{}.size()",
	"size('abc')", "'abc'.size()", "size(1)", "[1,2,3].size() > 2", "'abc'.startsWith('a')", "'abc'.startsWith(1)",
	"'abc'.endsWith('c')", "'abc'.contains('b')", "'abc'.matches('^a')", "matches('abc', 'a')",
	"int('1')", "uint(1)", "double(1)", "string(1)", "bytes('a')", "bool('true')", "dyn(1)", "type(1) == int",
	"type(1) == string", "timestamp('2023-01-01T00:00:00Z')", "duration('1s')", "timestamp(1) + duration('1s')",
	"timestamp(1) - timestamp(2)", "duration('1s') < duration('2s')", "timestamp(1).getHours()",
	"timestamp(1).getHours('UTC')", "duration('1h').getMinutes()", "int(timestamp(1))",
	"google.protobuf.Timestamp", "null_type", "type(null) == null_type", "list", "map",
	// variables
	"req", "req.method", "req.method == 'GET'", "req.url.path.startsWith('/x')", "req.headers['x'][0]",
	"req.headers.x", "req + 1", "req.size()", "size(req)", "req.a.b.c.d", "req[0][1]", "req.method.startsWith(1)",
	"has(req.method)", "has(req)", "has(req.a.b)", "conn.client_ip in ['1.1.1.1']", "req.method in req.methods",
	"nope", "nope(1)", "req.nope()", "1.nope()", "'a'.lowerAscii()", "'a'.upperAscii()", "'a b'.split(' ')",
	"'a b'.split(' ', 2)", "'abc'.substring(1)", "'abc'.substring(1, 2)", "'abc'.charAt(1)", "'abc'.indexOf('b')",
	"'abc'.indexOf('b', 1)", "'abc'.lastIndexOf('b')", "' a '.trim()", "'abc'.replace('a', 'b')",
	"'abc'.replace('a', 'b', 1)", "'abc'.reverse()", "'%s'.format(['a'])", "'%d'.format([1, 'a'])",
	"['a', 'b'].join()", "['a', 'b'].join(',')", "[1, 2].join()", "strings.quote('a')", "base64.encode(b'a')",
	"base64.decode('YQ==')", "lists.range(3)", "[3, 1].sort()", "['b', 'a'].sort()", "[1, 1].distinct()",
	"[[1], [2]].flatten()", "[1, [2]].flatten(1)", "[1, 2, 3].slice(0, 1)", "[1, 2].reverse()", "[req].sort()",
	"getReqHeader('x')", "getReqHeader('x')[0].startsWith('a')", "getReqHeader(1)", "getReqHeader('x').size()",
	"json.encode(req)", "json.encode({'a': 1})",
	// macros
	"[1, 2].all(x, x > 0)", "[1, 2].exists(x, x > 0)", "[1, 2].exists_one(x, x > 0)", "[1, 2].map(x, x * 2)",
	"[1, 2].map(x, x > 1, x * 2)", "[1, 2].filter(x, x > 1)", "{'a': 1}.all(k, k == 'a')", "req.all(x, x)",
	"req.headers.exists(h, h.startsWith('x'))", "req.a.map(x, x + 1)", "[1, 2].all(x, x)", "[1, 2].all(1, true)",
	"[1].all(@result, true)", "1.all(x, true)", "'a'.all(x, true)", "[1,2].sortBy(x, -x)", "req.sortBy(x, x.a)",
	"[1,2].sortBy(x, x)[0] == 1", "1.sortBy(x, x)", "[[1]].map(x, x.map(y, y + 1))",
	"req.headers.all(a, req.headers.all(b, a.matches(b)))",
	"req.headers.all(a, req.headers.all(b, req.headers.all(c, a.matches(b + c))))",
	"req.a.all(a, req.a.all(b, req.a.all(c, req.a.all(d, true))))",
	"req.a.all(a, req.a.all(b, req.a.all(c, true)))",
	"req.a.map(a, a + 'x').filter(b, b.size() > 2).exists(c, c.contains(req.b))",
	"req.a.all(x, x.contains(req.b + req.c + req.d))",
	"req.x + req.y + 'abc'", "(req.x + 'abcdef').size() > 3", "req.a == req.b", "'abc' == req.b", "req.b == 'abc'",
	"req.a.filter(x, x.matches('abc')).size() == 0", "bytes(req.a)", "string(req.a)", "strings.quote(req.a)",
	"req.a ? 'x' : 'yy'", "(req.a ? 'x' : 'yy') + req.b", "'%s %s'.format([req.a, req.b])",
	"[req.a, 'x'].all(x, x.startsWith('y'))", "{'a': req.a}.all(k, k.size() > 1)", "req.a in {'a': 1}",
	// syntax
	"", "(", "1 +", "a b", "1 = 2", "'unterminated", "req.", "req.1", "[1,]", "{'a': 1,}", "f(1,)", "req?.a",
	"req[?0]", "a.b{c: 1}", "Foo{a: 1}", ".req", "if", "req.if", "in", "'\\q'", "'\\x4'", "'\\u00e9'", `b'\u00e9'`,
	"'\\101'", "1 // comment", "9223372036854775808", "-9223372036854775808", "18446744073709551616u", "1e999",
	"0x", "1..2", "req.`a b`", "&", "a && b || c", "req.a || req.b && req.c",
}

// deep returns expressions around cel-go's nesting limits.
func deep() []string {
	var out []string
	for n := 8; n <= 30; n++ {
		out = append(out,
			strings.Repeat("1 + (", n)+"1"+strings.Repeat(")", n),
			strings.Repeat("req.a[", n)+"1"+strings.Repeat("] + 1", n),
			strings.Repeat("(", n)+"req"+strings.Repeat(").a", n),
			"req"+strings.Repeat("[req", n)+strings.Repeat("]", n),
			strings.Repeat("getReqHeader(", n)+"'x'"+strings.Repeat("[0])", n),
			strings.Repeat("req.a.exists(x, ", n)+"true"+strings.Repeat(")", n),
			strings.Repeat("[req.a.map(x, ", n)+"x"+strings.Repeat(")]", n),
			strings.Repeat("true ? 1 : ", n)+"1",
			strings.Repeat("1 < 2 == (", n)+"true"+strings.Repeat(")", n),
			"[1].sortBy(x, "+strings.Repeat("x + ", n)+"1)",
		)
	}
	for n := 18; n <= 30; n++ {
		out = append(out,
			strings.Repeat("(", n)+"1"+strings.Repeat(")", n),
			"1"+strings.Repeat(" + 1", n),
			"1"+strings.Repeat(" * 1", n),
			"1"+strings.Repeat(" == 1", n),
			"true"+strings.Repeat(" && true", n),
			"req"+strings.Repeat(".a", n),
			"req"+strings.Repeat("[0]", n),
			"req"+strings.Repeat(".f()", n),
			strings.Repeat("[", n)+"1"+strings.Repeat("]", n),
			strings.Repeat("{1: ", n)+"1"+strings.Repeat("}", n),
			strings.Repeat("size(", n)+"1"+strings.Repeat(")", n),
			strings.Repeat("!", n)+"true",
			strings.Repeat("-", n)+"1",
			strings.Repeat("true ? ", n)+"1"+strings.Repeat(" : 1", n),
			strings.Repeat("-(", n)+"1"+strings.Repeat(")", n),
		)
	}
	for n := 300; n <= 1100; n += 100 {
		out = append(out, "["+strings.TrimSuffix(strings.Repeat("1,", n), ",")+"]")
		out = append(out, "{"+strings.TrimSuffix(strings.Repeat("1:1,", n/2), ",")+"}")
	}
	out = append(out, strings.Repeat("a", 2049), "'"+strings.Repeat("é", 2046)+"'", "'"+strings.Repeat("é", 2047)+"'")
	return out
}

// The checker agrees with cel-go on every expression of the corpus: refused or not, and when
// accepted, the type and the estimated cost.
func TestAgreesWithCelGo(t *testing.T) {
	old, cur := oldEnv(t), newEnv()
	n := 0
	for _, src := range append(append([]string{}, corpus...), deep()...) {
		want := oldOutcome(old, src)
		got, err := newOutcome(cur, src)
		if got != want {
			short := src
			if len(short) > 80 {
				short = short[:80] + "…"
			}
			t.Errorf("%q: got %s (%v), cel-go %s", short, got, err, want)
		}
		n++
	}
	t.Logf("%d expressions", n)
}
