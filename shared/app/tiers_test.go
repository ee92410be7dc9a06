package app_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// tiers are shared/'s tiers in the order a request flows through them; a package may import only
// from its own tier or the ones before it (tests may import anything).
var tiers = []string{"platform", "rules", "families", "workers", "app", "testing"}

func tierOf(pkg string) int {
	rest, ok := strings.CutPrefix(pkg, "tunnelapi/shared/")
	if !ok {
		return -1
	}
	first, _, _ := strings.Cut(rest, "/")
	for i, t := range tiers {
		if t == first {
			return i
		}
	}
	return len(tiers)
}

// Every package under shared/ sits in a named tier and imports nothing from a later one.
func TestTiersImportOnlyEarlierTiers(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", "tunnelapi/shared/...").Output()
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	checked := 0
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		own := tierOf(p.ImportPath)
		if own == len(tiers) {
			t.Errorf("%s is in no tier of %v", p.ImportPath, tiers)
			continue
		}
		for _, imp := range p.Imports {
			if tier := tierOf(imp); tier > own {
				t.Errorf("%s (%s) imports %s (%s)", p.ImportPath, tiers[own], imp, tiers[tier])
			}
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("checked only %d packages", checked)
	}
}
