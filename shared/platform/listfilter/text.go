package listfilter

import (
	"reflect"
	"strings"
	"sync"
)

// Absent text members. A resource's wire form omits some text members when they are empty
// (description and metadata are, as the platform renders them), while the platform's filters
// see every text member of a resource, empty or not: `obj.description == ""` matches a
// resource without a description. Match therefore gives every string member that the wire
// type marks omitempty, and is absent from the rendered object, the value "" — at the top level
// and in nested objects, embedded structs included. Members of other types stay absent (null).

// textMembers is the omitempty string members of one struct type, by JSON name, and its nested
// struct members whose own text members are filled in.
type textMembers struct {
	text   []string
	nested map[string]*textMembers
}

var (
	textMu    sync.Mutex
	textCache = map[reflect.Type]*textMembers{}
)

// textOf returns the text members of t (a struct or a pointer to one), nil when it has none.
func textOf(t reflect.Type) *textMembers {
	textMu.Lock()
	defer textMu.Unlock()
	return textOfLocked(t)
}

func textOfLocked(t reflect.Type) *textMembers {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	if tm, ok := textCache[t]; ok {
		return tm
	}
	tm := &textMembers{}
	textCache[t] = tm // a recursive type finds itself (being filled in) instead of looping
	collect(t, tm)
	return tm
}

// collect adds t's members to tm, flattening embedded structs as encoding/json does.
func collect(t reflect.Type, tm *textMembers) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			collect(ft, tm)
			continue
		}
		if name == "" {
			name = f.Name
		}
		switch {
		case ft.Kind() == reflect.String && hasOption(opts, "omitempty"):
			tm.text = append(tm.text, name)
		case ft.Kind() == reflect.Struct:
			if sub := textOfLocked(ft); sub != nil && (len(sub.text) > 0 || len(sub.nested) > 0) {
				if tm.nested == nil {
					tm.nested = map[string]*textMembers{}
				}
				tm.nested[name] = sub
			}
		}
	}
}

func hasOption(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}

// fill gives obj's absent text members the value "".
func (tm *textMembers) fill(obj map[string]any) {
	if tm == nil {
		return
	}
	for _, name := range tm.text {
		if _, ok := obj[name]; !ok {
			obj[name] = ""
		}
	}
	for name, sub := range tm.nested {
		if m, ok := obj[name].(map[string]any); ok {
			sub.fill(m)
		}
	}
}
