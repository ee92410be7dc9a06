package stream

import (
	"fmt"
	"regexp"
	"strings"
)

// Template is a compiled input template: one JSON path into the record.
type Template struct {
	path []string
}

var placeholder = regexp.MustCompile(`^<\$((?:\.[A-Za-z0-9_-]+)+)>$`)

// ParseTemplate compiles an input template of the one form the service uses: a single
// placeholder "<$.a.b.c>" whose value (a string) is the whole message body.
func ParseTemplate(src string) (Template, error) {
	m := placeholder.FindStringSubmatch(strings.TrimSpace(src))
	if m == nil {
		return Template{}, fmt.Errorf("stream: input template %q is not a single <$.path> placeholder", src)
	}
	return Template{path: strings.Split(m[1][1:], ".")}, nil
}

// Apply returns the string at the template's path in event.
func (t Template) Apply(event any) (string, error) {
	v := event
	for _, k := range t.path {
		obj, ok := v.(map[string]any)
		if !ok {
			return "", fmt.Errorf("stream: input template: no %s in the record", strings.Join(t.path, "."))
		}
		if v, ok = obj[k]; !ok {
			return "", fmt.Errorf("stream: input template: no %s in the record", strings.Join(t.path, "."))
		}
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("stream: input template: %s is not a string", strings.Join(t.path, "."))
	}
	return s, nil
}
