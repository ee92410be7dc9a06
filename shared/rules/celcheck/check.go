package celcheck

import (
	"fmt"
	"slices"
	"strings"
)

// Overload is one signature of a function: for a member function, Args[0] is the receiver.
type Overload struct {
	Name   string
	ID     string
	Member bool
	Args   []*Type
	Result *Type
}

// Env is what an expression may name: variables (and type identifiers) and functions.
type Env struct {
	idents map[string]*Type
	funcs  map[string][]Overload
}

// Extend returns a copy of e with more variables and overloads.
func (e *Env) Extend(vars map[string]*Type, overloads []Overload) *Env {
	n := &Env{idents: make(map[string]*Type, len(e.idents)+len(vars)), funcs: make(map[string][]Overload, len(e.funcs))}
	for k, v := range e.idents {
		n.idents[k] = v
	}
	for k, v := range vars {
		n.idents[k] = v
	}
	for k, v := range e.funcs {
		n.funcs[k] = v
	}
	for _, o := range overloads {
		n.funcs[o.Name] = append(n.funcs[o.Name][:len(n.funcs[o.Name]):len(n.funcs[o.Name])], o)
	}
	return n
}

// Provides says whether e has an overload of name, member or not, taking n arguments (the
// receiver aside).
func (e *Env) Provides(name string, member bool, n int) bool {
	if member {
		n++
	}
	for _, o := range e.funcs[name] {
		if o.Member == member && len(o.Args) == n {
			return true
		}
	}
	return false
}

type checker struct {
	env    *Env
	scopes []map[string]*Type // comprehension variables, innermost last
	m      mapping
	fresh  int
	err    error
}

// Check type-checks root in env, setting each node's type, and returns the expression's type.
func (e *Env) Check(root *Expr) (*Type, error) {
	c := &checker{env: e, m: mapping{}}
	c.check(root)
	if c.err != nil {
		return nil, c.err
	}
	var finish func(x *Expr)
	finish = func(x *Expr) {
		x.typ = substitute(c.m, x.typ, true)
		for _, ch := range x.children() {
			finish(ch)
		}
	}
	finish(root)
	if err := checkFormats(root); err != nil {
		return nil, err
	}
	return root.typ, nil
}

func (c *checker) fail(x *Expr, format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("ERROR: <input>:1:%d: "+format, append([]any{x.pos + 1}, args...)...)
	}
}

func (c *checker) check(x *Expr) {
	switch x.kind {
	case literalExpr:
		x.typ = x.lit
	case identExpr:
		c.checkIdent(x)
	case selectExpr:
		c.checkSelect(x)
	case callExpr:
		c.checkCall(x)
	case listExpr:
		var elem *Type
		for _, a := range x.args {
			c.check(a)
			elem = c.join(elem, a.typ)
		}
		if elem == nil {
			elem = c.newVar()
		}
		x.typ = ListOf(elem)
	case mapExpr:
		var k, v *Type
		for i := range x.args {
			c.check(x.args[i])
			k = c.join(k, x.args[i].typ)
			c.check(x.vals[i])
			v = c.join(v, x.vals[i].typ)
		}
		if k == nil {
			k, v = c.newVar(), c.newVar()
		}
		x.typ = MapOf(k, v)
	case structExpr:
		for _, a := range x.args {
			c.check(a)
		}
		c.fail(x, "undeclared reference to '%s' (in container '')", x.name)
		x.typ = errorType
	case comprehensionExpr:
		c.checkComprehension(x)
	}
}

func (c *checker) lookup(name string) *Type {
	for i := len(c.scopes) - 1; i >= 0; i-- {
		if t, ok := c.scopes[i][name]; ok {
			return t
		}
	}
	return c.env.idents[strings.TrimPrefix(name, ".")]
}

func (c *checker) checkIdent(x *Expr) {
	if t := c.lookup(x.name); t != nil {
		x.typ = t
		return
	}
	x.typ = errorType
	c.fail(x, "undeclared reference to '%s' (in container '')", x.name)
}

