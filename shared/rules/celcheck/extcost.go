package celcheck

import "math"

// extCosts are the strings, lists and encoders extensions' own estimates (cel-go's ext
// package), by overload. The lists extension's sort, sortBy and distinct, and json.encode, are
// not among them: cel-go estimates those in ways a caller is expected to replace, so they come
// from Costs.Overloads.
var extCosts = map[string]func(k *coster, e *Expr) (cost, size uint64){
	"string_lower_ascii":               fixedTransform,
	"string_upper_ascii":               fixedTransform,
	"string_reverse":                   fixedTransform,
	"string_trim":                      fixedTransform,
	"string_char_at_int":               charAt,
	"string_index_of_string":           search,
	"string_index_of_string_int":       search,
	"string_last_index_of_string":      search,
	"string_last_index_of_string_int":  search,
	"string_replace_string_string":     replace,
	"string_replace_string_string_int": replace,
	"string_split_string":              split,
	"string_split_string_int":          split,
	"string_substring_int":             substring,
	"string_substring_int_int":         substring,
	"list_join":                        join,
	"list_join_string":                 join,
	"base64_encode_bytes":              encode,
	"base64_decode_string":             decode,
	"list_slice":                       slice,
	"lists_range":                      listsRange,
	"list_reverse":                     listReverse,
	"list_flatten":                     flatten,
	"list_flatten_int":                 flatten,
}

// unknownSize marks a result of unknown size, which the estimator replaces by Costs.Unknown.
const unknownSize = math.MaxUint64

func fixedTransform(k *coster, e *Expr) (uint64, uint64) {
	t := k.size(e.target)
	return add(add(factor(t, traversal), 1), t), t
}

func charAt(k *coster, e *Expr) (uint64, uint64) {
	return add(factor(k.size(e.target), traversal), 2), 1
}

func search(k *coster, e *Expr) (uint64, uint64) {
	return add(factor(mul(k.size(e.target), k.size(e.args[0])), traversal), 1), unknownSize
}

func replace(k *coster, e *Expr) (uint64, uint64) {
	t := k.size(e.target)
	search := factor(mul(max(t, 1), max(k.size(e.args[0]), 1)), traversal)
	all := mul(add(t, 1), add(k.size(e.args[1]), 1))
	return add(add(search, all), 1), all
}

func split(k *coster, e *Expr) (uint64, uint64) {
	t := k.size(e.target)
	return add(add(add(factor(add(t, 1), traversal), t), 10), 1), t
}

// literalUint is the value of a non-negative int literal (0 for a negative one), or def.
func literalUint(e *Expr, def uint64) uint64 {
	if e.kind != literalExpr || e.lit.kind != kindInt {
		return def
	}
	if e.litInt < 0 {
		return 0
	}
	return uint64(e.litInt)
}

func substring(k *coster, e *Expr) (uint64, uint64) {
	t := k.size(e.target)
	start := literalUint(e.args[0], 0)
	end := t
	if len(e.args) == 2 {
		end = literalUint(e.args[1], end)
	}
	size := end - start // wraps as cel-go's does when start > end
	return add(add(factor(t, traversal), 1), size), size
}

func join(k *coster, e *Expr) (uint64, uint64) {
	t := k.size(e.target)
	var sep uint64
	if len(e.args) == 1 {
		sep = k.size(e.args[0])
	}
	size := add(mul(t, add(1, sep)), sep)
	return add(add(factor(add(t, 1), traversal), size), 1), size
}

func encode(k *coster, e *Expr) (uint64, uint64) {
	s := k.size(e.args[0])
	size := (s*4 + 2) / 3
	if s > math.MaxUint64/4 {
		size = math.MaxUint64
	}
	return add(factor(s, traversal), 1), size
}

func decode(k *coster, e *Expr) (uint64, uint64) {
	s := k.size(e.args[0])
	return add(factor(s, traversal), 1), s * 3 / 4
}

// listCall is an allocating list function's cost over size elements.
func listCall(size uint64) (uint64, uint64) { return add(add(size, 10), 1), size }

func slice(k *coster, e *Expr) (uint64, uint64) {
	t := k.size(e.target)
	return listCall(literalUint(e.args[1], t) - literalUint(e.args[0], 0))
}

func listsRange(k *coster, e *Expr) (uint64, uint64) {
	return listCall(literalUint(e.args[0], math.MaxUint64))
}

func listReverse(k *coster, e *Expr) (uint64, uint64) { return listCall(k.size(e.target)) }

func flatten(k *coster, e *Expr) (uint64, uint64) {
	depth := uint64(1)
	if len(e.args) == 1 {
		depth = literalUint(e.args[0], math.MaxUint64)
	}
	var size uint64
	if e.target.kind == listExpr {
		size = literalFlattenSize(e.target, depth)
	} else {
		size = flattenSize(k.size(e.target), e.target.typ, depth, k.Unknown)
	}
	return add(add(size, 10), 1), size
}

func literalFlattenSize(e *Expr, depth uint64) uint64 {
	if depth == 0 {
		if e.kind == listExpr {
			return uint64(len(e.args))
		}
		return 1
	}
	if e.kind != listExpr {
		return 1
	}
	var n uint64
	for _, el := range e.args {
		n += literalFlattenSize(el, depth-1)
	}
	return n
}

func flattenSize(size uint64, t *Type, depth, unknown uint64) uint64 {
	if depth == 0 || t.kind != kindList {
		return size
	}
	return mul(size, flattenSize(unknown, t.params[0], depth-1, unknown))
}
