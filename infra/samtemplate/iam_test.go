package samtemplate_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"tunnelapi/infra/samtemplate"
	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/seal/kmsseal"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/workers/certs"
)

// grant is one action an Allow statement of a function's role grants, with the condition the
// statement is under (Fn::If), if any, and the resource it names by GetAtt, if it names one.
type grant struct {
	action, condition, resource string
}

// grants returns the actions the role of function fn allows, and its managed policies.
func grants(tpl *samtemplate.Template, fn string) ([]grant, []string) {
	role := getAttOf(tpl.Resources[fn].Properties["Role"])
	props := tpl.Resources[role].Properties
	var out []grant
	var statement func(st any, cond string)
	statement = func(st any, cond string) {
		if l, ok := dig(st, "Fn::If").([]any); ok && len(l) == 3 {
			statement(l[1], fmt.Sprint(l[0]))
			statement(l[2], fmt.Sprint(l[0]))
			return
		}
		if dig(st, "Effect") != "Allow" {
			return
		}
		res := getAttOf(dig(st, "Resource"))
		switch a := dig(st, "Action").(type) {
		case string:
			out = append(out, grant{a, cond, res})
		case []any:
			for _, x := range a {
				out = append(out, grant{fmt.Sprint(x), cond, res})
			}
		}
	}
	policies, _ := props["Policies"].([]any)
	for _, p := range policies {
		sts, _ := dig(p, "PolicyDocument", "Statement").([]any)
		for _, st := range sts {
			statement(st, "")
		}
	}
	var managed []string
	arns, _ := props["ManagedPolicyArns"].([]any)
	for _, a := range arns {
		managed = append(managed, fmt.Sprint(a))
	}
	return out, managed
}

