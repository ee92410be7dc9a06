package celcheck

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

type tokenKind uint8

const (
	tokEOF tokenKind = iota
	tokIdent
	tokInt
	tokUint
	tokDouble
	tokString
	tokBytes
	tokPunct       // an operator or delimiter, in text
	tokQuotedIdent // `a-b.c`: a field name quoted with backticks
)

type token struct {
	kind tokenKind
	text string // the identifier, the punctuation, or the literal as written
	str  string // a string or bytes literal's value
	pos  int
}

// reserved are CEL's reserved words, refused as identifiers.
var reserved = map[string]bool{"as": true, "break": true, "const": true, "continue": true, "else": true,
	"for": true, "function": true, "if": true, "import": true, "let": true, "loop": true, "package": true,
	"namespace": true, "return": true, "var": true, "void": true, "while": true}

// lex splits src into tokens.
func lex(src string) ([]token, error) {
	var out []token
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case isLetter(c):
			j := i
			for j < len(src) && (isLetter(src[j]) || isDigit(src[j])) {
				j++
			}
			word := src[i:j]
			if j < len(src) && (src[j] == '"' || src[j] == '\'') && isStringPrefix(word) {
				t, n, err := lexString(src, i, j, word)
				if err != nil {
					return nil, err
				}
				out = append(out, t)
				i = n
				continue
			}
			out = append(out, token{kind: tokIdent, text: word, pos: i})
			i = j
		case c == '`':
			j := i + 1
			for j < len(src) && (isLetter(src[j]) || isDigit(src[j]) || strings.IndexByte(".-/ ", src[j]) >= 0) {
				j++
			}
			if j == i+1 || j >= len(src) || src[j] != '`' {
				return nil, fmt.Errorf("syntax error: token recognition error at: '`' (column %d)", i+1)
			}
			out = append(out, token{kind: tokQuotedIdent, text: src[i+1 : j], pos: i})
			i = j + 1
		case c == '"' || c == '\'':
			t, n, err := lexString(src, i, i, "")
			if err != nil {
				return nil, err
			}
			out = append(out, t)
			i = n
		case isDigit(c) || (c == '.' && i+1 < len(src) && isDigit(src[i+1])):
			t, n, err := lexNumber(src, i)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
			i = n
		default:
			p := punct(src[i:])
			if p == "" {
				r, _ := utf8.DecodeRuneInString(src[i:])
				return nil, fmt.Errorf("syntax error: token recognition error at: '%c' (column %d)", r, i+1)
			}
			out = append(out, token{kind: tokPunct, text: p, pos: i})
			i += len(p)
		}
	}
	return append(out, token{kind: tokEOF, pos: len(src)}), nil
}

