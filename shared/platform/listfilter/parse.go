package listfilter

import "fmt"

// node is a parsed expression.
type node interface{}

type (
	orNode  struct{ l, r node }
	andNode struct{ l, r node }
	notNode struct{ x node }
	cmpNode struct {
		op   string
		l, r node
	}
	inNode   struct{ l, r node }
	sizeNode struct{ x node }
	// fieldNode is obj.a.b…; an absent field is null.
	fieldNode struct{ path []string }
	litNode   struct{ v any } // string, float64, bool, nil
	listNode  struct{ items []node }
	// tsNode is timestamp("…") or timestamp(time.now), optionally shifted by add/subtract.
	tsNode struct {
		arg   node // litNode string, or nil for time.now
		shift []shiftOp
	}
	fieldTSNode struct {
		field fieldNode
		shift []shiftOp
	}
)

type shiftOp struct {
	sign int
	dur  string
}

type parser struct {
	toks []token
	i    int
}

// maxDepth bounds nesting so a hostile filter cannot exhaust the stack.
const maxDepth = 64

func parse(src string) (node, error) {
	if len(src) > 4096 {
		return nil, &Error{0, "filter is longer than 4096 bytes"}
	}
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	n, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, &Error{t.pos, fmt.Sprintf("unexpected %q", t.text)}
	}
	return n, nil
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}
func (p *parser) accept(op string) bool {
	if t := p.peek(); t.kind == tOp && t.text == op {
		p.i++
		return true
	}
	return false
}
func (p *parser) expect(op string) error {
	if !p.accept(op) {
		t := p.peek()
		return &Error{t.pos, fmt.Sprintf("expected %q", op)}
	}
	return nil
}

func (p *parser) or(d int) (node, error) {
	if d > maxDepth {
		return nil, &Error{p.peek().pos, "filter is nested too deeply"}
	}
	return p.binary(d, "||", p.and, func(l, r node) node { return orNode{l, r} })
}

func (p *parser) and(d int) (node, error) {
	return p.binary(d, "&&", p.unary, func(l, r node) node { return andNode{l, r} })
}

// binary parses operands joined by op, which associates to the left: join(join(a, b), c).
func (p *parser) binary(d int, op string, operand func(d int) (node, error), join func(l, r node) node) (node, error) {
	l, err := operand(d)
	if err != nil {
		return nil, err
	}
	for p.accept(op) {
		r, err := operand(d)
		if err != nil {
			return nil, err
		}
		l = join(l, r)
	}
	return l, nil
}

func (p *parser) unary(d int) (node, error) {
	if p.accept("!") {
		if d > maxDepth {
			return nil, &Error{p.peek().pos, "filter is nested too deeply"}
		}
		x, err := p.unary(d + 1)
		return notNode{x}, err
	}
	return p.relation(d)
}

func (p *parser) relation(d int) (node, error) {
	l, err := p.primary(d)
	if err != nil {
		return nil, err
	}
	t := p.peek()
	switch {
	case t.kind == tOp && (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == "<=" || t.text == ">" || t.text == ">="):
		p.next()
		r, err := p.primary(d)
		if err != nil {
			return nil, err
		}
		return cmpNode{t.text, l, r}, nil
	case t.kind == tIdent && t.text == "in":
		p.next()
		r, err := p.primary(d)
		if err != nil {
			return nil, err
		}
		return inNode{l, r}, nil
	}
	return l, nil
}

func (p *parser) primary(d int) (node, error) {
	t := p.next()
	switch t.kind {
	case tString:
		return litNode{t.text}, nil
	case tNumber:
		return litNode{t.num}, nil
	case tOp:
		switch t.text {
		case "(":
			n, err := p.or(d + 1)
			if err != nil {
				return nil, err
			}
			return n, p.expect(")")
		case "[":
			var items []node
			for !p.accept("]") {
				if len(items) > 0 {
					if err := p.expect(","); err != nil {
						return nil, err
					}
				}
				it, err := p.primary(d + 1)
				if err != nil {
					return nil, err
				}
				items = append(items, it)
			}
			return listNode{items}, nil
		}
	case tIdent:
		switch t.text {
		case "true", "false":
			return litNode{t.text == "true"}, nil
		case "null":
			return litNode{nil}, nil
		case "obj":
			return p.field(t)
		case "size":
			if err := p.expect("("); err != nil {
				return nil, err
			}
			x, err := p.or(d + 1)
			if err != nil {
				return nil, err
			}
			return sizeNode{x}, p.expect(")")
		case "timestamp":
			return p.timestamp()
		}
		return nil, &Error{t.pos, fmt.Sprintf("unknown name %q: filters refer to the resource as obj", t.text)}
	case tEOF:
		return nil, &Error{t.pos, "unexpected end of filter"}
	}
	return nil, &Error{t.pos, fmt.Sprintf("unexpected %q", t.text)}
}

// field parses obj.a.b, an optional .size(), and timestamp shifts on a field.
func (p *parser) field(start token) (node, error) {
	f := fieldNode{}
	for p.accept(".") {
		t := p.next()
		if t.kind != tIdent {
			return nil, &Error{t.pos, "expected a field name after '.'"}
		}
		if t.text == "size" && p.accept("(") {
			if err := p.expect(")"); err != nil {
				return nil, err
			}
			return sizeNode{f}, nil
		}
		if t.text == "add" || t.text == "subtract" {
			p.i -= 2 // hand the method back to shifts
			shift, err := p.shifts()
			return fieldTSNode{f, shift}, err
		}
		f.path = append(f.path, t.text)
	}
	if p.peek().kind == tOp && p.peek().text == "[" {
		return nil, &Error{p.peek().pos, "indexing is not supported"}
	}
	return f, nil
}

func (p *parser) timestamp() (node, error) {
	if err := p.expect("("); err != nil {
		return nil, err
	}
	var ts tsNode
	t := p.next()
	switch {
	case t.kind == tString:
		if _, err := parseTime(t.text); err != nil {
			return nil, &Error{t.pos, fmt.Sprintf("timestamp(%q) is not RFC 3339", t.text)}
		}
		ts.arg = litNode{t.text}
	case t.kind == tIdent && t.text == "time" && p.accept(".") && p.peek().text == "now":
		p.next()
	default:
		return nil, &Error{t.pos, `timestamp() takes an RFC 3339 string or time.now`}
	}
	if err := p.expect(")"); err != nil {
		return nil, err
	}
	shift, err := p.shifts()
	ts.shift = shift
	return ts, err
}

func (p *parser) shifts() ([]shiftOp, error) {
	var out []shiftOp
	for p.peek().kind == tOp && p.peek().text == "." {
		save := p.i
		p.next()
		m := p.next()
		if m.kind != tIdent || (m.text != "add" && m.text != "subtract") {
			p.i = save
			break
		}
		if err := p.expect("("); err != nil {
			return nil, err
		}
		a := p.next()
		if a.kind != tString {
			return nil, &Error{a.pos, m.text + `() takes a duration string such as "24h" or "7d"`}
		}
		if _, err := parseDuration(a.text); err != nil {
			return nil, &Error{a.pos, err.Error()}
		}
		if err := p.expect(")"); err != nil {
			return nil, err
		}
		sign := 1
		if m.text == "subtract" {
			sign = -1
		}
		out = append(out, shiftOp{sign, a.text})
	}
	return out, nil
}
