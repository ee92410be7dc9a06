package celcheck

import (
	"math"
	"strings"
	"unicode/utf8"
)

// CallCost estimates one overload's cost from the sizes of its receiver (0 without one) and
// arguments, returning the call's own cost and its result's size (0 when unknown).
type CallCost func(target uint64, args []uint64) (cost, size uint64)

// Costs are the estimator's inputs: the size of any value whose size the expression does not
// show (variables, and results of calls of unknown size), and overloads' own estimates.
type Costs struct {
	Unknown   uint64
	Overloads map[string]CallCost
}

// Cost is the upper bound of the checked expression's evaluation cost, in cel-go's units and
// by its estimator's rules (a member of a variable costs nothing, an identifier 1, a function 1
// plus what it traverses, a comprehension its step and condition times its range's size).
func Cost(root *Expr, c Costs) uint64 {
	k := &coster{Costs: c, sizes: map[*Expr]uint64{}, vars: map[string][]uint64{}}
	return k.cost(root)
}

type coster struct {
	Costs
	sizes map[*Expr]uint64 // the computed sizes of call results and comprehensions
	vars  map[string][]uint64
}

func add(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}

func mul(a, b uint64) uint64 {
	if b != 0 && a > math.MaxUint64/b {
		return math.MaxUint64
	}
	return a * b
}

func factor(a uint64, f float64) uint64 {
	x := float64(a)
	if x > 0 && x > math.MaxUint64/f {
		return math.MaxUint64
	}
	c := math.Ceil(x * f)
	if c >= 18446744073709551616.0 {
		return math.MaxUint64
	}
	return uint64(c)
}

const (
	traversal = 0.1  // cost per character traversed
	regexUnit = 0.25 // cost per character of a regular expression
)

// size is the largest size e may have.
func (k *coster) size(e *Expr) uint64 {
	if s, ok := k.sizes[e]; ok {
		return s
	}
	switch e.kind {
	case literalExpr:
		switch e.lit.kind {
		case kindString:
			return uint64(utf8.RuneCountInString(e.litStr))
		case kindBytes:
			return uint64(len(e.litStr))
		}
		return 1
	case listExpr, mapExpr:
		return uint64(len(e.args))
	}
	return k.Unknown
}

func (k *coster) cost(e *Expr) uint64 {
	switch e.kind {
	case identExpr:
		return 1
	case selectExpr:
		c := k.cost(e.target)
		if e.testOnly {
			return add(c, 1)
		}
		switch e.target.typ.kind {
		case kindMap, kindParam:
			c = add(c, 1)
		}
		return c
	case callExpr:
		return k.call(e)
	case listExpr:
		c := uint64(10)
		for _, a := range e.args {
			c = add(c, k.cost(a))
		}
		return c
	case mapExpr:
		c := uint64(30)
		for i := range e.args {
			c = add(add(c, k.cost(e.args[i])), k.cost(e.vals[i]))
		}
		return c
	case structExpr:
		c := uint64(40)
		for _, a := range e.args {
			c = add(c, k.cost(a))
		}
		return c
	case comprehensionExpr:
		c := add(k.cost(e.iterRange), k.cost(e.accuInit))
		if e.iterRange.kind == listExpr && len(e.iterRange.args) == 0 && e.loopCond.kind == literalExpr &&
			e.loopCond.lit.kind == kindBool && !e.loopCond.litBool && e.accuVar != "__result__" {
			// a binding (sortBy's): the result once
			c = add(c, k.cost(e.result))
			k.sizes[e] = k.size(e.result)
			return c
		}
		loop := add(k.cost(e.loopCond), k.cost(e.loopStep))
		c = add(c, k.cost(e.result))
		n := k.size(e.iterRange)
		c = add(c, mul(n, loop))
		switch e.accuInit.kind {
		case literalExpr:
			k.sizes[e] = k.size(e.accuInit)
		case listExpr, mapExpr:
			k.sizes[e] = n
		}
		return c
	}
	return 0
}

