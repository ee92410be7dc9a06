package fakedb

import (
	"bytes"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"unicode"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/platform/derrors"
)

// The expression language is the subset the SDK's expression builder produces: conditions with
// AND, OR, NOT, comparisons, BETWEEN, IN, attribute_exists, attribute_not_exists, contains,
// begins_with and size; updates with SET (values, + and -, if_not_exists, list_append), ADD,
// REMOVE and DELETE; projections of top-level names.

type item = map[string]types.AttributeValue

type tokens struct {
	toks  []string
	pos   int
	names map[string]string
	vals  map[string]types.AttributeValue
}

func lex(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		c := rune(s[i])
		switch {
		case unicode.IsSpace(c):
			i++
		case strings.ContainsRune("(),[].+-", c):
			out = append(out, string(c))
			i++
		case c == '<' || c == '>' || c == '=':
			if i+1 < len(s) && (s[i+1] == '=' || c == '<' && s[i+1] == '>') {
				out = append(out, s[i:i+2])
				i += 2
			} else {
				out = append(out, string(c))
				i++
			}
		default:
			j := i
			for j < len(s) && !unicode.IsSpace(rune(s[j])) && !strings.ContainsRune("(),[].+-<>=", rune(s[j])) {
				j++
			}
			out = append(out, s[i:j])
			i = j
		}
	}
	return out
}

func newTokens(s string, names map[string]string, vals map[string]types.AttributeValue) *tokens {
	return &tokens{toks: lex(s), names: names, vals: vals}
}

func (t *tokens) peek() string {
	if t.pos < len(t.toks) {
		return t.toks[t.pos]
	}
	return ""
}

func (t *tokens) next() string { s := t.peek(); t.pos++; return s }

func (t *tokens) expect(s string) error {
	if got := t.next(); got != s {
		return fmt.Errorf("want %q, got %q at token %d of %v", s, got, t.pos-1, t.toks)
	}
	return nil
}

func (t *tokens) keyword(k string) bool {
	if strings.EqualFold(t.peek(), k) {
		t.pos++
		return true
	}
	return false
}

// evalCondition reports whether it satisfies the condition expression src.
func evalCondition(src string, names map[string]string, vals map[string]types.AttributeValue, it item) (_ bool, err error) {
	defer derrors.Wrap(&err, "fakedb.evalCondition(%s)", src)
	if src == "" {
		return true, nil
	}
	t := newTokens(src, names, vals)
	ok, err := t.or(it)
	if err == nil && t.pos != len(t.toks) {
		err = fmt.Errorf("trailing %v", t.toks[t.pos:])
	}
	return ok, err
}

func (t *tokens) or(it item) (bool, error) {
	return t.chain(it, "OR", t.and, func(a, b bool) bool { return a || b })
}

func (t *tokens) and(it item) (bool, error) {
	return t.chain(it, "AND", t.not, func(a, b bool) bool { return a && b })
}

// chain reads operands joined by keyword kw and combines their values with join.
func (t *tokens) chain(it item, kw string, operand func(item) (bool, error), join func(a, b bool) bool) (bool, error) {
	v, err := operand(it)
	for err == nil && t.keyword(kw) {
		var w bool
		w, err = operand(it)
		v = join(v, w)
	}
	return v, err
}

func (t *tokens) not(it item) (bool, error) {
	if t.keyword("NOT") {
		v, err := t.not(it)
		return !v, err
	}
	return t.primary(it)
}

// call reads a function's name, its opening parenthesis and its first argument, a path.
func (t *tokens) call() ([]pathElem, error) {
	t.next()
	if err := t.expect("("); err != nil {
		return nil, err
	}
	return t.path()
}

