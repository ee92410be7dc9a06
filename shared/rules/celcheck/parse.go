package celcheck

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

type exprKind uint8

const (
	literalExpr exprKind = iota
	identExpr
	selectExpr
	callExpr
	listExpr
	mapExpr
	structExpr
	comprehensionExpr
)

// Expr is a node of a parsed expression, its macros expanded into comprehensions as cel-go
// expands them (so that node counts, nesting and cost estimates agree with it).
type Expr struct {
	kind exprKind
	pos  int

	lit     *Type  // a literal's type
	litStr  string // a string or bytes literal's value
	litBool bool   // a bool literal's value
	litInt  int64  // an int literal's value

	name     string  // identifier, selected field, function, or struct type name
	target   *Expr   // a select's operand, a member call's receiver
	args     []*Expr // call arguments, list elements, map keys, struct field values
	vals     []*Expr // map values
	fields   []string
	testOnly bool // has(a.b)
	depth    int  // the parse tree's nesting as cel-go's visitor counts it

	iterVar, accuVar                                string
	iterRange, accuInit, loopCond, loopStep, result *Expr

	typ       *Type    // set by the checker
	overloads []string // the overloads a call may resolve to, set by the checker
}

// accumulator is the accumulator's name in macro expansions.
const accumulator = "@result"

// Limits bound what the parser accepts.
type Limits struct {
	// Depth bounds the nesting of the grammar's recursive rules (cel-go's parser recursion limit).
	Depth int
	// CodePoints bounds the expression's length.
	CodePoints int
	// Nodes bounds the nodes of the expanded expression.
	Nodes int
	// Comprehensions bounds the nesting of comprehensions.
	Comprehensions int
}

type parser struct {
	toks   []token
	i      int
	limits Limits
	depth  map[string]int // the nesting of each recursive rule, as cel-go's ANTLR listener counts it
	nodes  int
}

type syntaxError struct{ msg string }

func (e syntaxError) Error() string { return e.msg }

// Parse parses src within limits.
func Parse(src string, limits Limits) (root *Expr, err error) {
	if n := utf8.RuneCountInString(src); limits.CodePoints > 0 && n > limits.CodePoints {
		return nil, fmt.Errorf("expression code point size exceeds limit: size: %d, limit %d", n, limits.CodePoints)
	}
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, limits: limits, depth: map[string]int{}}
	defer func() {
		if r := recover(); r != nil {
			se, ok := r.(syntaxError)
			if !ok {
				panic(r)
			}
			root, err = nil, se
		}
	}()
	root = p.expr()
	if t := p.peek(); t.kind != tokEOF {
		p.fail(t, "mismatched input '%s' expecting <EOF>", t.text)
	}
	if limits.Nodes > 0 && p.nodes > limits.Nodes {
		return nil, fmt.Errorf("expression node count exceeds limit: count %d, limit %d", p.nodes, limits.Nodes)
	}
	if limits.Comprehensions > 0 {
		if n := comprehensionNesting(root); n > limits.Comprehensions {
			return nil, fmt.Errorf("comprehension exceeds nesting limit")
		}
	}
	return root, nil
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

func (p *parser) is(text string) bool {
	t := p.peek()
	return t.kind == tokPunct && t.text == text || t.kind == tokIdent && t.text == text && text == "in"
}

func (p *parser) accept(text string) bool {
	if p.is(text) {
		p.i++
		return true
	}
	return false
}

func (p *parser) expect(text string) token {
	t := p.peek()
	if !p.is(text) {
		shown := t.text
		if t.kind == tokEOF {
			shown = "<EOF>"
		}
		p.fail(t, "mismatched input '%s' expecting '%s'", shown, text)
	}
	return p.next()
}

func (p *parser) fail(t token, format string, args ...any) {
	panic(syntaxError{fmt.Sprintf("syntax error: "+format, args...) + fmt.Sprintf(" (column %d)", t.pos+1)})
}

