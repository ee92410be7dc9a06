package config

import "strings"

// Table is the README's configuration table: Vars as Markdown rows, in order.
func Table() string {
	var b strings.Builder
	b.WriteString("| variable | default | read by | meaning |\n|---|---|---|---|\n")
	for _, v := range Vars {
		def := ""
		if v.Default != "" {
			def = "`" + v.Default + "`"
		}
		b.WriteString("| `" + v.Name + "` | " + def + " | " + v.By.String() + " | " + v.Meaning + " |\n")
	}
	return b.String()
}