func isLetter(c byte) bool { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isHex(c byte) bool    { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') }

func isStringPrefix(w string) bool {
	switch strings.ToLower(w) {
	case "r", "b", "rb", "br":
		return true
	}
	return false
}

var puncts = []string{"==", "!=", "<=", ">=", "&&", "||", "?.", "<", ">", "!", "+", "-", "*", "/", "%",
	"?", ":", ".", ",", "(", ")", "[", "]", "{", "}"}

func punct(s string) string {
	for _, p := range puncts {
		if strings.HasPrefix(s, p) {
			return p
		}
	}
	return ""
}

func lexNumber(src string, i int) (token, int, error) {
	start := i
	if src[i] == '0' && i+1 < len(src) && src[i+1] == 'x' {
		j := i + 2
		for j < len(src) && isHex(src[j]) {
			j++
		}
		if j == i+2 {
			return token{}, 0, fmt.Errorf("syntax error: malformed hexadecimal literal (column %d)", i+1)
		}
		if j < len(src) && (src[j] == 'u' || src[j] == 'U') {
			return token{kind: tokUint, text: src[start:j], pos: start}, j + 1, nil
		}
		return token{kind: tokInt, text: src[start:j], pos: start}, j, nil
	}
	j := i
	for j < len(src) && isDigit(src[j]) {
		j++
	}
	float := false
	if j+1 < len(src) && src[j] == '.' && isDigit(src[j+1]) {
		float = true
		j++
		for j < len(src) && isDigit(src[j]) {
			j++
		}
	}
	if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
		k := j + 1
		if k < len(src) && (src[k] == '+' || src[k] == '-') {
			k++
		}
		if k < len(src) && isDigit(src[k]) {
			float = true
			for k < len(src) && isDigit(src[k]) {
				k++
			}
			j = k
		}
	}
	if float {
		return token{kind: tokDouble, text: src[start:j], pos: start}, j, nil
	}
	if j < len(src) && (src[j] == 'u' || src[j] == 'U') {
		return token{kind: tokUint, text: src[start:j], pos: start}, j + 1, nil
	}
	return token{kind: tokInt, text: src[start:j], pos: start}, j, nil
}

// lexString reads a string or bytes literal whose prefix (r, b, rb, br) starts at start and
// whose quote is at q.
func lexString(src string, start, q int, prefix string) (token, int, error) {
	raw := strings.ContainsAny(prefix, "rR")
	bytes := strings.ContainsAny(prefix, "bB")
	quote := src[q : q+1]
	if strings.HasPrefix(src[q:], strings.Repeat(quote, 3)) {
		quote = strings.Repeat(quote, 3)
	}
	var b strings.Builder
	i := q + len(quote)
	for {
		if i >= len(src) {
			return token{}, 0, fmt.Errorf("syntax error: token recognition error at: '%s' (column %d)", src[start:min(len(src), start+8)], start+1)
		}
		if strings.HasPrefix(src[i:], quote) {
			break
		}
		c := src[i]
		if (c == '\n' || c == '\r') && len(quote) == 1 {
			return token{}, 0, fmt.Errorf("syntax error: token recognition error: a newline in a string (column %d)", i+1)
		}
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(src) {
			return token{}, 0, fmt.Errorf("syntax error: token recognition error: an unfinished escape (column %d)", i+1)
		}
		if raw {
			// A raw string keeps the backslash; it still cannot end the string by escaping its quote.
			b.WriteString(src[i : i+2])
			i += 2
			continue
		}
		n, err := unescape(src[i:], &b, bytes)
		if err != nil {
			return token{}, 0, fmt.Errorf("syntax error: %v (column %d)", err, i+1)
		}
		i += n
	}
	kind := tokString
	if bytes {
		kind = tokBytes
	}
	end := i + len(quote)
	return token{kind: kind, text: src[start:end], str: b.String(), pos: start}, end, nil
}

// simpleEscapes are the one-character escape sequences.
var simpleEscapes = map[byte]string{'a': "\a", 'b': "\b", 'f': "\f", 'n': "\n", 'r': "\r", 't': "\t", 'v': "\v",
	'\\': "\\", '\'': "'", '"': "\"", '`': "`", '?': "?"}

var escapeDigits = map[byte]int{'x': 2, 'X': 2, 'u': 4, 'U': 8}

// unescape writes the escape sequence at the start of s to b and returns its length.
func unescape(s string, b *strings.Builder, bytes bool) (int, error) {
	c := s[1]
	if r, ok := simpleEscapes[c]; ok {
		b.WriteString(r)
		return 2, nil
	}
	switch c {
	case 'x', 'X', 'u', 'U':
		n := escapeDigits[c]
		if (c == 'u' || c == 'U') && bytes {
			return 0, fmt.Errorf("unicode escapes are not allowed in bytes literals")
		}
		if len(s) < 2+n {
			return 0, fmt.Errorf("an unfinished escape")
		}
		v, err := strconv.ParseUint(s[2:2+n], 16, 32)
		if err != nil {
			return 0, fmt.Errorf("an invalid escape")
		}
		if n == 2 && bytes {
			b.WriteByte(byte(v))
		} else {
			if v > utf8.MaxRune || (v >= 0xD800 && v < 0xE000) {
				return 0, fmt.Errorf("an invalid unicode code point")
			}
			b.WriteRune(rune(v))
		}
		return 2 + n, nil
	case '0', '1', '2', '3':
		if len(s) < 4 || s[2] < '0' || s[2] > '7' || s[3] < '0' || s[3] > '7' {
			return 0, fmt.Errorf("an invalid octal escape")
		}
		v := (c-'0')*64 + (s[2]-'0')*8 + (s[3] - '0')
		if bytes {
			b.WriteByte(v)
		} else {
			b.WriteRune(rune(v))
		}
		return 4, nil
	}
	return 0, fmt.Errorf("an invalid escape sequence \\%c", c)
}
