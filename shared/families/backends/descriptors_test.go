package backends

import (
	"testing"

	"tunnelapi/shared/platform/resource"
)

// Each backend kind's descriptor is formed from its kind alike (path, id prefix, list key and
// event kind), as Ref and the lookups by id assume.
func TestDescriptorsFollowTheirKind(t *testing.T) {
	for k, d := range map[kind]*resource.Descriptor{
		tunnelGroup: TunnelGroupBackendsDescriptor, static: StaticBackendsDescriptor,
		httpResponse: HTTPResponseBackendsDescriptor, failover: FailoverBackendsDescriptor,
		weighted: WeightedBackendsDescriptor,
	} {
		want := [4]string{k.path, k.prefix, "backends", k.snake + "_backend"}
		got := [4]string{d.Path, d.Prefix, d.ListKey, d.EventKind}
		if got != want {
			t.Errorf("the %s backends' descriptor is %q, want %q (path, prefix, list key, event kind)", k.name, got, want)
		}
	}
}
