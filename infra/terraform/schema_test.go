package terraform

import (
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"testing"

	"tunnelapi/shared/testing/testkit"
)

// schema is the provider's schema as terraform providers schema -json gives it.
type schema struct {
	Resources   map[string]blockSchema `json:"resource_schemas"`
	DataSources map[string]blockSchema `json:"data_source_schemas"`
}

type blockSchema struct {
	Block struct {
		Attributes map[string]struct {
			Optional bool `json:"optional"`
			Required bool `json:"required"`
		} `json:"attributes"`
	} `json:"block"`
}

// resources are the provider's resource types, sorted.
func (s schema) resources() []string { return slices.Sorted(maps.Keys(s.Resources)) }

// dataSources are the provider's data source types, sorted.
func (s schema) dataSources() []string { return slices.Sorted(maps.Keys(s.DataSources)) }

// lookups are the arguments a data source can be looked up by: its required one (id), or each
// of its optional ones (id, and a name the provider filters the list by).
func (s schema) lookups(dataSource string) []string {
	var keys []string
	for name, a := range s.DataSources[dataSource].Block.Attributes {
		if a.Optional || a.Required {
			keys = append(keys, name)
		}
	}
	slices.Sort(keys)
	return keys
}

var (
	schemaOnce sync.Once
	schemaOf   schema
)

// providerSchema returns the built provider's schema, read once.
func providerSchema(t *testing.T, ts toolset, s *testkit.Stack) schema {
	t.Helper()
	schemaOnce.Do(func() {
		w := newWorkspace(t, ts, s, s.NewAccount(t))
		w.write("")
		var out struct {
			Providers map[string]schema `json:"provider_schemas"`
		}
		if err := json.Unmarshal([]byte(w.must("providers schema", "providers", "schema", "-json")), &out); err != nil {
			t.Fatalf("terraform providers schema -json: %v", err)
		}
		schemaOf = out.Providers["registry.terraform.io/ngrok/ngrok"]
	})
	if len(schemaOf.Resources) == 0 || len(schemaOf.DataSources) == 0 {
		t.Fatalf("the provider's schema has %d resource types and %d data sources", len(schemaOf.Resources), len(schemaOf.DataSources))
	}
	return schemaOf
}