// qualified returns the dotted name of a chain of selects on an identifier.
func qualified(x *Expr) (string, bool) {
	switch x.kind {
	case identExpr:
		return x.name, true
	case selectExpr:
		if x.testOnly {
			return "", false
		}
		if q, ok := qualified(x.target); ok {
			return q + "." + x.name, true
		}
	}
	return "", false
}

func (c *checker) checkSelect(x *Expr) {
	// a.b.c may be a declared qualified name (google.protobuf.Timestamp), unless a is a
	// comprehension variable.
	if q, ok := qualified(x); ok {
		root, _, _ := strings.Cut(strings.TrimPrefix(q, "."), ".")
		local := false
		for _, s := range c.scopes {
			if _, ok := s[root]; ok {
				local = true
			}
		}
		if t, ok := c.env.idents[strings.TrimPrefix(q, ".")]; ok && !local {
			*x = Expr{kind: identExpr, pos: x.pos, name: q, typ: t}
			return
		}
	}
	c.check(x.target)
	operand := substitute(c.m, x.target.typ, false)
	result := dynType
	switch operand.kind {
	case kindMap:
		result = operand.params[1]
	case kindParam:
		c.assignable(dynType, operand)
	default:
		if !isDynOrError(operand) {
			c.fail(x, "type '%s' does not support field selection", operand)
		}
	}
	if x.testOnly {
		result = boolType
	}
	x.typ = substitute(c.m, result, false)
}

func (c *checker) checkCall(x *Expr) {
	for _, a := range x.args {
		c.check(a)
	}
	if x.target == nil {
		fns, ok := c.env.funcs[strings.TrimPrefix(x.name, ".")]
		if !ok {
			c.fail(x, "undeclared reference to '%s' (in container '')", x.name)
			x.typ = errorType
			return
		}
		c.resolve(x, fns, nil)
		return
	}
	// json.decode(…): a namespaced global function rather than a member call.
	if q, ok := qualified(x.target); ok {
		if fns, ok := c.env.funcs[strings.TrimPrefix(q, ".")+"."+x.name]; ok {
			x.name, x.target = strings.TrimPrefix(q, ".")+"."+x.name, nil
			c.resolve(x, fns, nil)
			return
		}
	}
	c.check(x.target)
	fns, ok := c.env.funcs[x.name]
	if !ok {
		x.typ = errorType
		c.fail(x, "undeclared reference to '%s' (in container '')", x.name)
		return
	}
	c.resolve(x, fns, x.target)
}

func (c *checker) resolve(x *Expr, fns []Overload, target *Expr) {
	var argTypes []*Type
	if target != nil {
		argTypes = append(argTypes, target.typ)
	}
	for _, a := range x.args {
		argTypes = append(argTypes, a.typ)
	}
	var result *Type
	x.overloads = x.overloads[:0]
	for _, o := range fns {
		if o.Member != (target != nil) {
			continue
		}
		if x.name == "_&&_" || x.name == "_||_" {
			for i, t := range argTypes {
				if !c.assignable(t, boolType) {
					c.fail(x.args[i], "expected type 'bool' but found '%s'", t)
					x.typ = errorType
					return
				}
			}
			x.overloads = append(x.overloads, o.ID)
			x.typ = boolType
			return
		}
		ft := &Type{kind: kindFunction, params: append([]*Type{o.Result}, o.Args...)}
		if subs := typeParams(ft, nil); len(subs) > 0 {
			m := mapping{}
			for _, p := range subs {
				m[p] = c.newVar()
			}
			ft = substitute(m, ft, false)
		}
		if c.assignableList(argTypes, ft.params[1:]) {
			x.overloads = append(x.overloads, o.ID)
			rt := substitute(c.m, ft.params[0], false)
			if result == nil {
				result = rt
			} else if !isDyn(result) && !rt.same(result) {
				result = dynType
			}
		}
	}
	if result == nil {
		shown := make([]string, len(argTypes))
		for i, t := range argTypes {
			shown[i] = substitute(c.m, t, true).String()
		}
		if target != nil {
			c.fail(x, "found no matching overload for '%s' applied to '%s.(%s)'", x.name, shown[0], strings.Join(shown[1:], ", "))
		} else {
			c.fail(x, "found no matching overload for '%s' applied to '(%s)'", x.name, strings.Join(shown, ", "))
		}
		x.typ = errorType
		return
	}
	x.typ = result
}