func (t *tokens) primary(it item) (bool, error) {
	if t.peek() == "(" {
		t.next()
		v, err := t.or(it)
		if err != nil {
			return false, err
		}
		return v, t.expect(")")
	}
	switch fn := strings.ToLower(t.peek()); fn {
	case "attribute_exists", "attribute_not_exists", "contains", "begins_with", "attribute_type":
		p, err := t.call()
		if err != nil {
			return false, err
		}
		got := get(it, p)
		var arg types.AttributeValue
		if fn != "attribute_exists" && fn != "attribute_not_exists" {
			if err := t.expect(","); err != nil {
				return false, err
			}
			if arg, err = t.operand(it); err != nil {
				return false, err
			}
		}
		if err := t.expect(")"); err != nil {
			return false, err
		}
		switch fn {
		case "attribute_exists":
			return got != nil, nil
		case "attribute_not_exists":
			return got == nil, nil
		case "contains":
			return contains(got, arg), nil
		case "begins_with":
			g, ok1 := got.(*types.AttributeValueMemberS)
			a, ok2 := arg.(*types.AttributeValueMemberS)
			return ok1 && ok2 && strings.HasPrefix(g.Value, a.Value), nil
		default:
			return false, fmt.Errorf("%s is not supported", fn)
		}
	}
	left, err := t.operand(it)
	if err != nil {
		return false, err
	}
	switch op := strings.ToUpper(t.next()); op {
	case "=", "<>", "<", "<=", ">", ">=":
		right, err := t.operand(it)
		if err != nil {
			return false, err
		}
		return compare(op, left, right), nil
	case "BETWEEN":
		lo, hi, err := t.operands(it, "AND")
		if err != nil {
			return false, err
		}
		return compare(">=", left, lo) && compare("<=", left, hi), nil
	case "IN":
		if err := t.expect("("); err != nil {
			return false, err
		}
		found := false
		for {
			v, err := t.operand(it)
			if err != nil {
				return false, err
			}
			found = found || compare("=", left, v)
			if t.peek() != "," {
				break
			}
			t.next()
		}
		return found, t.expect(")")
	default:
		return false, fmt.Errorf("unexpected %q in %v", op, t.toks)
	}
}

// operand is a value placeholder, size(path) or a path (nil when the attribute is absent).
func (t *tokens) operand(it item) (types.AttributeValue, error) {
	tok := t.peek()
	switch {
	case strings.HasPrefix(tok, ":"):
		t.next()
		v, ok := t.vals[tok]
		if !ok {
			return nil, fmt.Errorf("no value for %s", tok)
		}
		return v, nil
	case strings.EqualFold(tok, "size"):
		p, err := t.call()
		if err != nil {
			return nil, err
		}
		if err := t.expect(")"); err != nil {
			return nil, err
		}
		n, ok := size(get(it, p))
		if !ok {
			return nil, nil
		}
		return &types.AttributeValueMemberN{Value: fmt.Sprint(n)}, nil
	}
	p, err := t.path()
	if err != nil {
		return nil, err
	}
	return get(it, p), nil
}

// operands reads two operands separated by sep.
func (t *tokens) operands(it item, sep string) (a, b types.AttributeValue, err error) {
	if a, err = t.operand(it); err != nil {
		return nil, nil, err
	}
	if err = t.expect(sep); err != nil {
		return nil, nil, err
	}
	b, err = t.operand(it)
	return a, b, err
}

// pathElem is a map member name or, when name is "", a list index.
type pathElem struct {
	name  string
	index int
}

func (t *tokens) path() ([]pathElem, error) {
	var p []pathElem
	name, err := t.name()
	if err != nil {
		return nil, err
	}
	p = append(p, pathElem{name: name})
	for {
		switch t.peek() {
		case ".":
			t.next()
			n, err := t.name()
			if err != nil {
				return nil, err
			}
			p = append(p, pathElem{name: n})
		case "[":
			t.next()
			var i int
			if _, err := fmt.Sscan(t.next(), &i); err != nil {
				return nil, fmt.Errorf("bad index: %w", err)
			}
			p = append(p, pathElem{index: i})
			if err := t.expect("]"); err != nil {
				return nil, err
			}
		default:
			return p, nil
		}
	}
}

func (t *tokens) name() (string, error) {
	tok := t.next()
	if strings.HasPrefix(tok, "#") {
		n, ok := t.names[tok]
		if !ok {
			return "", fmt.Errorf("no name for %s", tok)
		}
		return n, nil
	}
	if tok == "" || strings.ContainsAny(tok[:1], "():,=<>") {
		return "", fmt.Errorf("want a name, got %q", tok)
	}
	return tok, nil
}

func get(it item, p []pathElem) types.AttributeValue {
	var cur types.AttributeValue = &types.AttributeValueMemberM{Value: it}
	for _, e := range p {
		switch c := cur.(type) {
		case *types.AttributeValueMemberM:
			if e.name == "" {
				return nil
			}
			cur = c.Value[e.name]
		case *types.AttributeValueMemberL:
			if e.name != "" || e.index < 0 || e.index >= len(c.Value) {
				return nil
			}
			cur = c.Value[e.index]
		default:
			return nil
		}
		if cur == nil {
			return nil
		}
	}
	return cur
}

