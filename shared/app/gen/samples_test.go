package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A function without sample events gets skeletons in the form of the hand-written ones: for IP
// policies, whose list, get and delete samples carry no hand-written body, the skeletons are
// those files byte for byte, and a create and an update are written for the author to fill in.
// (A function that has samples gets none: TestGeneratedFilesAreCurrent.)
func TestSkeletonSamples(t *testing.T) {
	empty := t.TempDir()
	for _, path := range []string{filepath.Join("shared", "app", "app.go"), "template.yaml"} {
		src, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(empty, path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(empty, path), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, err := Files(empty)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("events", "ip_policies")
	for _, name := range []string{"2-list.json", "3-get.json", "5-delete.json"} {
		want, err := os.ReadFile(filepath.Join(root, dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := files[filepath.Join(dir, name)]; string(got) != string(want) {
			t.Errorf("skeleton %s/%s:\n%s\nthe committed sample:\n%s", dir, name, got, want)
		}
	}
	for _, name := range []string{"1-create.json", "4-update.json"} {
		if files[filepath.Join(dir, name)] == nil {
			t.Errorf("no skeleton %s/%s", dir, name)
		}
	}
	if n := len(files[filepath.Join("events", "abuse_reports", "2-get.json")]); n == 0 {
		t.Error("no skeleton get of abuse reports, which serve only create and get")
	}
}
