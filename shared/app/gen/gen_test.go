package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const root = "../../.."

// The committed mains and functions.mk are what the generator writes from app.Families and
// app.Workers today, every function has sample events, and no function or sample folder is left
// over from one that is no longer listed: a family added to app.Families, a main edited by hand
// or a function removed fails here until go generate ./... is run and its output committed.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	files, err := Files(root)
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]bool{}
	for path, want := range files {
		if !Generated(path) {
			t.Errorf("%s is missing: run go generate ./... and fill in the skeleton samples", filepath.Dir(path))
			continue
		}
		if dir, ok := strings.CutPrefix(filepath.Dir(path), "functions"+string(filepath.Separator)); ok {
			dirs[dir] = true
		}
		got, err := os.ReadFile(filepath.Join(root, path))
		if err != nil || string(got) != string(want) {
			t.Errorf("%s is not what go generate ./... writes: run it and commit the result", path)
		}
	}
	if len(dirs) < 10 {
		t.Fatalf("the generator writes only %d mains: the check would prove little", len(dirs))
	}
	for _, folder := range []string{"functions", "events"} {
		entries, err := os.ReadDir(filepath.Join(root, folder))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() && !dirs[e.Name()] {
				t.Errorf("%s/%s belongs to no function of app.Families or app.Workers", folder, e.Name())
			}
		}
	}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(strings.Split(string(mk), "\n"), func(l string) bool {
		return strings.HasPrefix(l, "include ") && strings.HasSuffix(l, "functions.mk")
	}) {
		t.Error("the Makefile does not include functions.mk, the generated FUNCTIONS")
	}
}
