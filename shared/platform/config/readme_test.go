package config_test

import (
	"os"
	"strings"
	"testing"

	"tunnelapi/shared/platform/config"
)

// The README's configuration table is the declaration: every variable once, with its default
// and readers (config.Table prints the table to paste).
func TestReadmeTableIsTheDeclaration(t *testing.T) {
	raw, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## Configuration\n")
	if !ok {
		t.Fatal(`README.md has no "## Configuration" section`)
	}
	var rows []string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "## ") {
			break
		}
		if strings.HasPrefix(line, "|") {
			rows = append(rows, line)
		}
	}
	got, want := strings.Join(rows, "\n")+"\n", config.Table()
	if got != want {
		gotRows, wantRows := map[string]bool{}, map[string]bool{}
		for _, r := range rows {
			gotRows[r] = true
		}
		for _, r := range strings.Split(strings.TrimSuffix(want, "\n"), "\n") {
			wantRows[r] = true
			if !gotRows[r] {
				t.Errorf("README.md's configuration table lacks or differs on:\n%s", r)
			}
		}
		for _, r := range rows {
			if !wantRows[r] {
				t.Errorf("README.md's configuration table has a row the declaration does not:\n%s", r)
			}
		}
		if !t.Failed() {
			t.Errorf("README.md's configuration table is out of order; it should read:\n%s", want)
		}
	}
}
