// Package openapi holds the facts of the platform's published API description (its OpenAPI
// file) that the tests check the API against: for every operation, whether a list takes a
// `filter`, the schema of its request body and of its JSON success response; and for every
// schema, its members with their types. The project owns the copy, testdata/openapi.json, so
// every test runs on a bare clone; TestCopyIsCurrent says how to regenerate it.
//
// The OpenAPI file predates some families the platform documents elsewhere (Kubernetes
// operators): testdata/supplement.json holds their operations and schemas, written from the
// platform's API reference, and Load adds them to the copy's; TestSupplementFollowsTheReference
// checks them against that reference where it is beside the checkout.
package openapi

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
)

//go:embed testdata/openapi.json
var factsJSON []byte

//go:embed testdata/supplement.json
var supplementJSON []byte

// Facts is the whole copy.
type Facts struct {
	// Operations in path order, then method order.
	Operations []Operation `json:"operations"`
	// Schemas by name.
	Schemas map[string]Schema `json:"schemas"`
}

// Operation is one method on one path.
type Operation struct {
	Method string `json:"method"` // upper case: GET, POST, PATCH, …
	Path   string `json:"path"`   // as the description writes it: /api_keys/{id}
	// Filter: the operation takes the `filter` query parameter (lists only).
	Filter bool `json:"filter,omitempty"`
	// Request names the schema of the JSON request body ("" without one).
	Request string `json:"request,omitempty"`
	// Response names the schema of the JSON success response ("" without one, as a 204).
	Response string `json:"response,omitempty"`
}

// Schema is one named object schema.
type Schema struct {
	Name    string   `json:"name"`
	Members []Member `json:"members"`
}

// Member is one property of a schema.
type Member struct {
	Name string `json:"name"`
	// Type is the JSON type: string, boolean, integer, number, array or object.
	Type string `json:"type"`
	// Ref names the schema of an object member, or of an array member's items when they are
	// objects ("" otherwise).
	Ref string `json:"ref,omitempty"`
	// Items is an array member's item type (string, object, …).
	Items string `json:"items,omitempty"`
	// Required: the schema lists the member as required.
	Required bool `json:"required,omitempty"`
}

// Zero is the zero value of the member's type as JSON decodes it: "", false, 0, [] or {}.
func (m Member) Zero() any {
	switch m.Type {
	case "string":
		return ""
	case "boolean":
		return false
	case "integer", "number":
		return 0
	case "array":
		return []any{}
	}
	return map[string]any{}
}

// Member returns the member called name.
func (s Schema) Member(name string) (Member, bool) {
	i := slices.IndexFunc(s.Members, func(m Member) bool { return m.Name == name })
	if i < 0 {
		return Member{}, false
	}
	return s.Members[i], true
}

// Names lists the members' names in the description's order.
func (s Schema) Names() []string {
	out := make([]string, len(s.Members))
	for i, m := range s.Members {
		out[i] = m.Name
	}
	return out
}

// Load decodes the project's copy and its supplement once.
var Load = sync.OnceValue(func() *Facts {
	var f, more Facts
	if err := json.Unmarshal(factsJSON, &f); err != nil {
		panic(fmt.Sprintf("openapi: testdata/openapi.json: %v", err))
	}
	if err := json.Unmarshal(supplementJSON, &more); err != nil {
		panic(fmt.Sprintf("openapi: testdata/supplement.json: %v", err))
	}
	for name, s := range more.Schemas {
		if _, dup := f.Schemas[name]; dup {
			panic("openapi: testdata/supplement.json repeats the schema " + name)
		}
		f.Schemas[name] = s
	}
	f.Operations = append(f.Operations, more.Operations...)
	return &f
})

// Lookup returns the operation of method on path.
func Lookup(method, path string) (Operation, bool) {
	for _, op := range Load().Operations {
		if op.Method == method && op.Path == path {
			return op, true
		}
	}
	return Operation{}, false
}

// SchemaNamed returns the schema called name.
func SchemaNamed(name string) (Schema, bool) {
	s, ok := Load().Schemas[name]
	return s, ok
}

// RequestSchema returns the schema of the request body of method on path.
func RequestSchema(method, path string) (Schema, bool) {
	op, ok := Lookup(method, path)
	if !ok || op.Request == "" {
		return Schema{}, false
	}
	return SchemaNamed(op.Request)
}

// ResponseSchema returns the schema of the JSON success response of method on path.
func ResponseSchema(method, path string) (Schema, bool) {
	op, ok := Lookup(method, path)
	if !ok || op.Response == "" {
		return Schema{}, false
	}
	return SchemaNamed(op.Response)
}

// Create returns the create form of a family's collection path (the request of POST
// collection, as "/api_keys" or "/edges/https/{edge_id}/routes"); ok is false when the
// platform has no such create.
func Create(collection string) (form Schema, ok bool) {
	return RequestSchema("POST", collection)
}

// Update returns the update form of the items of a family's collection path (the request of
// PATCH collection/{id}); ok is false when the platform has no such update.
func Update(collection string) (form Schema, ok bool) {
	return RequestSchema("PATCH", collection+"/{id}")
}
