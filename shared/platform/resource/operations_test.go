package resource

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
)

// routeRecorder is an api.Mux that keeps the patterns registered on it.
type routeRecorder struct{ patterns []string }

func (r *routeRecorder) Handle(pattern string, _ http.Handler) {
	r.patterns = append(r.patterns, pattern)
}

// notes is a family without an update: its hooks are Render and Create only.
type notes struct{ *Family[widget, *widget] }

func newNotes(f *Family[widget, *widget]) notes { return notes{f} }

func (n notes) Render(r *api.Request, it *widget) any {
	return widgetJSON{ID: it.ID, URI: URI(r, n.Path, it.ID)}
}

func (notes) Create(ctx context.Context, r *api.Request, it *widget, m *Mutation) (any, error) {
	return nil, nil
}

// A descriptor's Operations choose which of the five are routed, in their usual order, before
// its extra routes; zero routes all five.
func TestOperationsChooseTheRoutes(t *testing.T) {
	d := &Descriptor{Path: "/notes", Prefix: ids.TunnelGroupBackend, ListKey: "notes", EventKind: "note",
		Operations: OpCreate | OpGet,
		Binding: func() Binding {
			return Bind(newNotes, Route[notes]{Method: http.MethodPost, Pattern: "/{id}/flag", Status: http.StatusOK,
				Handle: func(notes, context.Context, *api.Request) (any, error) { return nil, nil }})
		}}
	want := []string{"POST /notes", "GET /notes/{id}", "POST /notes/{id}/flag"}
	rec := &routeRecorder{}
	d.Register(nil, rec, &api.Server{})
	if !slices.Equal(d.Routes(), want) || !slices.Equal(rec.patterns, want) {
		t.Fatalf("routes %v, registered %v, want %v", d.Routes(), rec.patterns, want)
	}
	if d.Offers(OpList) || d.Offers(OpUpdate) || d.Offers(OpDelete) || !d.Offers(OpCreate) || !d.Offers(OpGet) {
		t.Fatalf("Offers disagrees with Operations %b", d.Operations)
	}
	if got := widgetsDescriptor.Routes(); len(got) != 5 || !widgetsDescriptor.Offers(AllOperations) {
		t.Fatalf("a descriptor without Operations routes %v, want the five", got)
	}
}

// Hooks implement Updater exactly when their descriptor serves update: either way round, a
// mismatch stops Register instead of leaving an update unrouted or unimplemented.
func TestUpdaterMatchesOperations(t *testing.T) {
	for _, d := range []*Descriptor{
		{Path: "/notes", Prefix: ids.TunnelGroupBackend, Binding: func() Binding { return Bind(newNotes) }},
		{Path: "/widgets", Prefix: ids.TunnelGroupBackend, Operations: OpCreate | OpGet, Binding: func() Binding { return Bind(newWidgets) }},
	} {
		func() {
			defer func() {
				if msg, _ := recover().(string); !strings.Contains(msg, "Updater") {
					t.Errorf("%s with Operations %b registered without a panic naming Updater (%q)", d.Path, d.Operations, msg)
				}
			}()
			d.Register(nil, &routeRecorder{}, &api.Server{})
		}()
	}
}
