package listfilter

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
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
	if !utf8.ValidString(src) {
		i := 0
		for i < len(src) {
			r, n := utf8.DecodeRuneInString(src[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		return nil, &Error{i, "the filter is not valid UTF-8"}
	}
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
			j := numberEnd(src, i)
			f, err := strconv.ParseFloat(src[i:j], 64)
			if err != nil || j < len(src) && (src[j] == '.' || isIdentStart(src[j]) || src[j] >= '0' && src[j] <= '9') {
				k := j
				for k < len(src) && (src[k] == '.' || isIdentStart(src[k]) || src[k] >= '0' && src[k] <= '9') {
					k++
				}
				return nil, &Error{i, fmt.Sprintf("bad number %q", src[i:k])}
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

// numberEnd returns the end of the number literal at src[i]: digits, an optional fraction of
// at least one digit and an optional exponent (CEL's int and double literals, in decimal).
func numberEnd(src string, i int) int {
	digits := func(j int) int {
		for j < len(src) && src[j] >= '0' && src[j] <= '9' {
			j++
		}
		return j
	}
	j := digits(i)
	if j+1 < len(src) && src[j] == '.' && src[j+1] >= '0' && src[j+1] <= '9' {
		j = digits(j + 1)
	}
	if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
		k := j + 1
		if k < len(src) && (src[k] == '+' || src[k] == '-') {
			k++
		}
		if e := digits(k); e > k {
			j = e
		}
	}
	return j
}

// simpleEscape decodes CEL's one-character escape sequences: e is the character after the
// backslash. A switch, not a map literal, which would be built at every start.
func simpleEscape(e byte) (byte, bool) {
	switch e {
	case '\\', '"', '\'', '`', '?':
		return e, true
	case 'a':
		return '\a', true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	case 'v':
		return '\v', true
	}
	return 0, false
}

// lexString decodes the quoted literal at src[start] with CEL's escapes (the one-character
// ones, \xHH, \uHHHH, \UHHHHHHHH and octal \ooo); any other escape, or one that does not
// denote a Unicode scalar value, is refused rather than read as the escaped character.
func lexString(src string, start int) (string, int, error) {
	q := src[start]
	var b strings.Builder
	for i := start + 1; i < len(src); i++ {
		c := src[i]
		switch {
		case c == q:
			return b.String(), i + 1, nil
		case c == '\n' || c == '\r':
			return "", 0, &Error{i, "a line break in a string literal"}
		case c == '\\':
			n, err := lexEscape(src, i, &b)
			if err != nil {
				return "", 0, err
			}
			i += n - 1
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, &Error{start, "unterminated string"}
}

// lexEscape decodes the escape sequence at src[i] (a backslash) into b and returns its length.
func lexEscape(src string, i int, b *strings.Builder) (int, error) {
	if i+1 >= len(src) {
		return 0, &Error{i, "unterminated string"}
	}
	e := src[i+1]
	if r, ok := simpleEscape(e); ok {
		b.WriteByte(r)
		return 2, nil
	}
	var digits, base int
	switch {
	case e == 'x' || e == 'X':
		digits, base = 2, 16
	case e == 'u':
		digits, base = 4, 16
	case e == 'U':
		digits, base = 8, 16
	case e >= '0' && e <= '3':
		digits, base = 3, 8
	default:
		return 0, &Error{i, fmt.Sprintf("invalid escape sequence %q in a string literal", src[i:i+2])}
	}
	from := i + 2
	if base == 8 {
		from = i + 1
	}
	if from+digits > len(src) {
		return 0, &Error{i, "truncated escape sequence in a string literal"}
	}
	v, err := strconv.ParseUint(src[from:from+digits], base, 32)
	if err != nil || !utf8.ValidRune(rune(v)) {
		return 0, &Error{i, fmt.Sprintf("invalid escape sequence %q in a string literal", src[i:from+digits])}
	}
	if e == 'x' || e == 'X' || base == 8 {
		if v > 0x7f {
			// CEL reads \xHH and octal escapes as code points; above ASCII they would need
			// an encoding choice the platform does not document.
			return 0, &Error{i, fmt.Sprintf("escape sequence %q is not ASCII; use \\u", src[i:from+digits])}
		}
		b.WriteByte(byte(v))
	} else {
		b.WriteRune(rune(v))
	}
	return from + digits - i, nil
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