// enter counts one more level of the grammar rule; leave undoes it.
func (p *parser) enter(rule string) {
	p.depth[rule]++
	if p.limits.Depth > 0 && p.depth[rule] > p.limits.Depth {
		p.fail(p.peek(), "expression recursion limit exceeded: %d", p.limits.Depth)
	}
}

func (p *parser) leave(rule string) { p.depth[rule]-- }

// counted records e's visitor depth: one more than its deepest child's (cel-go's visitor
// bounds the nesting of conditionals, relations, arithmetic, selects, member calls and
// indexes); passed records a node the visitor passes through.
func (p *parser) counted(e *Expr, children ...*Expr) *Expr {
	e = p.passed(e, children...)
	e.depth++
	if p.limits.Depth > 0 && e.depth > p.limits.Depth {
		p.fail(token{pos: e.pos}, "expression recursion limit exceeded: %d", p.limits.Depth)
	}
	return e
}

func (p *parser) passed(e *Expr, children ...*Expr) *Expr {
	d := 0
	for _, c := range children {
		d = max(d, c.depth)
	}
	e.depth = d
	return e
}

func (p *parser) node(e *Expr) *Expr {
	p.nodes++
	return e
}

// expr: or ('?' or ':' expr)?
func (p *parser) expr() *Expr {
	p.enter("expr")
	defer p.leave("expr")
	cond := p.or()
	if !p.is("?") {
		return cond
	}
	t := p.next()
	yes := p.or()
	p.expect(":")
	no := p.expr()
	return p.counted(p.node(&Expr{kind: callExpr, pos: t.pos, name: "_?_:_", args: []*Expr{cond, yes, no}}), cond, yes, no)
}

func (p *parser) or() *Expr {
	p.enter("or")
	defer p.leave("or")
	terms := []*Expr{p.and()}
	var pos []int
	for p.is("||") {
		pos = append(pos, p.next().pos)
		terms = append(terms, p.and())
	}
	return p.balance("_||_", terms, pos)
}

func (p *parser) and() *Expr {
	p.enter("and")
	defer p.leave("and")
	terms := []*Expr{p.relation()}
	var pos []int
	for p.is("&&") {
		pos = append(pos, p.next().pos)
		terms = append(terms, p.relation())
	}
	return p.balance("_&&_", terms, pos)
}

// balance builds a balanced tree of a chain of && or ||, as cel-go does.
func (p *parser) balance(op string, terms []*Expr, pos []int) *Expr {
	if len(terms) == 1 {
		return terms[0]
	}
	var build func(lo, hi int) *Expr
	build = func(lo, hi int) *Expr {
		if lo == hi {
			return terms[lo]
		}
		mid := (lo + hi + 1) / 2
		l, r := build(lo, mid-1), build(mid, hi)
		return p.passed(p.node(&Expr{kind: callExpr, pos: pos[mid-1], name: op, args: []*Expr{l, r}}), l, r)
	}
	return build(0, len(terms)-1)
}

var relations = map[string]string{"<": "_<_", "<=": "_<=_", ">": "_>_", ">=": "_>=_", "==": "_==_", "!=": "_!=_", "in": "@in"}

// relation: calc (relop calc)*, left-associative: ANTLR invokes the rule again for each
// right operand.
func (p *parser) relation() *Expr {
	p.enter("relation")
	defer p.leave("relation")
	left := p.calc()
	for {
		t := p.peek()
		fn, ok := relations[t.text]
		if !ok || !(t.kind == tokPunct || t.kind == tokIdent && t.text == "in") {
			return left
		}
		p.next()
		p.enter("relation")
		right := p.calc()
		p.leave("relation")
		left = p.counted(p.node(&Expr{kind: callExpr, pos: t.pos, name: fn, args: []*Expr{left, right}}), left, right)
	}
}

var additions = map[string]string{"+": "_+_", "-": "_-_"}
var multiplications = map[string]string{"*": "_*_", "/": "_/_", "%": "_%_"}

