package stream

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"tunnelapi/shared/platform/derrors"
)

// Pattern is a compiled event pattern.
type Pattern struct {
	fields map[string]*Pattern // nested object patterns
	values []matcher           // leaf: the value at this field must satisfy one of these
	leaf   bool
}

// matcher tests one leaf value; present is false when the field is absent.
type matcher func(v any, present bool) bool

// ParsePattern compiles an EventBridge event pattern (a JSON object).
func ParsePattern(src string) (_ *Pattern, err error) {
	defer derrors.Wrap(&err, "stream.ParsePattern")
	var raw map[string]any
	d := json.NewDecoder(strings.NewReader(src))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil {
		return nil, err
	}
	if len(raw) == 0 {
		return nil, errors.New("empty")
	}
	return compileObject(raw, "")
}

func compileObject(raw map[string]any, path string) (*Pattern, error) {
	p := &Pattern{fields: map[string]*Pattern{}}
	for k, v := range raw {
		switch v := v.(type) {
		case map[string]any:
			sub, err := compileObject(v, path+"."+k)
			if err != nil {
				return nil, err
			}
			p.fields[k] = sub
		case []any:
			leaf, err := compileLeaf(v, path+"."+k)
			if err != nil {
				return nil, err
			}
			p.fields[k] = leaf
		default:
			return nil, fmt.Errorf("%s: want an object or an array, got %T", path+"."+k, v)
		}
	}
	return p, nil
}

func compileLeaf(alts []any, path string) (*Pattern, error) {
	if len(alts) == 0 {
		return nil, fmt.Errorf("%s: empty array", path)
	}
	p := &Pattern{leaf: true}
	for _, a := range alts {
		m, err := compileMatcher(a, path)
		if err != nil {
			return nil, err
		}
		p.values = append(p.values, m)
	}
	return p, nil
}

func compileMatcher(a any, path string) (matcher, error) {
	op, ok := a.(map[string]any)
	if !ok {
		if !scalar(a) {
			return nil, fmt.Errorf("%s: %v is not a value", path, a)
		}
		return func(v any, present bool) bool { return present && equal(v, a) }, nil
	}
	if len(op) != 1 {
		return nil, fmt.Errorf("%s: an operator object has exactly one key", path)
	}
	for name, arg := range op {
		switch name {
		case "prefix":
			s, ok := arg.(string)
			if !ok {
				return nil, fmt.Errorf("%s: prefix takes a string", path)
			}
			return func(v any, present bool) bool {
				str, ok := v.(string)
				return present && ok && strings.HasPrefix(str, s)
			}, nil
		case "exists":
			want, ok := arg.(bool)
			if !ok {
				return nil, fmt.Errorf("%s: exists takes a boolean", path)
			}
			return func(_ any, present bool) bool { return present == want }, nil
		case "anything-but":
			var excluded []any
			switch x := arg.(type) {
			case []any:
				excluded = x
			default:
				excluded = []any{x}
			}
			for _, e := range excluded {
				if !scalar(e) {
					return nil, fmt.Errorf("%s: anything-but takes values", path)
				}
			}
			return func(v any, present bool) bool {
				if !present {
					return false
				}
				for _, e := range excluded {
					if equal(v, e) {
						return false
					}
				}
				return true
			}, nil
		}
		ops := []string{"prefix", "exists", "anything-but"}
		sort.Strings(ops)
		return nil, fmt.Errorf("%s: operator %q is not supported (only %s)", path, name, strings.Join(ops, ", "))
	}
	panic("unreachable")
}

func scalar(v any) bool {
	switch v.(type) {
	case string, json.Number, bool, nil:
		return true
	}
	return false
}

// equal compares a record value with a pattern value; numbers compare by value.
func equal(v, want any) bool {
	switch w := want.(type) {
	case json.Number:
		wf, err := w.Float64()
		if err != nil {
			return false
		}
		switch x := v.(type) {
		case json.Number:
			xf, err := x.Float64()
			return err == nil && xf == wf
		case float64:
			return x == wf
		}
		return false
	default:
		return v == want
	}
}

// Match reports whether event (a decoded JSON object: maps, slices, strings, json.Number or
// float64, bools, nil) matches the pattern. As in EventBridge, a field whose value is an array
// matches when any of its elements does.
func (p *Pattern) Match(event any) bool {
	obj, _ := event.(map[string]any)
	for k, sub := range p.fields {
		v, present := obj[k]
		if sub.leaf {
			if !sub.matchLeaf(v, present) {
				return false
			}
			continue
		}
		if !present || !sub.Match(v) {
			return false
		}
	}
	return true
}

func (p *Pattern) matchLeaf(v any, present bool) bool {
	if arr, ok := v.([]any); ok && present {
		for _, x := range arr {
			if p.matchLeaf(x, true) {
				return true
			}
		}
		return false
	}
	for _, m := range p.values {
		if m(v, present) {
			return true
		}
	}
	return false
}
