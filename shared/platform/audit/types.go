package audit

// Verbs is a set of the mutations a kind's events record: created, updated, deleted.
type Verbs uint8

// The verbs, one bit each.
const (
	Created Verbs = 1 << iota
	Updated
	Deleted
	// AllVerbs is what a kind whose resources are created, updated and deleted records.
	AllVerbs = Created | Updated | Deleted
)

// verbNames are the verbs' names in Type, in bit order.
var verbNames = []string{"created", "updated", "deleted"}

// Names returns the names of the verbs in v ("created", "updated", "deleted"), in that order.
func (v Verbs) Names() []string {
	var out []string
	for i, name := range verbNames {
		if v&(1<<i) != 0 {
			out = append(out, name)
		}
	}
	return out
}
