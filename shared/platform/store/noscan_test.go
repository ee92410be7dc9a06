package store_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// root is the checkout, from this package.
const root = "../../.."

// DESIGN.md property 4: no request path scans the table. Only test helpers may.
func TestNoScanOutsideTests(t *testing.T) {
	for _, dir := range []string{"shared", "functions", "infra"} {
		filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
				strings.Contains(path, filepath.Join("shared", "testing")) {
				return nil
			}
			b, _ := os.ReadFile(path)
			for _, bad := range []string{"ScanInput", "NewScanPaginator", ".Scan(ctx"} {
				if strings.Contains(string(b), bad) {
					t.Errorf("%s uses %s", path, bad)
				}
			}
			return nil
		})
	}
}
