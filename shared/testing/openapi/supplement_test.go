package openapi

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// kubernetesReference is the platform's reference of the Kubernetes operators family, relative
// to this package.
const kubernetesReference = "../../../../shared/reference/kubernetes-operators.md"

// fieldsHeading opens a table of the reference: "## Fields: kubernetes-operator-create".
var fieldsHeading = regexp.MustCompile(`(?m)^## Fields: ([a-z-]+)$`)

// referenceSchema is the schema a reference table describes: kubernetes-operator-create is
// KubernetesOperatorCreate.
func referenceSchema(table string) string {
	var b strings.Builder
	for _, w := range strings.Split(table, "-") {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

// The supplement's schemas have exactly the members the platform's reference lists, in its
// order, with the types its tables give (a member with dotted fields is an object, or the array
// of objects a list holds; List<string> is an array of strings).
func TestSupplementFollowsTheReference(t *testing.T) {
	b, err := os.ReadFile(kubernetesReference)
	if err != nil {
		t.Skip("the platform's Kubernetes operators reference is not beside the checkout")
	}
	text := string(b)
	locs := fieldsHeading.FindAllStringSubmatchIndex(text, -1)
	if len(locs) < 5 {
		t.Fatalf("found %d tables in the reference", len(locs))
	}
	for i, loc := range locs {
		end := len(text)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		table := text[loc[2]:loc[3]]
		body, _, _ := strings.Cut(text[loc[1]:end], "\n## ")
		s, ok := SchemaNamed(referenceSchema(table))
		if !ok {
			t.Errorf("the supplement has no schema %s (the reference's %s)", referenceSchema(table), table)
			continue
		}
		var names []string
		types := map[string]string{}
		for _, line := range strings.Split(body, "\n") {
			cells := strings.Split(line, "|")
			if len(cells) < 4 || !strings.HasPrefix(line, "| ") || strings.Contains(line, "---") || strings.TrimSpace(cells[1]) == "Name" {
				continue
			}
			name, typ := strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2])
			top, _, nested := strings.Cut(name, ".")
			if !slices.Contains(names, top) {
				names = append(names, top)
			}
			switch {
			case nested:
				types[top] = "object"
			case typ == "List<string>":
				types[top] = "array"
			default:
				types[top] = typ
			}
		}
		if !slices.Equal(s.Names(), names) {
			t.Errorf("%s: members %v, the reference's %v", s.Name, s.Names(), names)
		}
		for _, m := range s.Members {
			want := types[m.Name]
			if m.Type == "array" && m.Items == "object" {
				want = strings.Replace(want, "object", "array", 1) // a list's items
			}
			if want != "" && m.Type != want {
				t.Errorf("%s.%s is %s, the reference's %s", s.Name, m.Name, m.Type, want)
			}
		}
	}
}