// calc: term (('+'|'-') term)*; one ANTLR rule with term's operators, invoked again for each
// right operand.
func (p *parser) calc() *Expr {
	p.enter("calc")
	defer p.leave("calc")
	left := p.term()
	for {
		t := p.peek()
		fn, ok := additions[t.text]
		if !ok || t.kind != tokPunct {
			return left
		}
		p.next()
		p.enter("calc")
		right := p.term()
		p.leave("calc")
		left = p.counted(p.node(&Expr{kind: callExpr, pos: t.pos, name: fn, args: []*Expr{left, right}}), left, right)
	}
}

// term: unary (('*'|'/'|'%') unary)*
func (p *parser) term() *Expr {
	left := p.unary()
	for {
		t := p.peek()
		fn, ok := multiplications[t.text]
		if !ok || t.kind != tokPunct {
			return left
		}
		p.next()
		p.enter("calc")
		right := p.unary()
		p.leave("calc")
		left = p.counted(p.node(&Expr{kind: callExpr, pos: t.pos, name: fn, args: []*Expr{left, right}}), left, right)
	}
}

// unary: member | '!'+ member | '-'+ member. A lone '-' before a number is its sign, as the
// grammar's first alternative (member) reads it; two or more are operators.
func (p *parser) unary() *Expr {
	p.enter("unary")
	defer p.leave("unary")
	t := p.peek()
	if !p.is("!") && !p.is("-") {
		return p.member()
	}
	op := t.text
	n := 0
	for p.toks[p.i+n].kind == tokPunct && p.toks[p.i+n].text == op {
		n++
	}
	if op == "-" && n == 1 && p.negativeLiteral() {
		return p.member()
	}
	p.i += n
	e := p.member()
	if n%2 == 0 {
		return e
	}
	fn := "!_"
	if op == "-" {
		fn = "-_"
	}
	return p.passed(p.node(&Expr{kind: callExpr, pos: t.pos, name: fn, args: []*Expr{e}}), e)
}

// negativeLiteral says whether a '-' is the sign of the number literal after it.
func (p *parser) negativeLiteral() bool {
	n := p.toks[p.i+1]
	return n.kind == tokInt || n.kind == tokDouble || n.kind == tokUint
}

// member: primary ('.' IDENT ('(' args ')')? | '[' expr ']')*
func (p *parser) member() *Expr {
	p.enter("member")
	defer p.leave("member")
	e := p.primary()
	for {
		switch {
		case p.is("?."):
			p.fail(p.peek(), "unsupported syntax '?.'")
		case p.is("."):
			t := p.next()
			id := p.next()
			if id.kind != tokIdent && id.kind != tokQuotedIdent {
				p.fail(id, "mismatched input '%s' expecting IDENTIFIER", id.text)
			}
			if p.is("(") && id.kind == tokIdent {
				p.next()
				args := p.args(")")
				e = p.counted(p.call(t.pos, id.text, e, args), append([]*Expr{e}, args...)...)
				continue
			}
			e = p.counted(p.node(&Expr{kind: selectExpr, pos: t.pos, name: id.text, target: e}), e)
		case p.is("["):
			t := p.next()
			if p.is("?") {
				p.fail(p.peek(), "unsupported syntax '[?'")
			}
			idx := p.expr()
			p.expect("]")
			e = p.counted(p.node(&Expr{kind: callExpr, pos: t.pos, name: "_[_]", args: []*Expr{e, idx}}), e, idx)
		default:
			return e
		}
	}
}

// args parses expressions separated by commas up to close.
func (p *parser) args(close string) []*Expr {
	var out []*Expr
	if p.accept(close) {
		return out
	}
	p.enter("exprList")
	defer p.leave("exprList")
	for {
		out = append(out, p.expr())
		if p.accept(close) {
			return out
		}
		p.expect(",")
	}
}