// size is DynamoDB's size(): the length of a string, binary, set, list or map.
func size(v types.AttributeValue) (int, bool) {
	switch v.(type) {
	case *types.AttributeValueMemberS, *types.AttributeValueMemberB, *types.AttributeValueMemberSS, *types.AttributeValueMemberNS,
		*types.AttributeValueMemberBS, *types.AttributeValueMemberL, *types.AttributeValueMemberM:
		// Each of these holds its content in Value: a string, a slice or a map.
		return reflect.ValueOf(v).Elem().FieldByName("Value").Len(), true
	}
	return 0, false
}

func contains(got, arg types.AttributeValue) bool {
	switch g := got.(type) {
	case *types.AttributeValueMemberS:
		a, ok := arg.(*types.AttributeValueMemberS)
		return ok && strings.Contains(g.Value, a.Value)
	case *types.AttributeValueMemberSS:
		a, ok := arg.(*types.AttributeValueMemberS)
		return ok && slices.Contains(g.Value, a.Value)
	case *types.AttributeValueMemberNS:
		a, ok := arg.(*types.AttributeValueMemberN)
		return ok && slices.ContainsFunc(g.Value, func(n string) bool { return numCmp(n, a.Value) == 0 })
	case *types.AttributeValueMemberBS:
		a, ok := arg.(*types.AttributeValueMemberB)
		return ok && slices.ContainsFunc(g.Value, func(b []byte) bool { return bytes.Equal(b, a.Value) })
	case *types.AttributeValueMemberL:
		return slices.ContainsFunc(g.Value, func(v types.AttributeValue) bool { return equal(v, arg) })
	}
	return false
}

func num(s string) *big.Float {
	f, _, err := big.ParseFloat(s, 10, 200, big.ToNearestEven)
	if err != nil {
		return new(big.Float)
	}
	return f
}

func numCmp(a, b string) int { return num(a).Cmp(num(b)) }

// compare applies op; values of different types (or absent ones) compare false except for <>.
func compare(op string, a, b types.AttributeValue) bool {
	if op == "=" {
		return equal(a, b)
	}
	if op == "<>" {
		return !equal(a, b)
	}
	var c int
	switch x := a.(type) {
	case *types.AttributeValueMemberN:
		y, ok := b.(*types.AttributeValueMemberN)
		if !ok {
			return false
		}
		c = numCmp(x.Value, y.Value)
	case *types.AttributeValueMemberS:
		y, ok := b.(*types.AttributeValueMemberS)
		if !ok {
			return false
		}
		c = strings.Compare(x.Value, y.Value)
	case *types.AttributeValueMemberB:
		y, ok := b.(*types.AttributeValueMemberB)
		if !ok {
			return false
		}
		c = bytes.Compare(x.Value, y.Value)
	default:
		return false
	}
	switch op {
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	default:
		return c >= 0
	}
}

func equal(a, b types.AttributeValue) bool {
	switch x := a.(type) {
	case nil:
		return false
	case *types.AttributeValueMemberS:
		y, ok := b.(*types.AttributeValueMemberS)
		return ok && x.Value == y.Value
	case *types.AttributeValueMemberN:
		y, ok := b.(*types.AttributeValueMemberN)
		return ok && numCmp(x.Value, y.Value) == 0
	case *types.AttributeValueMemberB:
		y, ok := b.(*types.AttributeValueMemberB)
		return ok && bytes.Equal(x.Value, y.Value)
	case *types.AttributeValueMemberBOOL:
		y, ok := b.(*types.AttributeValueMemberBOOL)
		return ok && x.Value == y.Value
	case *types.AttributeValueMemberNULL:
		_, ok := b.(*types.AttributeValueMemberNULL)
		return ok
	case *types.AttributeValueMemberSS:
		y, ok := b.(*types.AttributeValueMemberSS)
		return ok && sameSet(x.Value, y.Value)
	case *types.AttributeValueMemberNS:
		y, ok := b.(*types.AttributeValueMemberNS)
		return ok && len(x.Value) == len(y.Value) && !slices.ContainsFunc(x.Value, func(n string) bool {
			return !contains(y, &types.AttributeValueMemberN{Value: n})
		})
	case *types.AttributeValueMemberBS:
		y, ok := b.(*types.AttributeValueMemberBS)
		return ok && len(x.Value) == len(y.Value) && !slices.ContainsFunc(x.Value, func(v []byte) bool {
			return !contains(y, &types.AttributeValueMemberB{Value: v})
		})
	case *types.AttributeValueMemberL:
		y, ok := b.(*types.AttributeValueMemberL)
		return ok && slices.EqualFunc(x.Value, y.Value, equal)
	case *types.AttributeValueMemberM:
		y, ok := b.(*types.AttributeValueMemberM)
		if !ok || len(x.Value) != len(y.Value) {
			return false
		}
		for k, v := range x.Value {
			if !equal(v, y.Value[k]) {
				return false
			}
		}
		return true
	}
	return false
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	return true
}