// typeParams lists the names of the type parameters in t.
func typeParams(t *Type, seen []string) []string {
	if t.kind == kindParam {
		for _, s := range seen {
			if s == t.name {
				return seen
			}
		}
		return append(seen, t.name)
	}
	for _, p := range t.params {
		seen = typeParams(p, seen)
	}
	return seen
}

func (c *checker) checkComprehension(x *Expr) {
	c.check(x.iterRange)
	c.check(x.accuInit)
	rng := substitute(c.m, x.iterRange.typ, false)
	accu := x.accuInit.typ
	c.scopes = append(c.scopes, map[string]*Type{x.accuVar: accu})
	var v *Type
	switch rng.kind {
	case kindList, kindMap:
		v = rng.params[0]
	case kindDyn, kindError, kindParam:
		c.assignable(dynType, rng)
		v = dynType
	default:
		c.fail(x.iterRange, "expression of type '%s' cannot be range of a comprehension (must be list, map, or dynamic)", rng)
		v = errorType
	}
	c.scopes = append(c.scopes, map[string]*Type{x.iterVar: v})
	c.check(x.loopCond)
	c.assertType(x.loopCond, boolType)
	c.check(x.loopStep)
	c.assertType(x.loopStep, accu)
	c.scopes = c.scopes[:len(c.scopes)-1]
	c.check(x.result)
	c.scopes = c.scopes[:len(c.scopes)-1]
	x.typ = substitute(c.m, x.result.typ, false)
}

func (c *checker) assertType(x *Expr, t *Type) {
	if !c.assignable(t, x.typ) {
		c.fail(x, "expected type '%s' but found '%s'", t, x.typ)
	}
}

// join is the type of a list's elements (or a map's keys or values) so far and one more: the
// more general when one is assignable to the other, else dyn.
func (c *checker) join(prev, cur *Type) *Type {
	if prev == nil {
		return cur
	}
	if c.assignable(prev, cur) {
		return mostGeneral(prev, cur)
	}
	return dynType
}

func (c *checker) newVar() *Type {
	t := param(fmt.Sprintf("_var%d", c.fresh))
	c.fresh++
	return t
}

func (c *checker) assignable(t1, t2 *Type) bool {
	m := c.m.copy()
	if assignable(m, t1, t2) {
		c.m = m
		return true
	}
	return false
}

func (c *checker) assignableList(l1, l2 []*Type) bool {
	m := c.m.copy()
	if assignableList(m, l1, l2) {
		c.m = m
		return true
	}
	return false
}

// Selects calls f, in pre-order, with the path of each select of e on an identifier: the
// identifier, then each member ("[]" for an index), such as [req headers [] x] for
// req.headers[0].x; it stops when f returns false.
func (e *Expr) Selects(f func(path []string) bool) bool {
	if e.kind == selectExpr {
		if path, ok := selectPath(e); ok && !f(path) {
			return false
		}
	}
	for _, c := range e.children() {
		if !c.Selects(f) {
			return false
		}
	}
	return true
}

func selectPath(x *Expr) ([]string, bool) {
	var rev []string
	for {
		switch {
		case x.kind == selectExpr:
			rev = append(rev, x.name)
			x = x.target
		case x.kind == callExpr && x.name == "_[_]" && x.target == nil && len(x.args) == 2:
			rev = append(rev, "[]")
			x = x.args[0]
		case x.kind == identExpr:
			rev = append(rev, x.name)
			slices.Reverse(rev)
			return rev, true
		default:
			return nil, false
		}
	}
}
