package backends

import (
	"context"
	"strconv"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// FailoverItem is a stored failover backend: its children in the order they are tried.
type FailoverItem struct {
	store.Meta
	text
	Composite
}

// FailoverJSON is the wire form of a failover backend.
type FailoverJSON struct {
	resource.Head
	Backends []string `json:"backends"`
}

type failoverBody struct {
	api.Text
	Backends *[]string `json:"backends"`
}

// MaxFailoverBackends is how many backends one failover backend may list.
const MaxFailoverBackends = 20

var failoverRules = compositeRules{kind: failover, childCode: CodeFailoverChild, max: MaxFailoverBackends, maxCode: CodeTooManyFailover}

// FailoverBackendsDescriptor is the /backends/failover family.
var FailoverBackendsDescriptor = &resource.Descriptor{
	Path: "/backends/failover", Prefix: ids.FailoverBackend, ListKey: "backends", EventKind: "failover_backend",
	Binding: func() resource.Binding { return resource.Bind(newBackends[FailoverItem, *FailoverItem, failoverBody]) },
}

// FailoverBackends is the failover backend family's rules.
type FailoverBackends = Backends[FailoverItem, *FailoverItem, failoverBody]

func (it *FailoverItem) wire(r *api.Request, h resource.Head) any {
	return FailoverJSON{Head: h, Backends: api.Slice(it.Children)}
}

// apply sets the ordered list of backends, each at most once.
func (it *FailoverItem) apply(ctx context.Context, k *resource.Kit, r *api.Request, in *failoverBody, m *resource.Mutation, create bool) error {
	if in.Backends == nil {
		return nil
	}
	list := *in.Backends
	fields := make([]string, len(list))
	for i, id := range list {
		fields[i] = "backends[" + strconv.Itoa(i) + "]"
		for j := range i {
			if list[j] == id {
				return api.Invalid(fields[i], "backend %s is listed twice (backends[%d] and backends[%d])", api.Describe(id), j, i)
			}
		}
	}
	return it.link(ctx, k, r, m, it.ID, failoverRules, list, fields, create)
}
