package backends

import (
	"context"
	"maps"
	"slices"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// WeightedItem is a stored weighted backend: its children (in id order) and their weights.
type WeightedItem struct {
	store.Meta
	text
	Composite
	Weights map[string]int64 `dynamodbav:"weights"`
}

// WeightedJSON is the wire form of a weighted backend.
type WeightedJSON struct {
	resource.Head
	Backends map[string]int64 `json:"backends"`
}

type weightedBody struct {
	api.Text
	Backends *map[string]int64 `json:"backends"`
}

// Limits of a weighted backend: how many backends it may weigh, and the range of a weight.
const (
	MaxWeightedBackends = 20
	MaxWeight           = 10000
)

var weightedRules = compositeRules{kind: weighted, childCode: CodeWeightedChild, max: MaxWeightedBackends, maxCode: CodeTooManyWeighted}

// WeightedBackendsDescriptor is the /backends/weighted family.
var WeightedBackendsDescriptor = &resource.Descriptor{
	Path: "/backends/weighted", Prefix: ids.WeightedBackend, ListKey: "backends", EventKind: "weighted_backend",
	Binding: func() resource.Binding { return resource.Bind(newBackends[WeightedItem, *WeightedItem, weightedBody]) },
}

// WeightedBackends is the weighted backend family's rules.
type WeightedBackends = Backends[WeightedItem, *WeightedItem, weightedBody]

func (it *WeightedItem) wire(r *api.Request, h resource.Head) any {
	return WeightedJSON{Head: h, Backends: api.Map(it.Weights)}
}

// apply sets the backends and their weights (0 to MaxWeight each).
func (it *WeightedItem) apply(ctx context.Context, k *resource.Kit, r *api.Request, in *weightedBody, m *resource.Mutation, create bool) error {
	if in.Backends == nil {
		return nil
	}
	weights := *in.Backends
	list := slices.Sorted(maps.Keys(weights))
	fields := make([]string, len(list))
	for i, id := range list {
		fields[i] = "backends." + id
	}
	for i, id := range list {
		if w := weights[id]; w < 0 || w > MaxWeight {
			return api.BadRequest(CodeWeight, fields[i], "the weight %d of backend %s is out of range; it must be between 0 and %d", w, api.Describe(id), MaxWeight)
		}
	}
	if err := it.link(ctx, k, r, m, it.ID, weightedRules, list, fields, create); err != nil {
		return err
	}
	it.Weights = maps.Clone(weights)
	return nil
}