// applyUpdate applies the update expression src to it (a copy the caller owns).
func applyUpdate(src string, names map[string]string, vals map[string]types.AttributeValue, it item) (err error) {
	defer derrors.Wrap(&err, "fakedb.applyUpdate(%s)", src)
	t := newTokens(src, names, vals)
	orig := clone(it) // every operand reads the item as it was before the update
	for t.pos < len(t.toks) {
		clause := strings.ToUpper(t.next())
		for {
			p, err := t.path()
			if err != nil {
				return err
			}
			switch clause {
			case "SET":
				if err := t.expect("="); err != nil {
					return err
				}
				v, err := t.setValue(orig)
				if err != nil {
					return err
				}
				if err := put(it, p, v); err != nil {
					return err
				}
			case "REMOVE":
				remove(it, p)
			case "ADD", "DELETE":
				arg, err := t.operand(orig)
				if err != nil {
					return err
				}
				v, err := addOrDelete(clause, get(orig, p), arg)
				if err != nil {
					return err
				}
				if v == nil {
					remove(it, p)
				} else if err := put(it, p, v); err != nil {
					return err
				}
			default:
				return fmt.Errorf("unknown clause %q", clause)
			}
			if t.peek() != "," {
				break
			}
			t.next()
		}
	}
	return nil
}

func (t *tokens) setValue(orig item) (types.AttributeValue, error) {
	v, err := t.setTerm(orig)
	if err != nil {
		return nil, err
	}
	for t.peek() == "+" || t.peek() == "-" {
		op := t.next()
		w, err := t.setTerm(orig)
		if err != nil {
			return nil, err
		}
		x, ok1 := v.(*types.AttributeValueMemberN)
		y, ok2 := w.(*types.AttributeValueMemberN)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("%s needs numbers", op)
		}
		r := num(x.Value)
		if op == "+" {
			r.Add(r, num(y.Value))
		} else {
			r.Sub(r, num(y.Value))
		}
		v = &types.AttributeValueMemberN{Value: r.Text('f', -1)}
	}
	return v, nil
}

func (t *tokens) setTerm(orig item) (types.AttributeValue, error) {
	switch fn := strings.ToLower(t.peek()); fn {
	case "if_not_exists", "list_append":
		t.next()
		if err := t.expect("("); err != nil {
			return nil, err
		}
		a, b, err := t.operands(orig, ",")
		if err != nil {
			return nil, err
		}
		if err := t.expect(")"); err != nil {
			return nil, err
		}
		if fn == "if_not_exists" {
			if a != nil {
				return a, nil
			}
			return b, nil
		}
		x, ok1 := a.(*types.AttributeValueMemberL)
		y, ok2 := b.(*types.AttributeValueMemberL)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("list_append needs lists")
		}
		return &types.AttributeValueMemberL{Value: append(slices.Clone(x.Value), y.Value...)}, nil
	}
	v, err := t.operand(orig)
	if err == nil && v == nil {
		err = fmt.Errorf("SET reads an absent attribute")
	}
	return v, err
}

func addOrDelete(clause string, cur, arg types.AttributeValue) (types.AttributeValue, error) {
	switch a := arg.(type) {
	case *types.AttributeValueMemberN:
		if clause != "ADD" {
			return nil, fmt.Errorf("DELETE needs a set")
		}
		r := num(a.Value)
		if c, ok := cur.(*types.AttributeValueMemberN); ok {
			r.Add(r, num(c.Value))
		} else if cur != nil {
			return nil, fmt.Errorf("ADD of a number to a non-number")
		}
		return &types.AttributeValueMemberN{Value: r.Text('f', -1)}, nil
	case *types.AttributeValueMemberSS, *types.AttributeValueMemberNS:
		_, numbers := arg.(*types.AttributeValueMemberNS)
		if cur != nil && reflect.TypeOf(cur) != reflect.TypeOf(arg) {
			return nil, fmt.Errorf("%s of a set to an attribute of another type", clause)
		}
		same := func(h, s string) bool { return h == s }
		if numbers {
			same = func(h, s string) bool { return numCmp(h, s) == 0 }
		}
		have := applySet(clause, setMembers(cur), setMembers(arg), same)
		switch {
		case len(have) == 0:
			return nil, nil // DynamoDB removes an empty set
		case numbers:
			return &types.AttributeValueMemberNS{Value: have}, nil
		}
		return &types.AttributeValueMemberSS{Value: have}, nil
	}
	return nil, fmt.Errorf("%s of %T is not supported", clause, arg)
}

