package celcheck

import (
	"fmt"
	"slices"
	"strconv"
)

// checkFormats validates each 'literal'.format([list literal]) as the strings extension does:
// every clause is known, has an argument of a type it formats, and every argument is used.
func checkFormats(e *Expr) error {
	for _, c := range e.children() {
		if err := checkFormats(c); err != nil {
			return err
		}
	}
	if e.kind != callExpr || e.name != "format" || e.target == nil || e.target.kind != literalExpr ||
		e.target.lit.kind != kindString || len(e.args) != 1 || e.args[0].kind != listExpr {
		return nil
	}
	if len(e.overloads) > 0 && !slices.Contains(e.overloads, "string_format") {
		return nil
	}
	f, args := e.target.litStr, e.args[0].args
	n := 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		if i+1 < len(f) && f[i+1] == '%' {
			i++
			continue
		}
		if i+1 >= len(f) {
			return fmt.Errorf("ERROR: <input>:1:%d: unexpected end of string", e.pos+1)
		}
		if n >= len(args) {
			return fmt.Errorf("ERROR: <input>:1:%d: index %d out of range", e.pos+1, n)
		}
		j := i + 1
		if f[j] == '.' {
			k := j + 1
			for k < len(f) && f[k] >= '0' && f[k] <= '9' {
				k++
			}
			if k >= len(f) {
				return fmt.Errorf("ERROR: <input>:1:%d: could not find end of precision specifier", e.pos+1)
			}
			p, err := strconv.Atoi(f[j+1 : k])
			if err != nil || p > 100 {
				return fmt.Errorf("ERROR: <input>:1:%d: invalid precision %q", e.pos+1, f[j+1:k])
			}
			j = k
		}
		var ok []kind
		switch f[j] {
		case 's':
		case 'd', 'f', 'e':
			ok = []kind{kindInt, kindUint, kindDouble}
		case 'b':
			ok = []kind{kindBool, kindInt, kindUint}
		case 'x', 'X':
			ok = []kind{kindInt, kindUint, kindString, kindBytes}
		case 'o':
			ok = []kind{kindInt, kindUint}
		default:
			return fmt.Errorf("ERROR: <input>:1:%d: unrecognized formatting clause %q", e.pos+1, f[j])
		}
		if t := args[n].typ; ok != nil && !isDyn(t) && !slices.Contains(ok, t.kind) {
			return fmt.Errorf("ERROR: <input>:1:%d: clause %%%c does not format %s", args[n].pos+1, f[j], t)
		}
		n++
		i = j
	}
	if len(args) > n {
		return fmt.Errorf("ERROR: <input>:1:%d: too many arguments supplied to string.format (expected %d, got %d)", e.pos+1, n, len(args))
	}
	return nil
}
