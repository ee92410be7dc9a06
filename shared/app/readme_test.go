package app_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README is short enough to finish, and a newcomer reads how to run, call and deploy the
// service, and how a deployment gets its first key, before anything else.
const (
	maxReadmeWords = 2500
	// firstWords is how far into the README the essentials must be.
	firstWords = 1000
)

func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReadmeIsShortAndStartsWithTheEssentials(t *testing.T) {
	text := readme(t)
	words := strings.Fields(text)
	if len(words) > maxReadmeWords {
		t.Errorf("README.md has %d words, more than %d: move measurements, internals and design notes to the package docs they describe", len(words), maxReadmeWords)
	}
	head := strings.Join(words[:min(firstWords, len(words))], " ")
	for _, want := range []string{"make run", "make test", "## Calling it", "curl", "## Deploying to AWS", "sam deploy", "The first key.", "infra/local operator"} {
		if !strings.Contains(head, want) {
			t.Errorf("the first %d words of README.md do not contain %q", firstWords, want)
		}
	}
}

// layoutEntry is one line of the README's Layout block: a path ending in "/" opens a group whose
// indented lines name packages inside it, comma-separated.
var layoutEntry = regexp.MustCompile(`^(\s*)(\S+(?:, \S+)*)\s{2,}\S`)

// The Layout block names only folders that exist, and every package folder of shared/ and
// infra/ (a group's direct children; deeper folders belong to their parent's description) but
// the families: the block names their tier, app.Families lists them and each one's package doc
// says what it is, so a new family is not one more place to edit by hand.
func TestReadmeLayoutMatchesTheTree(t *testing.T) {
	_, block, ok := strings.Cut(readme(t), "\n## Layout\n")
	if !ok {
		t.Fatal(`README.md has no "## Layout" section`)
	}
	_, block, _ = strings.Cut(block, "```\n")
	block, _, _ = strings.Cut(block, "```")
	named := map[string]bool{}
	group := ""
	for _, line := range strings.Split(block, "\n") {
		m := layoutEntry.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if m[1] == "" {
			group = ""
			if strings.HasSuffix(m[2], "/") {
				group = m[2]
			}
			named[strings.TrimSuffix(m[2], "/")] = true
			continue
		}
		for _, name := range strings.Split(m[2], ", ") {
			named[group+name] = true
		}
	}
	for path := range named {
		if strings.Contains(path, "<") {
			path, _, _ = strings.Cut(path, "<")
		}
		if _, err := os.Stat(filepath.Join(root, path)); err != nil {
			t.Errorf("README Layout names %s, which does not exist", path)
		}
	}
	if !named["shared/families"] {
		t.Error("README Layout does not name shared/families/, the families' tier")
	}
	for _, parent := range []string{"shared/platform", "shared/rules", "shared/workers", "shared/testing", "infra"} {
		entries, err := os.ReadDir(filepath.Join(root, parent))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() && e.Name() != "testdata" && !named[parent+"/"+e.Name()] {
				t.Errorf("README Layout does not name %s/%s: add it to its group with a few words on what it is", parent, e.Name())
			}
		}
	}
	if len(named) < 10 {
		t.Errorf("README Layout names only %d folders: its block was not parsed", len(named))
	}
}
