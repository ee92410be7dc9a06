package testkit

import (
	"fmt"
	"slices"
	"strings"
)

// CompareRecorded lists how got, a decoded JSON response, differs from want, the response the
// platform recorded for the same request: the same members at every level, each of the same
// JSON kind, and the same values but for the members named in varies, whose values differ
// between deployments (ids, times, hosts) and are compared by kind only. A member is named by
// its path from the top ("id", "binding.ingress_endpoint"); a list item's members by their
// path within the item. where names got in the problems ("" for the top).
func CompareRecorded(where string, got, want any, varies ...string) []string {
	at := func(member string) string {
		if where == "" {
			return member
		}
		return where + "." + member
	}
	kind := func(v any) string {
		if v == nil {
			return "null"
		}
		return fmt.Sprintf("%T", v)
	}
	if kind(got) != kind(want) {
		return []string{fmt.Sprintf("%s is %s %v, recorded %s %v", where, kind(got), got, kind(want), want)}
	}
	var problems []string
	switch w := want.(type) {
	case map[string]any:
		g := got.(map[string]any)
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s is missing", at(k)))
				continue
			}
			problems = append(problems, CompareRecorded(at(k), gv, wv, varies...)...)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				problems = append(problems, fmt.Sprintf("%s is not in the recorded response", at(k)))
			}
		}
	case []any:
		g := got.([]any)
		if len(g) != len(w) {
			return []string{fmt.Sprintf("%s has %d items, recorded %d", where, len(g), len(w))}
		}
		for i := range w {
			problems = append(problems, CompareRecorded(fmt.Sprintf("%s[%d]", where, i), g[i], w[i], varies...)...)
		}
	default:
		name := where
		if i := strings.LastIndex(name, "]."); i >= 0 {
			name = name[i+2:] // a list item's member varies as the item's does
		}
		if !slices.Contains(varies, name) && got != want {
			problems = append(problems, fmt.Sprintf("%s is %v, recorded %v", where, got, want))
		}
	}
	return problems
}