func (k *coster) call(e *Expr) uint64 {
	if e.name == "dyn" && e.target == nil && len(e.args) == 1 {
		c := add(1, k.cost(e.args[0]))
		if s, ok := k.sizes[e.args[0]]; ok {
			k.sizes[e] = s
		}
		return c
	}
	argCosts := make([]uint64, len(e.args))
	var sum uint64
	for i, a := range e.args {
		argCosts[i] = k.cost(a)
		sum = add(sum, argCosts[i])
	}
	if len(e.overloads) == 0 {
		return 0
	}
	var c uint64
	if e.target != nil {
		c = k.cost(e.target)
	}
	// As cel-go does: the union of the overloads' result sizes, where one of unknown size
	// before any of known size counts as unknown.
	var fn, size uint64
	sized := false
	for _, id := range e.overloads {
		oc, os, ok := k.overload(e, id, argCosts, sum)
		fn = max(fn, oc)
		switch {
		case ok && sized:
			size = max(size, os)
		case ok:
			size, sized = os, true
		case !sized:
			size, sized = k.Unknown, true
		}
	}
	k.sizes[e] = size
	return add(c, fn)
}

// overload is one overload's cost, arguments included, and its result's size when known.
func (k *coster) overload(e *Expr, id string, argCosts []uint64, sum uint64) (uint64, uint64, bool) {
	if est, ok := k.Overloads[id]; ok {
		var target uint64
		if e.target != nil {
			target = k.size(e.target)
		}
		sizes := make([]uint64, len(e.args))
		for i, a := range e.args {
			sizes[i] = k.size(a)
		}
		c, s := est(target, sizes)
		return add(c, sum), s, s != 0
	}
	if est, ok := extCosts[id]; ok && (e.target != nil || id == "lists_range" || id == "base64_encode_bytes" || id == "base64_decode_string") {
		c, s := est(k, e)
		if s == unknownSize {
			return add(c, sum), 0, false
		}
		return add(c, sum), s, true
	}
	args := e.args
	switch {
	case id == "string_format" && e.target != nil:
		return add(factor(k.size(e.target), traversal), sum), 0, false
	case id == "string_to_bytes" && len(args) == 1:
		s := k.size(args[0])
		return add(factor(s, traversal), sum), mul(s, 4), true
	case id == "bytes_to_string" && len(args) == 1:
		s := k.size(args[0])
		return add(factor(s, traversal), sum), s, true
	case id == "strings_quote" && len(args) == 1:
		s := k.size(args[0])
		return add(factor(s, traversal), sum), add(mul(s, 2), 2), true
	case (id == "starts_with_string" || id == "ends_with_string") && len(args) == 1:
		return add(factor(k.size(args[0]), traversal), sum), 0, false
	case id == "in_list" && len(args) == 2:
		return add(k.size(args[1]), sum), 0, false
	case id == "matches" && e.target == nil && len(args) == 2, id == "matches_string" && e.target != nil && len(args) == 1:
		str, re := args[0], args[len(args)-1]
		if e.target != nil {
			str = e.target
		}
		return add(mul(factor(add(k.size(str), 1), traversal), factor(k.size(re), regexUnit)), sum), 0, false
	case id == "contains_string" && e.target != nil && len(args) == 1:
		return add(mul(factor(k.size(e.target), traversal), factor(k.size(args[0]), traversal)), sum), 0, false
	case id == "logical_or" || id == "logical_and":
		return add(argCosts[0], argCosts[1]), 0, false
	case id == "conditional":
		s := max(k.size(args[1]), k.size(args[2]))
		return add(argCosts[0], max(argCosts[1], argCosts[2])), s, true
	case (id == "add_string" || id == "add_bytes" || id == "add_list") && len(args) == 2:
		s := add(k.size(args[0]), k.size(args[1]))
		if id == "add_list" {
			return add(1, sum), s, true
		}
		return add(factor(s, traversal), sum), s, true
	case isComparison(id) && len(args) == 2:
		return add(factor(min(k.size(args[0]), k.size(args[1])), traversal), sum), 0, false
	}
	return add(1, sum), 0, false
}

func isComparison(id string) bool {
	switch id {
	case "equals", "not_equals":
		return true
	}
	for _, p := range []string{"less_", "greater_", "less_equals_", "greater_equals_"} {
		if rest, ok := strings.CutPrefix(id, p); ok && (rest == "string" || rest == "bytes") {
			return true
		}
	}
	return false
}
