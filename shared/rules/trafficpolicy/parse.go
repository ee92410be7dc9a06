package trafficpolicy

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// parse reads a JSON or YAML document into maps, lists and scalars, refusing documents deeper
// than MaxDepth or with more than MaxValues values before building them. On failure it returns
// the message, and the limit's name when a limit was hit.
func parse(doc string) (root any, path, limit, msg string) {
	if t := strings.TrimSpace(doc); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		if depth, values := jsonShape(doc); depth > MaxDepth {
			return nil, "", "MaxDepth", fmt.Sprintf("the document nests deeper than %d levels (MaxDepth)", MaxDepth)
		} else if values > MaxValues {
			return nil, "", "MaxValues", fmt.Sprintf("the document has more than %d values (MaxValues)", MaxValues)
		}
		dec := json.NewDecoder(strings.NewReader(doc))
		dec.UseNumber()
		if err := dec.Decode(&root); err != nil {
			return nil, "", "", "not valid JSON: " + jsonError(doc, err)
		}
		if dec.More() {
			return nil, "", "", "not valid JSON: data after the document"
		}
		return root, "", "", ""
	}
	// The YAML parser takes microseconds per value: bound the values before it runs.
	if yamlEstimate(doc) > MaxValues {
		return nil, "", "MaxValues", fmt.Sprintf("the document has more than %d values (MaxValues)", MaxValues)
	}
	var node yaml.Node
	dec := yaml.NewDecoder(strings.NewReader(doc))
	if err := dec.Decode(&node); err != nil {
		return nil, "", "", "not a valid YAML or JSON document: " + strings.TrimPrefix(err.Error(), "yaml: ")
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, "", "", "the YAML has more than one document"
	}
	values := 0
	if err := yamlShape(&node, 0, &values); err != nil {
		var l limitHit
		if errors.As(err, &l) {
			return nil, "", l.name, l.msg
		}
		return nil, "", "", err.Error()
	}
	if err := node.Decode(&root); err != nil {
		return nil, "", "", "not a valid YAML document: " + strings.TrimPrefix(err.Error(), "yaml: ")
	}
	return root, "", "", ""
}

type limitHit struct{ name, msg string }

func (l limitHit) Error() string { return l.msg }

// yamlShape counts the document's values (following aliases, so an alias counts each time it
// is used) and measures its depth, stopping at the first limit.
func yamlShape(n *yaml.Node, depth int, values *int) error {
	if depth > MaxDepth {
		return limitHit{"MaxDepth", fmt.Sprintf("the document nests deeper than %d levels (MaxDepth)", MaxDepth)}
	}
	if *values++; *values > MaxValues {
		return limitHit{"MaxValues", fmt.Sprintf("the document has more than %d values (MaxValues)", MaxValues)}
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return errors.New("not a valid YAML document: an alias without its anchor")
		}
		return yamlShape(n.Alias, depth+1, values)
	}
	next := depth
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		next++
	}
	for _, c := range n.Content {
		if err := yamlShape(c, next, values); err != nil {
			return err
		}
	}
	return nil
}

// jsonShape returns the nesting depth and an upper bound of the value count of a JSON text in
// one pass over its bytes (strings skipped), before anything is decoded.
func jsonShape(doc string) (depth, values int) {
	level, inString := 0, false
	values = 1
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if level++; level > depth {
				depth = level
			}
		case '}', ']':
			level--
		case ',', ':':
			values++
		}
	}
	return depth, values
}

// yamlEstimate counts, in one pass over the text, the places where a YAML value may start
// outside quoted and block scalars and comments: sequence entries ("- "), mapping values (": "),
// flow separators and collections, and aliases. Every value but the first starts at one, so
// it is an upper bound of the values of a document's first level of aliasing.
func yamlEstimate(doc string) int {
	n := 1
	blockIndent := -1 // indentation of the line that opened a block scalar
	quote := byte(0)
	for _, line := range strings.Split(doc, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		if blockIndent >= 0 && quote == 0 {
			if strings.TrimSpace(line) == "" || indent > blockIndent {
				continue
			}
			blockIndent = -1
		}
		lineIndent := indent
		for i := indent; i < len(line); i++ {
			c := line[i]
			if quote != 0 {
				switch {
				case quote == '"' && c == '\\':
					i++
				case c == quote && quote == '\'' && i+1 < len(line) && line[i+1] == '\'':
					i++
				case c == quote:
					quote = 0
				}
				continue
			}
			next := byte(' ')
			if i+1 < len(line) {
				next = line[i+1]
			}
			prev := byte(' ')
			if i > 0 {
				prev = line[i-1]
			}
			switch c {
			case '\'', '"':
				if prev == ' ' || prev == '[' || prev == '{' || prev == ',' || prev == ':' || prev == '-' || i == indent {
					quote = c
				}
			case '#':
				if prev == ' ' || prev == '\t' || i == 0 {
					i = len(line)
				}
			case '-', ':', '?':
				if next == ' ' || next == '\t' || next == '\r' || i+1 == len(line) {
					n++
				}
			case ',', '[', '{', '*':
				n++
			case '|', '>':
				if prev == ' ' && strings.Trim(strings.TrimSpace(line[i+1:]), "+-0123456789") == "" {
					blockIndent = lineIndent
					i = len(line)
				}
			}
		}
	}
	return n
}

func jsonError(doc string, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := 1 + strings.Count(doc[:min(int(se.Offset), len(doc))], "\n")
		return fmt.Sprintf("%s (line %d)", se.Error(), line)
	}
	return err.Error()
}
