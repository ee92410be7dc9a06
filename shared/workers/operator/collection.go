package operator

import (
	"tunnelapi/shared/platform/resource"
)

// Collection is a family as an erasure reads it: the id prefix of its resources, which an
// account's collection of them holds (store.Collection), and what frees the items they hold
// outside the account's partitions (its Descriptor's Release; nil when they hold none).
type Collection struct {
	Prefix  string
	Release resource.Releaser
}

// CollectionsOf is the collections of families, for an operator run in process (the local
// server, tests); the operator function's main lists them without the descriptors (Main).
func CollectionsOf(families []*resource.Descriptor) []Collection {
	out := make([]Collection, len(families))
	for i, d := range families {
		out[i] = Collection{Prefix: d.Prefix, Release: d.Release}
	}
	return out
}
