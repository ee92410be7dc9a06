// Package listfilter evaluates the list `filter` parameter: the restricted CEL dialect the
// platform documents (WIRE.md, "Lists") over `obj`, the resource as its GET returns it. It
// supports && || !, comparisons, `in`, size(), == null, timestamp("…"), timestamp(time.now) and
// .add("7d") / .subtract("24h") on timestamps — and nothing else: no indexing, arithmetic,
// ternaries or regular expressions.
//
// The full cel-go library would add about 10 MB and 2 ms of package init to every function
// that lists, against a 5 MB zip budget and a cold-start budget; this dialect is small enough
// to parse here.
package listfilter

import (
	"fmt"
	"strings"
)

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tString
	tNumber
	tOp // punctuation and operators
)

type token struct {
	kind tokKind
	text string // identifier, operator, or the decoded string literal
	num  float64
	pos  int
}

// Error is a filter that does not parse or type-check; Pos is a byte offset.
type Error struct {
	Pos int
	Msg string
}

// Error implements error.
func (e *Error) Error() string { return fmt.Sprintf("at position %d: %s", e.Pos, e.Msg) }

func lex(src string) ([]token, error) {
	var out []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"' || c == '\'':
			s, n, err := lexString(src, i)
			if err != nil {
				return nil, err
			}
			out = append(out, token{kind: tString, text: s, pos: i})
			i = n
		case c >= '0' && c <= '9':
			j := i
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '.') {
				j++
			}
			var f float64
			if _, err := fmt.Sscanf(src[i:j], "%g", &f); err != nil {
				return nil, &Error{i, fmt.Sprintf("bad number %q", src[i:j])}
			}
			out = append(out, token{kind: tNumber, num: f, text: src[i:j], pos: i})
			i = j
		case isIdentStart(c):
			j := i
			for j < len(src) && (isIdentStart(src[j]) || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			out = append(out, token{kind: tIdent, text: src[i:j], pos: i})
			i = j
		default:
			op := ""
			for _, cand := range []string{"&&", "||", "==", "!=", "<=", ">=", "<", ">", "!", "(", ")", "[", "]", ",", "."} {
				if strings.HasPrefix(src[i:], cand) {
					op = cand
					break
				}
			}
			if op == "" {
				return nil, &Error{i, fmt.Sprintf("unexpected character %q (arithmetic, indexing, ternaries and regular expressions are not supported)", c)}
			}
			out = append(out, token{kind: tOp, text: op, pos: i})
			i += len(op)
		}
	}
	return append(out, token{kind: tEOF, pos: len(src)}), nil
}

func lexString(src string, start int) (string, int, error) {
	q := src[start]
	var b strings.Builder
	for i := start + 1; i < len(src); i++ {
		c := src[i]
		switch {
		case c == q:
			return b.String(), i + 1, nil
		case c == '\\' && i+1 < len(src):
			i++
			switch src[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(src[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, &Error{start, "unterminated string"}
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