func (p *parser) primary() *Expr {
	p.enter("primary")
	defer p.leave("primary")
	t := p.peek()
	switch {
	case p.is("."):
		p.next()
		id := p.next()
		if id.kind != tokIdent {
			p.fail(id, "mismatched input '%s' expecting IDENTIFIER", id.text)
		}
		return p.identOrCall(id, ".")
	case t.kind == tokIdent:
		p.next()
		switch t.text {
		case "true", "false":
			return p.node(&Expr{kind: literalExpr, pos: t.pos, lit: boolType, litBool: t.text == "true"})
		case "null":
			return p.node(&Expr{kind: literalExpr, pos: t.pos, lit: nullType})
		case "in":
			p.fail(t, "mismatched input 'in'")
		}
		return p.identOrCall(t, "")
	case p.is("("):
		p.next()
		e := p.expr()
		p.expect(")")
		return e
	case p.is("["):
		p.next()
		p.enter("listInit")
		defer p.leave("listInit")
		var elems []*Expr
		for !p.accept("]") {
			if p.is("?") {
				p.fail(p.peek(), "unsupported syntax '?'")
			}
			elems = append(elems, p.expr())
			if !p.accept(",") {
				p.expect("]")
				break
			}
		}
		return p.passed(p.node(&Expr{kind: listExpr, pos: t.pos, args: elems}), elems...)
	case p.is("{"):
		p.next()
		p.enter("mapInit")
		defer p.leave("mapInit")
		e := &Expr{kind: mapExpr, pos: t.pos}
		for !p.accept("}") {
			if p.is("?") {
				p.fail(p.peek(), "unsupported syntax '?'")
			}
			k := p.expr()
			p.expect(":")
			v := p.expr()
			e.args, e.vals = append(e.args, k), append(e.vals, v)
			p.nodes++ // the entry
			if !p.accept(",") {
				p.expect("}")
				break
			}
		}
		return p.passed(p.node(e), append(append([]*Expr{}, e.args...), e.vals...)...)
	case p.is("-") || t.kind == tokInt || t.kind == tokUint || t.kind == tokDouble || t.kind == tokString || t.kind == tokBytes:
		return p.literal()
	}
	shown := t.text
	if t.kind == tokEOF {
		shown = "<EOF>"
	}
	p.fail(t, "mismatched input '%s'", shown)
	return nil
}

// identOrCall parses an identifier, a global call, or a message construction after id.
func (p *parser) identOrCall(id token, lead string) *Expr {
	if reserved[id.text] {
		p.fail(id, "reserved identifier: %s", id.text)
	}
	if p.is("(") {
		p.next()
		args := p.args(")")
		return p.passed(p.call(id.pos, lead+id.text, nil, args), args...)
	}
	name := lead + id.text
	// A qualified name followed by '{' is a message construction: gather it.
	j := p.i
	for p.toks[j].kind == tokPunct && p.toks[j].text == "." && p.toks[j+1].kind == tokIdent {
		j += 2
	}
	if p.toks[j].kind == tokPunct && p.toks[j].text == "{" {
		for p.i < j {
			p.next()
			name += "." + p.next().text
		}
		p.next()
		e := &Expr{kind: structExpr, pos: id.pos, name: name}
		for !p.accept("}") {
			if p.is("?") {
				p.fail(p.peek(), "unsupported syntax '?'")
			}
			f := p.next()
			if f.kind != tokIdent && f.kind != tokQuotedIdent {
				p.fail(f, "mismatched input '%s' expecting IDENTIFIER", f.text)
			}
			p.expect(":")
			e.fields = append(e.fields, f.text)
			e.args = append(e.args, p.expr())
			p.nodes++
			if !p.accept(",") {
				p.expect("}")
				break
			}
		}
		return p.passed(p.node(e), e.args...)
	}
	return p.node(&Expr{kind: identExpr, pos: id.pos, name: name})
}

