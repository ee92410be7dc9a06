package trafficpolicy

import "time"

// Limits on the work one validation does. Each is checked before the step it protects (the
// size first; the depth and value count in one pass over the text before the YAML or JSON
// parser runs, and again while reading its tree before checking it; an expression's size and
// the document's expression totals before compiling), so the work of a refusal is bounded by
// the limit, not by the input. A limit hit is a 400 naming the field, the
// path and the limit.
const (
	// MaxBytes bounds a document.
	MaxBytes = 256 << 10
	// MaxDepth bounds the nesting of mappings and lists in a document.
	MaxDepth = 32
	// MaxValues bounds the values (mappings, lists, scalars) in a document, YAML aliases counted
	// at each use.
	MaxValues = 10_000
	// MaxExpressionBytes bounds one CEL expression: a rule expression, an interpolation ${…} or
	// a whole-CEL config value (bucket_key, retry_condition).
	MaxExpressionBytes = 2048
	// MaxExpressions bounds the distinct CEL expressions of a document (each compiled once).
	MaxExpressions = 500
	// MaxExpressionBytesTotal bounds the bytes of a document's distinct CEL expressions.
	MaxExpressionBytesTotal = 24 << 10
	// MaxExpressionDepth is the CEL parser's recursion limit (nesting of calls, lists, maps and
	// operators).
	MaxExpressionDepth = 24
	// MaxExpressionNodes bounds the nodes of one parsed expression, macro expansions included.
	MaxExpressionNodes = 1000
	// MaxComprehensionNesting bounds nested comprehensions (all, exists, map, filter, …).
	MaxComprehensionNesting = 3
	// MaxExpressionCost bounds an expression's estimated evaluation cost (cel-go's cost units,
	// with every string, list and map the request supplies taken as up to maxValueSize long).
	MaxExpressionCost = 1_000_000_000
	// MaxRegexBytes bounds a regular expression in a config field (from of url-rewrite, …).
	MaxRegexBytes = 4096
	// Budget bounds the CPU time of one validation (the thread's own, from getrusage), checked
	// before each expression and regular expression is compiled: the bound for documents that
	// stay within every limit above and are still costly. The request's context bounds the
	// validation too: a cancelled request stops it at the next check.
	Budget = 100 * time.Millisecond

	maxValueSize = 1024
)
