package main

import (
	"bytes"
	"fmt"
	"go/format"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/resource"
)

// kindsFile is where auditKinds is written, relative to the root.
var kindsFile = filepath.Join("shared", "platform", "audit", "kinds_gen.go")

// checkDescriptors refuses families that cannot all be served together: one without a Path,
// Prefix or EventKind, or two sharing a Path or a Prefix (their resources would share a
// collection, and an erasure would free them with the wrong family's Release).
func checkDescriptors(families []*resource.Descriptor) error {
	paths, prefixes := map[string]bool{}, map[string]string{}
	for _, d := range families {
		if d.Path == "" || d.Prefix == "" || d.EventKind == "" {
			return fmt.Errorf("the family %q needs a Path, a Prefix and an EventKind (Prefix %q, EventKind %q)", d.Path, d.Prefix, d.EventKind)
		}
		if paths[d.Path] {
			return fmt.Errorf("two families serve %s", d.Path)
		}
		if other, ok := prefixes[d.Prefix]; ok {
			return fmt.Errorf("%s and %s share the id prefix %q", other, d.Path, d.Prefix)
		}
		paths[d.Path], prefixes[d.Prefix] = true, d.Path
	}
	return nil
}

// auditKinds is kindsFile: audit.AuditKinds, each family's EventKind with the verbs its served
// operations record (create, update, delete) and the kinds of the parts its routes change
// (PartEventKinds) with all three.
func auditKinds(families []*resource.Descriptor) ([]byte, error) {
	kinds := map[string]audit.Verbs{}
	for _, d := range families {
		for op, verb := range map[resource.Operation]audit.Verbs{resource.OpCreate: audit.Created, resource.OpUpdate: audit.Updated, resource.OpDelete: audit.Deleted} {
			if d.Offers(op) {
				kinds[d.EventKind] |= verb
			}
		}
		kinds[d.EventKind] |= d.Reported
		for _, k := range d.PartEventKinds {
			kinds[k] |= audit.AllVerbs
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// %s\n\npackage audit\n\n", header)
	b.WriteString(comment("AuditKinds are the resource kinds whose mutations record events, each with the verbs it " +
		"records: <kind>_<verb>.v0 for each, and no other (an event that can never happen is no type a subscription " +
		"may name). They are the event kinds of app.Families (resource.Descriptor's EventKind) with the verbs of the " +
		"operations each serves, and the kinds of the parts their routes change (PartEventKinds)."))
	b.WriteString("var AuditKinds = map[string]Verbs{\n")
	for _, kind := range slices.Sorted(maps.Keys(kinds)) {
		fmt.Fprintf(&b, "\t%q: %s,\n", kind, verbsExpr(kinds[kind]))
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

// verbsExpr is v as Go source in package audit: AllVerbs, or its verbs joined by |.
func verbsExpr(v audit.Verbs) string {
	if v == audit.AllVerbs {
		return "AllVerbs"
	}
	var names []string
	for _, n := range v.Names() {
		names = append(names, strings.ToUpper(n[:1])+n[1:])
	}
	return strings.Join(names, " | ")
}
