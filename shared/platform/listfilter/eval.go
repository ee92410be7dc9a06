package listfilter

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Filter is a compiled filter expression.
type Filter struct {
	root node
	now  func() time.Time
}

// Compile parses a filter; the error is an *Error saying where it went wrong.
func Compile(src string) (*Filter, error) {
	n, err := parse(src)
	if err != nil {
		return nil, err
	}
	return &Filter{root: n, now: time.Now}, nil
}

// Match reports whether v (a resource's wire form) satisfies the filter. An expression that
// does not apply to v (comparing a string with a number, size of a boolean) does not match. Text
// members v's type omits when empty are "" to the filter (text.go).
func (f *Filter) Match(v any) (bool, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return false, err
	}
	var obj any
	if err := json.Unmarshal(b, &obj); err != nil {
		return false, err
	}
	if m, ok := obj.(map[string]any); ok {
		textOf(reflect.TypeOf(v)).fill(m)
	}
	now := f.now().UTC()
	res, ok := eval(f.root, obj, now)
	bv, isBool := res.(bool)
	return ok && isBool && bv, nil
}

// truth reports whether n evaluates to true; a type error or a non-boolean counts as false.
func truth(n node, obj any, now time.Time) bool {
	v, ok := eval(n, obj, now)
	b, _ := v.(bool)
	return ok && b
}

// eval returns the value of n; ok is false for a type error, which makes the filter not match.
func eval(n node, obj any, now time.Time) (any, bool) {
	switch n := n.(type) {
	case orNode:
		// The right side is evaluated only when the left is not true.
		if truth(n.l, obj, now) {
			return true, true
		}
		return truth(n.r, obj, now), true
	case andNode:
		if !truth(n.l, obj, now) {
			return false, true
		}
		return truth(n.r, obj, now), true
	case notNode:
		x, ok := eval(n.x, obj, now)
		b, isBool := x.(bool)
		return !b, ok && isBool
	case litNode:
		return n.v, true
	case listNode:
		out := make([]any, len(n.items))
		for i, it := range n.items {
			v, ok := eval(it, obj, now)
			if !ok {
				return nil, false
			}
			out[i] = v
		}
		return out, true
	case fieldNode:
		cur := obj
		for _, name := range n.path {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, true
			}
			cur = m[name]
		}
		return cur, true
	case sizeNode:
		x, ok := eval(n.x, obj, now)
		if !ok {
			return nil, false
		}
		switch x := x.(type) {
		case string:
			return float64(utf8.RuneCountInString(x)), true
		case []any:
			return float64(len(x)), true
		case map[string]any:
			return float64(len(x)), true
		}
		return nil, false
	case tsNode:
		t := now
		if n.arg != nil {
			t, _ = parseTime(n.arg.(litNode).v.(string))
		}
		return shifted(t, n.shift), true
	case fieldTSNode:
		x, _ := eval(n.field, obj, now)
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		t, err := parseTime(s)
		if err != nil {
			return nil, false
		}
		return shifted(t, n.shift), true
	case inNode:
		l, lok := eval(n.l, obj, now)
		r, rok := eval(n.r, obj, now)
		if !lok || !rok {
			return nil, false
		}
		switch r := r.(type) {
		case []any:
			for _, it := range r {
				if eq, ok := equal(l, it); ok && eq {
					return true, true
				}
			}
			return false, true
		case map[string]any:
			k, ok := l.(string)
			if !ok {
				return nil, false
			}
			_, has := r[k]
			return has, true
		}
		return nil, false
	case cmpNode:
		l, lok := eval(n.l, obj, now)
		r, rok := eval(n.r, obj, now)
		if !lok || !rok {
			return nil, false
		}
		return compare(n.op, l, r)
	}
	return nil, false
}

func shifted(t time.Time, ops []shiftOp) time.Time {
	for _, op := range ops {
		d, _ := parseDuration(op.dur)
		t = t.Add(time.Duration(op.sign) * d)
	}
	return t
}

// compare applies op; a string compared with a timestamp is read as RFC 3339 (created_at).
func compare(op string, l, r any) (any, bool) {
	l, r = asTimes(l, r)
	if op == "==" || op == "!=" {
		eq, ok := equal(l, r)
		if !ok {
			return nil, false
		}
		return eq == (op == "=="), true
	}
	c, ok := order(l, r)
	if !ok {
		return nil, false
	}
	switch op {
	case "<":
		return c < 0, true
	case "<=":
		return c <= 0, true
	case ">":
		return c > 0, true
	default:
		return c >= 0, true
	}
}

// asTimes reads a string operand as a timestamp when the other operand is one.
func asTimes(l, r any) (any, any) {
	_, lt := l.(time.Time)
	_, rt := r.(time.Time)
	if s, ok := l.(string); ok && rt {
		if t, err := parseTime(s); err == nil {
			l = t
		}
	}
	if s, ok := r.(string); ok && lt {
		if t, err := parseTime(s); err == nil {
			r = t
		}
	}
	return l, r
}

func equal(l, r any) (bool, bool) {
	if l == nil || r == nil {
		return l == nil && r == nil, true
	}
	switch l := l.(type) {
	case string:
		s, ok := r.(string)
		return l == s, ok
	case float64:
		f, ok := r.(float64)
		return l == f, ok
	case bool:
		b, ok := r.(bool)
		return l == b, ok
	case time.Time:
		t, ok := r.(time.Time)
		return l.Equal(t), ok
	}
	lb, _ := json.Marshal(l)
	rb, _ := json.Marshal(r)
	return string(lb) == string(rb), true
}

func order(l, r any) (int, bool) {
	switch l := l.(type) {
	case string:
		s, ok := r.(string)
		return strings.Compare(l, s), ok
	case float64:
		f, ok := r.(float64)
		switch {
		case !ok:
			return 0, false
		case l < f:
			return -1, true
		case l > f:
			return 1, true
		}
		return 0, true
	case time.Time:
		t, ok := r.(time.Time)
		return l.Compare(t), ok
	}
	return 0, false
}

func parseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339, s) }

// parseDuration reads Go durations plus a day unit ("7d", "1d12h").
func parseDuration(s string) (time.Duration, error) {
	bad := fmt.Errorf("%q is not a duration such as \"24h\", \"30m\" or \"7d\"", s)
	if s == "" {
		return 0, bad
	}
	var total time.Duration
	rest := s
	if i := strings.IndexByte(rest, 'd'); i > 0 {
		days, err := strconv.Atoi(rest[:i])
		if err != nil || days < 0 || days > 36500 {
			return 0, bad
		}
		total = time.Duration(days) * 24 * time.Hour
		rest = rest[i+1:]
	}
	if rest != "" {
		d, err := time.ParseDuration(rest)
		if err != nil {
			return 0, bad
		}
		total += d
	}
	return total, nil
}
