package backends_test

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"

	"tunnelapi/shared/app"
	"tunnelapi/shared/families/backends"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/hooktest"
	"tunnelapi/shared/testing/testkit"
)

// referrerItem stands for what references backends in other families (an edge's backend
// module): it references one backend of any kind through the package's helpers.
type referrerItem struct {
	store.Meta
	BackendID string `dynamodbav:"backend_id"`
}

type referrers struct {
	*resource.Family[referrerItem, *referrerItem]
}

func newreferrers(f *resource.Family[referrerItem, *referrerItem]) referrers { return referrers{f} }

func (f referrers) Render(r *api.Request, it *referrerItem) any {
	return map[string]any{"id": it.ID, "uri": resource.URI(r, f.Path, it.ID), "backend": backends.Ref(r, it.BackendID)}
}

func (referrers) Create(ctx context.Context, r *api.Request, it *referrerItem, m *resource.Mutation) (any, error) {
	var in struct {
		BackendID string `json:"backend_id"`
	}
	if err := api.Decode(r, &in); err != nil {
		return nil, err
	}
	it.BackendID = in.BackendID
	return nil, backends.Reference(m, "backend_id", in.BackendID)
}

func (referrers) Update(ctx context.Context, r *api.Request, it *referrerItem, m *resource.Mutation) error {
	return api.EmptyUpdate()
}

func (referrers) Delete(ctx context.Context, r *api.Request, it *referrerItem, m *resource.Mutation) error {
	backends.Release(m, it.BackendID)
	return nil
}

var referrersDescriptor = &resource.Descriptor{
	Path: "/test_referrers", Prefix: ids.TLSEdge, ListKey: "referrers", EventKind: "tls_edge",
	Binding: func() resource.Binding { return resource.Bind(newreferrers) },
}

// kindSamples is a valid create body of every backend kind.
var kindSamples = []struct {
	d    *resource.Descriptor
	body any
}{
	{backends.TunnelGroupBackendsDescriptor, map[string]any{"labels": map[string]string{"app": "web"}}},
	{backends.StaticBackendsDescriptor, map[string]any{"address": "origin.example.com:443"}},
	{backends.HTTPResponseBackendsDescriptor, map[string]any{"status_code": 503}},
	{backends.FailoverBackendsDescriptor, map[string]any{}},
	{backends.WeightedBackendsDescriptor, map[string]any{}},
}

// Every backend kind refuses its delete while something references it (6502) and allows it
// once the reference is gone; a reference to a missing backend is 6501, to no backend id 6526.
func TestReferencedBackendsAreNotDeleted(t *testing.T) {
	s := testkit.Start(t, append([]*resource.Descriptor{referrersDescriptor}, app.Families...)...)
	a := s.NewAccount(t)
	for _, k := range kindSamples {
		t.Run(k.d.EventKind, func(t *testing.T) {
			b := a.Do(t, "POST", k.d.Path, k.body).Expect(t, http.StatusCreated)["id"].(string)
			ref := a.Do(t, "POST", "/test_referrers", map[string]any{"backend_id": b}).Expect(t, http.StatusCreated)
			if got := ref["backend"].(map[string]any); got["id"] != b || got["uri"] != a.URL(k.d.Path+"/"+b) {
				t.Fatalf("backend ref %v", got)
			}
			a.Do(t, "DELETE", k.d.Path+"/"+b, nil).ExpectError(t, http.StatusBadRequest, backends.CodeInUse, "id")
			a.Do(t, "GET", k.d.Path+"/"+b, nil).Expect(t, http.StatusOK)
			a.Do(t, "DELETE", "/test_referrers/"+ref["id"].(string), nil).Expect(t, http.StatusNoContent)
			a.Do(t, "DELETE", k.d.Path+"/"+b, nil).Expect(t, http.StatusNoContent)
			a.Do(t, "POST", "/test_referrers", map[string]any{"backend_id": b}).ExpectError(t, http.StatusBadRequest, backends.CodeMissing, "backend_id")
		})
	}
	a.Do(t, "POST", "/test_referrers", map[string]any{"backend_id": ids.New(ids.IPPolicy)}).ExpectError(t, http.StatusBadRequest, backends.CodeNotABackend, "backend_id")
	a.Do(t, "POST", "/test_referrers", map[string]any{"backend_id": ids.TunnelGroupBackend + "_x"}).ExpectError(t, http.StatusBadRequest, backends.CodeMalformedID, "backend_id")
	other := s.NewAccount(t)
	theirs := other.Do(t, "POST", "/backends/tunnel_group", map[string]any{}).Expect(t, http.StatusCreated)["id"].(string)
	a.Do(t, "POST", "/test_referrers", map[string]any{"backend_id": theirs}).ExpectError(t, http.StatusBadRequest, backends.CodeMissing, "backend_id")
	if page := a.Do(t, "GET", "/test_referrers", nil).Expect(t, http.StatusOK); len(page["referrers"].([]any)) != 0 {
		t.Fatalf("refused references were stored: %v", page)
	}
}

