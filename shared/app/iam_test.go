package app_test

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/workers/certs"
)

// familyActions are the DynamoDB actions every request of the generic family may need: the
// auth read with the data (BatchGetItem), single reads (GetItem), the rate limit's counter
// (UpdateItem), and the actions a create's TransactWriteItems of puts, updates and condition
// checks is authorised by. listActions and deleteActions are what a list (Query) and a
// delete, or an update, which may release a guard, add.
var (
	familyActions = []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem",
		"dynamodb:UpdateItem", "dynamodb:ConditionCheckItem"}
	listActions   = []string{"dynamodb:Query"}
	deleteActions = []string{"dynamodb:DeleteItem"}
)

// neededActions are the DynamoDB actions the families served by f call, by the operations they
// serve; a family with routes beyond its operations may call anything the generic family does.
func neededActions(f app.Function) []string {
	need := slices.Clone(familyActions)
	for _, d := range f.Families {
		served := 0
		for _, op := range []resource.Operation{resource.OpCreate, resource.OpList, resource.OpGet, resource.OpUpdate, resource.OpDelete} {
			if d.Serves(op) {
				served++
			}
		}
		extra := len(d.Routes()) > served
		if extra || d.Serves(resource.OpList) {
			need = append(need, listActions...)
		}
		if extra || d.Serves(resource.OpDelete) || d.Serves(resource.OpUpdate) {
			need = append(need, deleteActions...)
		}
	}
	slices.Sort(need)
	return slices.Compact(need)
}

// Every HTTP function's IAM policy in template.yaml grants what its families call, and no other
// DynamoDB action: a missing action passes every local test and fails every request in AWS, and
// one more is a grant nothing needs.
func TestHTTPFunctionsMayCallWhatTheFamilyCalls(t *testing.T) {
	for _, f := range app.Functions() {
		var granted []string
		for _, a := range grantedActions(t, f.Name) {
			if strings.HasPrefix(a, "dynamodb:") {
				granted = append(granted, a)
			}
		}
		slices.Sort(granted)
		if need := neededActions(f); !slices.Equal(slices.Compact(granted), need) {
			t.Errorf("%s: its policy grants %v; its families call %v", f.Name, granted, need)
		}
	}
}

// A function may use the KMS key exactly when one of its families declares Seals, and then its
// main links the KMS client: a sealing family without either works locally (local key) and fails
// in AWS, and a function that keeps no secrets carries neither the permission nor the client.
func TestSealingFunctionsLinkKMSAndMayUseIt(t *testing.T) {
	const kmsseal = "tunnelapi/shared/platform/seal/kmsseal"
	for _, f := range app.Functions() {
		seals := slices.ContainsFunc(f.Families, func(d *resource.Descriptor) bool { return d.Seals })
		mayUse := slices.ContainsFunc(grantedActions(t, f.Name), func(a string) bool { return strings.HasPrefix(a, "kms:") })
		_, imports := parseGo(t, filepath.Join(root, "functions", f.Dir, "main.go"))
		links := imports[filepath.Base(kmsseal)] == kmsseal
		if mayUse != seals || links != seals {
			t.Errorf("%s: seals %v (its descriptors' Seals), but its policy grants KMS actions: %v, its main imports %s: %v",
				f.Name, seals, mayUse, kmsseal, links)
		}
	}
}

// grantedActions are the action names (service:Action) in the policies of function fn in
// template.yaml.
func grantedActions(t *testing.T, fn string) []string {
	t.Helper()
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
	var granted []string
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, ":") && !strings.ContainsAny(n.Value, " /") {
			granted = append(granted, n.Value)
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	policies := tpl.Resources[fn].Properties.Policies
	walk(&policies)
	return granted
}

