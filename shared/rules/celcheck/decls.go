package celcheck

import (
	_ "embed"
	"strings"
	"sync"
)

// standard.txt declares cel-go's standard library and its strings, lists and encoders
// extensions, one overload a line: name, member or global, overload id, argument types
// (the receiver first) and result type, tab-separated (TestStandardIsCelGos writes it).
//
//go:embed standard.txt
var standardText string

// typeIdents are the type names an expression may use as values, such as type(x) == int.
var typeIdents = []string{"bool", "bytes", "double", "google.protobuf.Duration", "int", "list(<A>)",
	"map(<A>, <B>)", "null_type", "string", "google.protobuf.Timestamp", "type", "uint"}

// Standard is the environment of cel-go's standard library with the strings, lists and
// encoders extensions, built on first use.
var Standard = sync.OnceValue(func() *Env {
	e := &Env{idents: map[string]*Type{}, funcs: map[string][]Overload{}}
	for _, n := range typeIdents {
		t := parseType(n)
		name, _, _ := strings.Cut(n, "(")
		if t.kind == kindType && len(t.params) == 0 {
			e.idents[name] = typeOf(t)
			continue
		}
		e.idents[name] = typeOf(t)
	}
	for line := range strings.Lines(standardText) {
		f := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		o := Overload{Name: f[0], Member: f[1] == "member", ID: f[2], Result: parseType(f[4])}
		for _, a := range strings.Split(f[3], ";") {
			if a != "" {
				o.Args = append(o.Args, parseType(a))
			}
		}
		e.funcs[o.Name] = append(e.funcs[o.Name], o)
	}
	return e
})
