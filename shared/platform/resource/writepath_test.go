package resource

import (
	"context"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/store"
)

// callStacks records, by point of a write, the functions on the call stack when it is reached.
type callStacks struct {
	mu sync.Mutex
	at map[string][][]string
}

func (s *callStacks) record(point string) {
	pcs := make([]uintptr, 128)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	var stack []string
	for {
		f, more := frames.Next()
		stack = append(stack, f.Function)
		if !more {
			break
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at == nil {
		s.at = map[string][][]string{}
	}
	s.at[point] = append(s.at[point], stack)
}

// stackTable is a table client that records the call stack of each TransactWriteItems.
type stackTable struct {
	store.Client
	stacks *callStacks
}

func (t stackTable) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	t.stacks.record("TransactWriteItems")
	return t.Client.TransactWriteItems(ctx, in, opts...)
}

// probedWidgets are widgets whose write hooks record their call stack.
type probedWidgets struct {
	widgets
	stacks *callStacks
}

// probeStacks is where the probedWidgets of the test record.
var probeStacks *callStacks

func newProbedWidgets(f *Family[widget, *widget]) probedWidgets {
	return probedWidgets{widgets: widgets{f}, stacks: probeStacks}
}

func (w probedWidgets) Create(ctx context.Context, r *api.Request, it *widget, m *Mutation) (any, error) {
	w.stacks.record("Create")
	return w.widgets.Create(ctx, r, it, m)
}

func (w probedWidgets) Update(ctx context.Context, r *api.Request, it *widget, m *Mutation) error {
	w.stacks.record("Update")
	return w.widgets.Update(ctx, r, it, m)
}

func (w probedWidgets) Delete(ctx context.Context, r *api.Request, it *widget, m *Mutation) error {
	w.stacks.record("Delete")
	return nil
}

// A write reads top to bottom: package resource builds the transaction (the hooks), asks
// authentication for its guard and commits it itself. No function of package auth is on the
// call stack while a hook builds a create, an update or a delete, nor when the transaction
// reaches the table's TransactWriteItems: nothing in auth calls back into resource.
func TestWritePathHasNoCallbackFromAuth(t *testing.T) {
	stacks := &callStacks{}
	probeStacks = stacks
	d := &Descriptor{Path: "/widgets", Prefix: ids.TunnelGroupBackend, ListKey: "widgets", EventKind: "widget",
		Binding: func() Binding { return Bind(newProbedWidgets) }}
	h := newHarnessOf(t, d, func(table store.Client) store.Client { return stackTable{table, stacks} })
	id := h.create("first")
	if code, out := h.do("PATCH", "/widgets/"+id, `{"name":"second"}`); code != http.StatusOK {
		t.Fatalf("update: %d %v", code, out)
	}
	if code, out := h.do("DELETE", "/widgets/"+id, ""); code != http.StatusNoContent {
		t.Fatalf("delete: %d %v", code, out)
	}
	// Each point, with the operation whose stacks, in order, must show it (so that a stack
	// that was not captured through the handler cannot pass).
	want := map[string][]string{
		"Create":             {"createOp"},
		"Update":             {"updateOp"},
		"Delete":             {"deleteOp"},
		"TransactWriteItems": {"createOp", "updateOp", "deleteOp"},
	}
	for point, ops := range want {
		got := stacks.at[point]
		if len(got) != len(ops) {
			t.Errorf("%s reached %d times, want %d", point, len(got), len(ops))
			continue
		}
		for i, stack := range got {
			if !slices.ContainsFunc(stack, func(fn string) bool { return strings.HasSuffix(fn, "(*core)."+ops[i]) }) {
				t.Errorf("%s of %s: resource's %s is not on the stack %v", point, ops[i], ops[i], stack)
			}
			for _, fn := range stack {
				if strings.HasPrefix(fn, "tunnelapi/shared/platform/auth.") {
					t.Errorf("%s of %s runs inside %s: auth calls back into resource", point, ops[i], fn)
				}
			}
		}
	}
}