// actions are the granted actions of service (the prefix before ':'), sorted and unique.
func actions(gs []grant, service string) []string {
	var out []string
	for _, g := range gs {
		if strings.HasPrefix(g.action, service+":") {
			out = append(out, g.action)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// methodActions are the IAM actions of the methods of the client interface I: service:Method,
// a batch call authorised by its single action (SendMessageBatch by sqs:SendMessage).
func methodActions[I any](service string, rename map[string][]string) []string {
	var out []string
	api := reflect.TypeFor[I]()
	for i := range api.NumMethod() {
		m := api.Method(i).Name
		if r, ok := rename[m]; ok {
			for _, a := range r {
				out = append(out, service+":"+a)
			}
			continue
		}
		out = append(out, service+":"+strings.TrimSuffix(m, "Batch"))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// The DynamoDB actions every request of the generic family may need: the auth read with the data
// (BatchGetItem), single reads (GetItem), the rate limit's counter (UpdateItem), and the actions
// a create's TransactWriteItems of puts, updates and condition checks is authorised by; what a
// list (Query) and a delete or an update, which may release a guard (DeleteItem), add.
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
			if d.Offers(op) {
				served++
			}
		}
		extra := len(d.Routes()) > served
		if extra || d.Offers(resource.OpList) {
			need = append(need, listActions...)
		}
		if extra || d.Offers(resource.OpDelete) || d.Offers(resource.OpUpdate) {
			need = append(need, deleteActions...)
		}
	}
	slices.Sort(need)
	return slices.Compact(need)
}

// Managed policies SAM attaches: logs and traces to every function, and the queue poller's
// rights to a function an SQS queue triggers.
const (
	basicPolicy = "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"
	xrayPolicy  = "arn:aws:iam::aws:policy/AWSXrayWriteOnlyAccess"
	sqsPolicy   = "arn:aws:iam::aws:policy/service-role/AWSLambdaSQSQueueExecutionRole"
)

const (
	kmssealPkg  = "tunnelapi/shared/platform/seal/kmsseal"
	sqsPkg      = "github.com/aws/aws-sdk-go-v2/service/sqs"
	stscredsPkg = "github.com/aws/aws-sdk-go-v2/credentials/stscreds"
)

// iamProblems holds every function's role to what its code calls.
func iamProblems(t *testing.T, tpl *samtemplate.Template) []string {
	var problems []string
	kmsCalls := methodActions[kmsseal.KMSAPI]("kms", nil)
	sqsCalls := methodActions[queue.API]("sqs", nil)
	dynamoCalls := methodActions[store.Client]("dynamodb", map[string][]string{
		"TransactWriteItems": {"PutItem", "UpdateItem", "DeleteItem", "ConditionCheckItem"},
		"BatchWriteItem":     {"PutItem", "DeleteItem"},
		"CreateTable":        nil, "DescribeTable": nil, "UpdateTimeToLive": nil, "DeleteTable": nil,
	})
	route53Calls := methodActions[certs.Route53API]("route53", nil)
	// common holds what every function's role must satisfy; want is the managed policies.
	common := func(name, dir string, gs []grant, managed, want []string) {
		for _, g := range gs {
			if strings.Contains(g.action, "*") {
				problems = append(problems, fmt.Sprintf("%s is granted %s: a wildcard grants what no code calls", name, g.action))
			}
		}
		if !slices.Equal(managed, want) {
			problems = append(problems, fmt.Sprintf("%s has managed policies %v, want %v", name, managed, want))
		}
		kms := actions(gs, "kms")
		if extra := without(kms, kmsCalls); len(extra) > 0 {
			problems = append(problems, fmt.Sprintf("%s is granted %v, which its KMS client never calls", name, extra))
		}
		if l := links(t, dir, kmssealPkg); l != (len(kms) > 0) {
			problems = append(problems, fmt.Sprintf("%s links %s: %v, is granted KMS actions: %v", name, kmssealPkg, l, kms))
		}
		if l, sts := links(t, dir, stscredsPkg), actions(gs, "sts"); l != slices.Equal(sts, []string{"sts:AssumeRole"}) {
			problems = append(problems, fmt.Sprintf("%s links %s: %v, is granted %v", name, stscredsPkg, l, sts))
		}
		if r := actions(gs, "route53"); name != "CertWorkerFunction" && len(r) > 0 {
			problems = append(problems, fmt.Sprintf("%s is granted %v; only the certificate worker calls Route 53", name, r))
		}
		for _, g := range gs {
			switch s, _, _ := strings.Cut(g.action, ":"); s {
			case "dynamodb", "sqs", "kms", "sts", "route53":
			default:
				problems = append(problems, fmt.Sprintf("%s is granted %s, a service no code of it calls", name, g.action))
			}
		}
	}
	for _, f := range app.Functions() {
		gs, managed := grants(tpl, f.Name)
		common(f.Name, f.Dir, gs, managed, []string{basicPolicy, xrayPolicy})
		if got, need := actions(gs, "dynamodb"), neededActions(f); !slices.Equal(got, need) {
			problems = append(problems, fmt.Sprintf("%s is granted %v; its families call %v", f.Name, got, need))
		}
		var kms []string // sorted, as actions returns them
		if slices.ContainsFunc(f.Families, func(d *resource.Descriptor) bool { return d.Secrets()&resource.Opens != 0 }) {
			kms = append(kms, "kms:Decrypt")
		}
		if slices.ContainsFunc(f.Families, func(d *resource.Descriptor) bool { return d.Secrets()&resource.Seals != 0 }) {
			kms = append(kms, "kms:GenerateDataKey")
		}
		if got := actions(gs, "kms"); !slices.Equal(got, kms) {
			problems = append(problems, fmt.Sprintf("%s is granted %v; its descriptors' Seals and Opens need %v", f.Name, got, kms))
		}
		if s := actions(gs, "sqs"); len(s) > 0 || links(t, f.Dir, sqsPkg) {
			problems = append(problems, fmt.Sprintf("%s is granted %v, links %s: %v; no HTTP function calls SQS (events leave through the stream)",
				f.Name, s, sqsPkg, links(t, f.Dir, sqsPkg)))
		}
	}
	for _, w := range app.Workers {
		gs, managed := grants(tpl, w.Name)
		// Lambda itself sends a failed asynchronous invocation to the on-failure destination,
		// with the function's role: that grant is no call of the code.
		if dest := onFailureDestination(tpl, w.Name); dest != "" {
			gs = slices.DeleteFunc(gs, func(g grant) bool { return g.action == "sqs:SendMessage" && g.resource == dest })
		}
		want := []string{basicPolicy, xrayPolicy}
		if w.Trigger == "SQS" {
			want = append(want, sqsPolicy)
		}
		common(w.Name, w.Dir, gs, managed, want)
		if extra := without(actions(gs, "dynamodb"), dynamoCalls); len(extra) > 0 {
			problems = append(problems, fmt.Sprintf("%s is granted %v, which the store never calls", w.Name, extra))
		}
		if extra := without(actions(gs, "sqs"), sqsCalls); len(extra) > 0 {
			problems = append(problems, fmt.Sprintf("%s is granted %v, which its SQS client never calls", w.Name, extra))
		}
		if l := links(t, w.Dir, sqsPkg); l != (len(actions(gs, "sqs")) > 0) {
			problems = append(problems, fmt.Sprintf("%s links %s: %v, is granted %v", w.Name, sqsPkg, l, actions(gs, "sqs")))
		}
	}
	// The certificate worker may make exactly its Route 53 client's calls; creating and deleting
	// hosted zones (agent ingresses) only with a delegation set.
	gs, _ := grants(tpl, "CertWorkerFunction")
	if got := actions(gs, "route53"); !slices.Equal(got, route53Calls) {
		problems = append(problems, fmt.Sprintf("CertWorkerFunction is granted %v; its Route 53 client calls %v", got, route53Calls))
	}
	for _, g := range gs {
		if (g.action == "route53:CreateHostedZone" || g.action == "route53:DeleteHostedZone") && g.condition != "HasDelegationSet" {
			problems = append(problems, fmt.Sprintf("CertWorkerFunction is granted %s under condition %q, want HasDelegationSet", g.action, g.condition))
		}
	}
	return problems
}

// without returns the members of have that are not in allowed.
func without(have, allowed []string) []string {
	var out []string
	for _, a := range have {
		if !slices.Contains(allowed, a) {
			out = append(out, a)
		}
	}
	return out
}

// Every function's role, as deployed, grants the actions its code calls and no other: a missing
// one passes every local test and fails in AWS; one more is a grant nothing needs.
func TestRolesGrantWhatTheCodeCalls(t *testing.T) {
	tpl := deployed(t)
	for _, p := range iamProblems(t, tpl) {
		t.Error(p)
	}
	gs, _ := grants(tpl, app.Functions()[0].Name)
	if len(gs) == 0 {
		t.Fatal("the first function's role grants nothing: this check reads no policy")
	}
}