func (p *parser) literal() *Expr {
	neg := p.accept("-")
	t := p.next()
	sign := ""
	if neg {
		sign = "-"
	}
	e := &Expr{kind: literalExpr, pos: t.pos}
	switch t.kind {
	case tokInt:
		text := t.text
		base := 10
		if strings.HasPrefix(text, "0x") {
			base, text = 16, text[2:]
		}
		v, err := strconv.ParseInt(sign+text, base, 64)
		if err != nil {
			p.fail(t, "invalid int literal")
		}
		e.lit, e.litInt = intType, v
	case tokUint:
		text := t.text
		base := 10
		if strings.HasPrefix(text, "0x") {
			base, text = 16, text[2:]
		}
		if neg {
			p.fail(t, "invalid uint literal")
		}
		if _, err := strconv.ParseUint(text, base, 64); err != nil {
			p.fail(t, "invalid uint literal")
		}
		e.lit = uintType
	case tokDouble:
		if _, err := strconv.ParseFloat(t.text, 64); err != nil {
			p.fail(t, "invalid double literal")
		}
		e.lit = doubleType
	case tokString:
		if neg {
			p.fail(t, "mismatched input '%s'", t.text)
		}
		e.lit, e.litStr = stringType, t.str
	case tokBytes:
		if neg {
			p.fail(t, "mismatched input '%s'", t.text)
		}
		e.lit, e.litStr = bytesType, t.str
	default:
		p.fail(t, "mismatched input '%s'", t.text)
	}
	return p.node(e)
}

// call builds a call, expanding the macros: has, all, exists, exists_one, map, filter, and
// the lists extension's sortBy.
func (p *parser) call(pos int, fn string, target *Expr, args []*Expr) *Expr {
	switch {
	case target == nil && fn == "has" && len(args) == 1:
		a := args[0]
		if a.kind != selectExpr {
			p.fail(token{pos: a.pos}, "invalid argument to has() macro")
		}
		a.testOnly = true
		return a
	case target != nil && len(args) == 2 && (fn == "all" || fn == "exists" || fn == "exists_one"):
		return p.quantifier(pos, fn, target, args)
	case target != nil && (fn == "map" && (len(args) == 2 || len(args) == 3) || fn == "filter" && len(args) == 2):
		return p.mapOrFilter(pos, fn, target, args)
	case target != nil && fn == "sortBy" && len(args) == 2:
		return p.sortBy(pos, target, args)
	}
	p.nodes++
	return &Expr{kind: callExpr, pos: pos, name: fn, target: target, args: args}
}

func (p *parser) iterVar(e *Expr, msg string) string {
	if e.kind != identExpr {
		p.fail(token{pos: e.pos}, "%s", msg)
	}
	if e.name == accumulator || e.name == "__result__" {
		p.fail(token{pos: e.pos}, "iteration variable overwrites accumulator variable")
	}
	// The identifier becomes the comprehension's variable, not a node of its own.
	p.nodes--
	return e.name
}

func (p *parser) accu(pos int) *Expr {
	return p.node(&Expr{kind: identExpr, pos: pos, name: accumulator})
}

func (p *parser) mk(pos int, fn string, args ...*Expr) *Expr {
	return p.node(&Expr{kind: callExpr, pos: pos, name: fn, args: args})
}

func (p *parser) lit(pos int, t *Type, b bool) *Expr {
	return p.node(&Expr{kind: literalExpr, pos: pos, lit: t, litBool: b})
}

func (p *parser) comprehension(pos int, rng *Expr, v, accu string, init, cond, step, result *Expr) *Expr {
	return p.node(&Expr{kind: comprehensionExpr, pos: pos, iterRange: rng, iterVar: v, accuVar: accu,
		accuInit: init, loopCond: cond, loopStep: step, result: result})
}

