package celcheck

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
)

var update = flag.Bool("update", false, "rewrite standard.txt from cel-go's declarations")

// celGoEnv is the environment standard.txt describes, as cel-go builds it.
func celGoEnv(t testing.TB) *cel.Env {
	e, err := cel.NewEnv(ext.Strings(), ext.Lists(), ext.Encoders())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func crossTypeComparison(name string, args []*cel.Type) bool {
	switch name {
	case "_<_", "_<=_", "_>_", "_>=_":
		return !args[0].IsExactType(args[1])
	}
	return false
}

// standard.txt is what cel-go declares.
func TestStandardIsCelGos(t *testing.T) {
	fs := celGoEnv(t).Functions()
	names := make([]string, 0, len(fs))
	for n := range fs {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		for _, o := range fs[n].OverloadDecls() {
			if crossTypeComparison(n, o.ArgTypes()) {
				continue // disabled unless cel.CrossTypeNumericComparisons
			}
			var args []string
			for _, a := range o.ArgTypes() {
				args = append(args, a.String())
			}
			style := "global"
			if o.IsMemberFunction() {
				style = "member"
			}
			fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\n", n, style, o.ID(), strings.Join(args, ";"), o.ResultType())
		}
	}
	if *update {
		if err := os.WriteFile("standard.txt", []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if b.String() != standardText {
		t.Fatal("standard.txt differs from cel-go's declarations: run this test with -update and commit it")
	}
}
