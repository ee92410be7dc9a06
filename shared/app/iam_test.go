package app_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"tunnelapi/shared/app"
)

// familyActions are the DynamoDB actions the generic family's requests need: the auth read with
// the data (BatchGetItem), single reads (GetItem), lists (Query), and the actions a
// TransactWriteItems of puts, updates, deletes and condition checks is authorised by.
var familyActions = []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:PutItem",
	"dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"}

// Every HTTP function's IAM policy in template.yaml grants what the generic family calls: a
// missing action passes every local test and fails every request in AWS.
func TestHTTPFunctionsMayCallWhatTheFamilyCalls(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tpl struct {
		Resources map[string]struct {
			Properties struct {
				Policies yaml.Node `yaml:"Policies"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(raw, &tpl); err != nil {
		t.Fatal(err)
	}
	for _, f := range app.Functions() {
		var granted []string
		var walk func(n *yaml.Node)
		walk = func(n *yaml.Node) {
			if n.Kind == yaml.ScalarNode && strings.HasPrefix(n.Value, "dynamodb:") {
				granted = append(granted, n.Value)
			}
			for _, c := range n.Content {
				walk(c)
			}
		}
		policies := tpl.Resources[f.Name].Properties.Policies
		walk(&policies)
		for _, want := range familyActions {
			if !slices.Contains(granted, want) {
				t.Errorf("%s: its policy does not grant %s", f.Name, want)
			}
		}
	}
}