// No HTTP function can call SQS: none links the SQS client (events leave through the table's
// stream, and the event worker is not an HTTP function) and none is granted an SQS action, so
// no request of any family makes an SQS call, in AWS as locally.
func TestHTTPFunctionsHaveNoSQS(t *testing.T) {
	const sqsClient = "github.com/aws/aws-sdk-go-v2/service/sqs"
	var pkgs []string
	for _, f := range app.Functions() {
		pkgs = append(pkgs, "./functions/"+f.Dir)
	}
	for _, w := range app.Workers {
		pkgs = append(pkgs, "./functions/"+w.Dir)
	}
	linking := map[string]bool{}
	for _, p := range pkgs {
		cmd := exec.Command("go", "list", "-deps", p)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", p, err)
		}
		linking[p] = slices.Contains(strings.Fields(string(out)), sqsClient)
	}
	for _, w := range app.Workers {
		if w.Trigger == "SQS" && !linking["./functions/"+w.Dir] {
			t.Fatalf("the SQS-triggered %s does not link %s: this check would see nothing", w.Name, sqsClient)
		}
	}
	tpl := templateMap(t)["Resources"].(map[string]any)
	for _, f := range app.Functions() {
		if linking["./functions/"+f.Dir] {
			t.Errorf("%s links %s", f.Name, sqsClient)
		}
		var grants func(v any) bool
		grants = func(v any) bool {
			switch v := v.(type) {
			case string:
				return strings.HasPrefix(v, "sqs:") || strings.HasPrefix(v, "SQS")
			case []any:
				return slices.ContainsFunc(v, grants)
			case map[string]any:
				for k, c := range v {
					if strings.HasPrefix(k, "SQS") || grants(c) {
						return true
					}
				}
			}
			return false
		}
		if grants(dig(tpl[f.Name].(map[string]any), "Properties", "Policies")) {
			t.Errorf("%s's policy grants an SQS action in template.yaml", f.Name)
		}
	}
}

// The certificate worker's role may make exactly the Route 53 calls its provider makes (the
// methods of certs.Route53API): one missing fails every job in AWS only, one more is a grant
// nothing needs. The grants for agent ingress zones (any hosted zone, creation) exist only with
// a delegation set, and the worker is told its id and the service's zone.
func TestCertWorkerRoute53GrantsAreItsCalls(t *testing.T) {
	calls := map[string]bool{}
	api := reflect.TypeFor[certs.Route53API]()
	for i := range api.NumMethod() {
		calls["route53:"+api.Method(i).Name] = true
	}
	granted := map[string]bool{}
	for _, a := range grantedActions(t, "CertWorkerFunction") {
		if strings.HasPrefix(a, "route53:") {
			granted[a] = true
		}
	}
	if !maps.Equal(calls, granted) {
		t.Errorf("CertWorkerFunction is granted %v; its Route 53 client calls %v", slices.Sorted(maps.Keys(granted)), slices.Sorted(maps.Keys(calls)))
	}
	fn := templateMap(t)["Resources"].(map[string]any)["CertWorkerFunction"]
	env, _ := dig(fn, "Properties", "Environment", "Variables").(map[string]any)
	if ref := dig(env, "DELEGATION_SET_ID", "Ref"); ref != "DelegationSetId" {
		t.Errorf("CertWorkerFunction's DELEGATION_SET_ID is %v, want the DelegationSetId parameter", env["DELEGATION_SET_ID"])
	}
	if ref := dig(env, "HOSTED_ZONE_ID", "Ref"); ref != "HostedZone" {
		t.Errorf("CertWorkerFunction's HOSTED_ZONE_ID is %v, want the HostedZone", env["HOSTED_ZONE_ID"])
	}
	for _, st := range dig(fn, "Properties", "Policies").([]any)[0].(map[string]any)["Statement"].([]any) {
		cond, _ := dig(st, "Fn::If").([]any)
		action := fmt.Sprint(dig(st, "Action"))
		if len(cond) == 3 {
			action = fmt.Sprint(dig(cond[1], "Action"))
		}
		wide := strings.Contains(action, "CreateHostedZone") || strings.Contains(action, "DeleteHostedZone")
		if wide && (len(cond) != 3 || cond[0] != "HasDelegationSet") {
			t.Errorf("%s is granted without the HasDelegationSet condition", action)
		}
	}
}