// 20 deletes of a backend racing with referrers (edge stand-ins, and failover backends, or
// weighted ones for a failover victim) created against it leave no reference to a missing
// backend: either the backend survives with every referrer counted, or it is gone and no
// referrer was created.
func TestDeletesRacingReferences(t *testing.T) {
	s := testkit.Start(t, append([]*resource.Descriptor{referrersDescriptor}, app.Families...)...)
	a := s.NewAccount(t)
	for _, k := range kindSamples {
		t.Run(k.d.EventKind, func(t *testing.T) {
			composite := func(b string) (string, any) {
				if k.d == backends.FailoverBackendsDescriptor {
					return "/backends/weighted", map[string]any{"backends": map[string]int{b: 1}}
				}
				return "/backends/failover", map[string]any{"backends": []string{b}}
			}
			for round := range 3 {
				b := a.Do(t, "POST", k.d.Path, k.body).Expect(t, http.StatusCreated)["id"].(string)
				var wg sync.WaitGroup
				start := make(chan struct{})
				statuses := make(chan int, 60)
				for i := range 60 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						switch i % 3 {
						case 0:
							statuses <- a.Do(t, "DELETE", k.d.Path+"/"+b, nil).Status
						case 1:
							statuses <- a.Do(t, "POST", "/test_referrers", map[string]any{"backend_id": b}).Status
						default:
							path, body := composite(b)
							statuses <- a.Do(t, "POST", path, body).Status
						}
					}()
				}
				close(start)
				wg.Wait()
				close(statuses)
				for st := range statuses {
					if st >= 500 || st == http.StatusConflict {
						t.Fatalf("round %d: a request answered %d", round, st)
					}
				}
				checkReferences(t, s, a)
			}
		})
	}
}

// checkReferences fails t when a referrer or a failover or weighted backend of a's references a
// missing backend, when a backend's reference count differs from its referrers, or when
// failover and weighted backends reference each other in a cycle.
func checkReferences(t *testing.T, s *testkit.Stack, a *testkit.Account) {
	t.Helper()
	counts := map[string]int64{}
	edges := map[string][]string{}
	var refs []string
	if a.Do(t, "GET", "/test_referrers", nil).Status == http.StatusOK { // a stack serving the edge stand-ins
		refs, _ = a.WalkPages(t, "/test_referrers", "referrers")
	}
	for _, id := range refs {
		var it struct {
			BackendID string `dynamodbav:"backend_id"`
		}
		if err := s.DB.Get(context.Background(), store.ResourceKey(a.AccountID, id), &it); err != nil {
			t.Fatal(err)
		}
		counts[it.BackendID]++
	}
	for _, d := range []*resource.Descriptor{backends.FailoverBackendsDescriptor, backends.WeightedBackendsDescriptor} {
		list, _ := a.WalkPages(t, d.Path, d.ListKey)
		for _, id := range list {
			var it backends.Composite
			if err := s.DB.Get(context.Background(), store.ResourceKey(a.AccountID, id), &it); err != nil {
				t.Fatal(err)
			}
			for _, c := range it.Children {
				counts[c]++
			}
			edges[id] = it.Children
		}
	}
	for b, n := range counts {
		var meta store.Meta
		if err := s.DB.Get(context.Background(), store.ResourceKey(a.AccountID, b), &meta); err != nil {
			t.Fatalf("%d referrers point at %s: %v", n, b, err)
		}
		if meta.Refs != n {
			t.Fatalf("%s counts %d references, %d referrers exist", b, meta.Refs, n)
		}
	}
	if cycle := findCycle(edges); cycle != nil {
		t.Fatalf("stored backends reference each other in a cycle: %v", cycle)
	}
}

// findCycle returns a cycle of the graph edges, or nil.
func findCycle(edges map[string][]string) []string {
	const (
		open = 1
		done = 2
	)
	state := map[string]int{}
	var path []string
	var visit func(n string) []string
	visit = func(n string) []string {
		switch state[n] {
		case open:
			return append(slices.Clone(path), n)
		case done:
			return nil
		}
		state[n] = open
		path = append(path, n)
		for _, c := range edges[n] {
			if cycle := visit(c); cycle != nil {
				return cycle
			}
		}
		path = path[:len(path)-1]
		state[n] = done
		return nil
	}
	for n := range edges {
		if cycle := visit(n); cycle != nil {
			return cycle
		}
	}
	return nil
}

// CheckID tells no backend id (6526) from a malformed one of a backend kind (6527); Ref gives
// the kind's own path.
func TestBackendIDs(t *testing.T) {
	for _, k := range kindSamples {
		id := ids.New(k.d.Prefix)
		if err := backends.CheckID("backend_id", id); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if ref := backends.Ref(hooktest.Request(""), id); ref.URI != "https://"+hooktest.Host+k.d.Path+"/"+id {
			t.Fatalf("Ref(%s) = %v", id, ref)
		}
		hooktest.WantCode(t, backends.CheckID("f", k.d.Prefix+"_nope"), backends.CodeMalformedID, "f")
	}
	for _, bad := range []string{"", "nope", ids.New(ids.IPPolicy), "bkd_" + ids.New("x")} {
		hooktest.WantCode(t, backends.CheckID("f", bad), backends.CodeNotABackend, "f")
	}
}
