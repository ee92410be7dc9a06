// Command gen writes what follows from the lists of package app, so that a family is declared
// once (its package and its line in app.Functions): every functions/<dir>/main.go, the Makefile's
// function list (functions.mk), the regions of template.yaml between "# BEGIN generated <name>"
// and "# END generated <name>" (each HTTP function with its settings, role and routes; each
// function's log group and failing alarm) and the dashboard's lines naming each function,
// audit.AuditKinds (shared/platform/audit/kinds_gen.go: the event kinds of the families, which
// eventsub accepts as subscription sources), each family package's items_decode.go (its item
// types read without reflection: store.Decoder), and, for a function with no events/<dir>/ folder yet, skeleton sample events that its author then
// fills in (existing samples carry hand-written bodies and are never rewritten). The rest of the
// template (parameters, table, queues, Pipes, the workers' functions, the other alarms) is
// hand-written. Run it with go generate ./... from the repository root:
//
//	go run ./shared/app/gen -root .
package main

import (
	"flag"
	"fmt"
	"log"
	"maps"
	"os"
	"path/filepath"
	"slices"
)

func main() {
	root := flag.String("root", ".", "the repository root")
	flag.Parse()
	files, err := Files(*root)
	if err != nil {
		log.Fatal(err)
	}
	for _, path := range slices.Sorted(maps.Keys(files)) {
		body := files[path]
		full := filepath.Join(*root, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			log.Fatal(err)
		}
		if old, err := os.ReadFile(full); err == nil && string(old) == string(body) {
			continue
		}
		if err := os.WriteFile(full, body, 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Println("wrote", path)
	}
}
