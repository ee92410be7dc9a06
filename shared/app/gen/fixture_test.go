package main

import (
	"context"
	"net/http"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// The fixture family: a tiny family as a new package would declare it, to show that its
// descriptor and its line in the list of functions are all the rest needs (TestNewFamily).

// widgetItem is a fixture widget as stored.
type widgetItem struct {
	store.Meta
	Name string `dynamodbav:"name"`
}

// widgets are the fixture family's hooks.
type widgets struct {
	*resource.Family[widgetItem, *widgetItem]
}

func newWidgets(f *resource.Family[widgetItem, *widgetItem]) widgets { return widgets{f} }

// Render returns a widget as GET returns it.
func (w widgets) Render(r *api.Request, it *widgetItem) any {
	return map[string]string{"id": it.ID, "uri": resource.URI(r, w.Path, it.ID), "name": it.Name}
}

// Create names a new widget from the request body.
func (w widgets) Create(ctx context.Context, r *api.Request, it *widgetItem, m *resource.Mutation) (any, error) {
	var in struct {
		Name string `json:"name"`
	}
	if err := api.Decode(r, &in); err != nil {
		return nil, err
	}
	it.Name = in.Name
	return nil, nil
}

// polish is an action on a widget beyond the five operations.
func (w widgets) polish(ctx context.Context, r *api.Request) (any, error) { return nil, nil }

// widgetsDescriptor is the fixture family: no update, one route of its own, a part kind, sealing
// secrets and reading the deployment settings.
var widgetsDescriptor = &resource.Descriptor{
	Path: "/fixture_widgets", Prefix: "fxw", ListKey: "widgets", EventKind: "fixture_widget",
	PartEventKinds: []string{"fixture_widget_part"},
	Operations:     resource.OpCreate | resource.OpGet | resource.OpList | resource.OpDelete,
	Reads:          []config.Section{config.DeploymentSettings},
	Binding: func() resource.Binding {
		return resource.Bind(newWidgets, resource.Route[widgets]{
			Method: http.MethodPost, Pattern: "/{id}/polish", Status: http.StatusNoContent, Handle: widgets.polish,
		}).Keeping(resource.Seals)
	},
}

// recorder is an api.Mux that keeps the patterns registered on it.
type recorder struct{ routes []string }

func (r *recorder) Handle(pattern string, _ http.Handler) { r.routes = append(r.routes, pattern) }