// applySet returns the members of have after ADD or DELETE (clause) of the members of arg;
// same says when two members are equal.
func applySet(clause string, have, arg []string, same func(h, s string) bool) []string {
	have = slices.Clone(have)
	for _, s := range arg {
		i := slices.IndexFunc(have, func(h string) bool { return same(h, s) })
		switch {
		case clause == "ADD" && i < 0:
			have = append(have, s)
		case clause == "DELETE" && i >= 0:
			have = slices.Delete(have, i, i+1)
		}
	}
	return have
}

// setMembers returns the members of a string or number set; nil for anything else.
func setMembers(v types.AttributeValue) []string {
	switch v := v.(type) {
	case *types.AttributeValueMemberSS:
		return v.Value
	case *types.AttributeValueMemberNS:
		return v.Value
	}
	return nil
}

func put(it item, p []pathElem, v types.AttributeValue) error {
	if len(p) == 1 {
		it[p[0].name] = v
		return nil
	}
	parent := get(it, p[:len(p)-1])
	last := p[len(p)-1]
	switch c := parent.(type) {
	case *types.AttributeValueMemberM:
		c.Value[last.name] = v
	case *types.AttributeValueMemberL:
		if last.index < len(c.Value) {
			c.Value[last.index] = v
		} else {
			c.Value = append(c.Value, v)
		}
	default:
		return fmt.Errorf("the parent of %v does not exist", p)
	}
	return nil
}

func remove(it item, p []pathElem) {
	if len(p) == 1 {
		delete(it, p[0].name)
		return
	}
	switch c := get(it, p[:len(p)-1]).(type) {
	case *types.AttributeValueMemberM:
		delete(c.Value, p[len(p)-1].name)
	case *types.AttributeValueMemberL:
		if i := p[len(p)-1].index; i < len(c.Value) {
			c.Value = slices.Delete(c.Value, i, i+1)
		}
	}
}

// project keeps the top-level attributes the projection expression names.
func project(src string, names map[string]string, it item) (_ item, err error) {
	defer derrors.Wrap(&err, "fakedb.project(%s)", src)
	if src == "" || it == nil {
		return it, nil
	}
	t := newTokens(src, names, nil)
	out := item{}
	for {
		p, err := t.path()
		if err != nil {
			return nil, err
		}
		if v, ok := it[p[0].name]; ok {
			out[p[0].name] = v
		}
		if t.peek() != "," {
			return out, nil
		}
		t.next()
	}
}

// clone deep-copies an item, so what a caller holds never aliases the table.
func clone(it item) item {
	if it == nil {
		return nil
	}
	out := make(item, len(it))
	for k, v := range it {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v types.AttributeValue) types.AttributeValue {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return &types.AttributeValueMemberS{Value: v.Value}
	case *types.AttributeValueMemberN:
		return &types.AttributeValueMemberN{Value: v.Value}
	case *types.AttributeValueMemberB:
		return &types.AttributeValueMemberB{Value: bytes.Clone(v.Value)}
	case *types.AttributeValueMemberBOOL:
		return &types.AttributeValueMemberBOOL{Value: v.Value}
	case *types.AttributeValueMemberNULL:
		return &types.AttributeValueMemberNULL{Value: v.Value}
	case *types.AttributeValueMemberSS:
		return &types.AttributeValueMemberSS{Value: slices.Clone(v.Value)}
	case *types.AttributeValueMemberNS:
		return &types.AttributeValueMemberNS{Value: slices.Clone(v.Value)}
	case *types.AttributeValueMemberBS:
		bs := make([][]byte, len(v.Value))
		for i, b := range v.Value {
			bs[i] = bytes.Clone(b)
		}
		return &types.AttributeValueMemberBS{Value: bs}
	case *types.AttributeValueMemberL:
		l := make([]types.AttributeValue, len(v.Value))
		for i, e := range v.Value {
			l[i] = cloneValue(e)
		}
		return &types.AttributeValueMemberL{Value: l}
	case *types.AttributeValueMemberM:
		return &types.AttributeValueMemberM{Value: clone(v.Value)}
	}
	return v
}