func (p *parser) quantifier(pos int, fn string, target *Expr, args []*Expr) *Expr {
	v := p.iterVar(args[0], "argument must be a simple name")
	var init, cond, step, result *Expr
	switch fn {
	case "all":
		init = p.lit(pos, boolType, true)
		cond = p.mk(pos, "@not_strictly_false", p.accu(pos))
		step = p.mk(pos, "_&&_", p.accu(pos), args[1])
		result = p.accu(pos)
	case "exists":
		init = p.lit(pos, boolType, false)
		cond = p.mk(pos, "@not_strictly_false", p.mk(pos, "!_", p.accu(pos)))
		step = p.mk(pos, "_||_", p.accu(pos), args[1])
		result = p.accu(pos)
	default:
		init = p.lit(pos, intType, false)
		cond = p.lit(pos, boolType, true)
		step = p.mk(pos, "_?_:_", args[1], p.mk(pos, "_+_", p.accu(pos), p.lit(pos, intType, false)), p.accu(pos))
		result = p.mk(pos, "_==_", p.accu(pos), p.lit(pos, intType, false))
	}
	return p.comprehension(pos, target, v, accumulator, init, cond, step, result)
}

func (p *parser) mapOrFilter(pos int, fn string, target *Expr, args []*Expr) *Expr {
	v := p.iterVar(args[0], "argument is not an identifier")
	var step *Expr
	switch {
	case fn == "filter":
		// The variable is read again as the element to keep.
		elem := p.node(&Expr{kind: identExpr, pos: args[0].pos, name: v})
		step = p.mk(pos, "_?_:_", args[1], p.mk(pos, "_+_", p.accu(pos), p.node(&Expr{kind: listExpr, pos: pos, args: []*Expr{elem}})), p.accu(pos))
	case len(args) == 3:
		step = p.mk(pos, "_?_:_", args[1], p.mk(pos, "_+_", p.accu(pos), p.node(&Expr{kind: listExpr, pos: pos, args: []*Expr{args[2]}})), p.accu(pos))
	default:
		step = p.mk(pos, "_+_", p.accu(pos), p.node(&Expr{kind: listExpr, pos: pos, args: []*Expr{args[1]}}))
	}
	init := p.node(&Expr{kind: listExpr, pos: pos})
	return p.comprehension(pos, target, v, accumulator, init, p.lit(pos, boolType, true), step, p.accu(pos))
}

// sortBy expands as the lists extension does: bind the list, map it to its keys, sort by them.
func (p *parser) sortBy(pos int, target *Expr, args []*Expr) *Expr {
	switch target.kind {
	case listExpr, selectExpr, identExpr, comprehensionExpr, callExpr:
	default:
		p.fail(token{pos: target.pos}, "sortBy can only be applied to a list, identifier, comprehension, call or select expression")
	}
	const input = "@__sortBy_input__"
	in := func() *Expr { return p.node(&Expr{kind: identExpr, pos: pos, name: input}) }
	keys := p.mapOrFilter(pos, "map", in(), args)
	p.nodes++
	call := &Expr{kind: callExpr, pos: pos, name: "@sortByAssociatedKeys", target: in(), args: []*Expr{keys}}
	return p.comprehension(pos, p.node(&Expr{kind: listExpr, pos: pos}), "#unused", input, target,
		p.lit(pos, boolType, false), in(), call)
}

// comprehensionNesting is the deepest nesting of comprehensions in e, not counting those
// whose range is a constant empty list (bindings, such as sortBy's).
func comprehensionNesting(e *Expr) int {
	if e == nil {
		return 0
	}
	deepest := 0
	for _, c := range e.children() {
		deepest = max(deepest, comprehensionNesting(c))
	}
	if e.kind == comprehensionExpr && !(e.iterRange.kind == listExpr && len(e.iterRange.args) == 0) {
		deepest++
	}
	return deepest
}

func (e *Expr) children() []*Expr {
	var out []*Expr
	if e.target != nil {
		out = append(out, e.target)
	}
	out = append(out, e.args...)
	out = append(out, e.vals...)
	if e.kind == comprehensionExpr {
		out = append(out, e.iterRange, e.accuInit, e.loopCond, e.loopStep, e.result)
	}
	return out
}
