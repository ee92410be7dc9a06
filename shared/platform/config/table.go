package config

import "strings"

// Table is the README's configuration table: Vars as Markdown rows, in order, without their
// meanings (the README's length budget; `go doc -src` of Vars shows them).
func Table() string {
	var b strings.Builder
	b.WriteString("| variable | default | read by |\n|---|---|---|\n")
	for _, v := range Vars {
		def := ""
		if v.Default != "" {
			def = "`" + v.Default + "`"
		}
		b.WriteString("| `" + v.Name + "` | " + def + " | " + v.By.String() + " |\n")
	}
	return b.String()
}
