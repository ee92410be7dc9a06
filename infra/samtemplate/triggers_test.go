package samtemplate_test

import (
	"fmt"
	"slices"
	"testing"

	"tunnelapi/infra/samtemplate"
	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/metrics"
)

// allFunctions are the logical ids of every function, HTTP and worker.
func allFunctions() []string {
	var out []string
	for _, f := range app.Functions() {
		out = append(out, f.Name)
	}
	for _, w := range app.Workers {
		out = append(out, w.Name)
	}
	return append(out, app.Operator.Name)
}

// number is a template's numeric value (JSON numbers decode as float64).
func number(v any) (float64, bool) {
	f, ok := v.(float64)
	return f, ok
}

// triggerProblems holds every worker to its trigger: an SQS trigger reports batch item failures
// and reads a queue with a dead-letter queue and a visibility timeout of at least six times the
// function's timeout (AWS's advice, so a batch that times out is not read twice at once); a
// scheduled worker is a rule's target; one serving HTTP API routes of its own may be invoked by
// API Gateway; the worker fed by logs is the destination of a filter
// of the usage lines on every other function's log group, and CloudWatch Logs may invoke it.
func triggerProblems(tpl *samtemplate.Template) []string {
	var problems []string
	for _, w := range app.Workers {
		fnTimeout, ok := number(tpl.Resources[w.Name].Properties["Timeout"])
		if !ok {
			problems = append(problems, fmt.Sprintf("%s has no numeric Timeout", w.Name))
		}
		found := 0
		logged := map[string]bool{}
		for name, r := range tpl.Resources {
			switch {
			case w.Trigger == "SQS" && r.Type == "AWS::Lambda::EventSourceMapping" && dig(r.Properties, "FunctionName", "Ref") == w.Name:
				found++
				types, _ := r.Properties["FunctionResponseTypes"].([]any)
				if !slices.Contains(types, any("ReportBatchItemFailures")) {
					problems = append(problems, fmt.Sprintf("%s: %s does not report batch item failures", w.Name, name))
				}
				q := getAttOf(r.Properties["EventSourceArn"])
				queue, ok := tpl.Resources[q]
				if !ok || queue.Type != "AWS::SQS::Queue" {
					problems = append(problems, fmt.Sprintf("%s: %s reads %q, no queue of the template", w.Name, name, q))
					continue
				}
				if vt, _ := number(queue.Properties["VisibilityTimeout"]); vt < 6*fnTimeout {
					problems = append(problems, fmt.Sprintf("%s: queue %s's visibility timeout %vs is under 6 × the function's timeout %vs", w.Name, q, vt, fnTimeout))
				}
				dlq := getAttOf(dig(queue.Properties, "RedrivePolicy", "deadLetterTargetArn"))
				if d, ok := tpl.Resources[dlq]; !ok || d.Type != "AWS::SQS::Queue" {
					problems = append(problems, fmt.Sprintf("%s: queue %s has no dead-letter queue", w.Name, q))
				}
			case w.Trigger == "Logs" && r.Type == "AWS::Logs::SubscriptionFilter" && getAttOf(r.Properties["DestinationArn"]) == w.Name:
				logged[dig(r.Properties, "LogGroupName", "Ref").(string)] = true
				if r.Properties["FilterPattern"] != metrics.UsageFilterPattern {
					problems = append(problems, fmt.Sprintf("%s: %s filters %q, want %q", w.Name, name, r.Properties["FilterPattern"], metrics.UsageFilterPattern))
				}
			case w.Trigger == "HttpApi" && r.Type == "AWS::Lambda::Permission" && r.Properties["Principal"] == "apigateway.amazonaws.com" &&
				(dig(r.Properties, "FunctionName", "Ref") == w.Name || getAttOf(r.Properties["FunctionName"]) == w.Name):
				found++
			case w.Trigger == "Schedule" && r.Type == "AWS::Events::Rule":
				targets, _ := r.Properties["Targets"].([]any)
				for _, tg := range targets {
					if getAttOf(dig(tg, "Arn")) == w.Name {
						found++
					}
				}
			}
		}
		if w.Trigger == "Logs" {
			// Fed by every other function's log group, and invoked by CloudWatch Logs only.
			for _, fn := range allFunctions() {
				if fn != w.Name && !logged[fn+"LogGroup"] {
					problems = append(problems, fmt.Sprintf("%s: %s's log group has no subscription filter sending it the usage lines", w.Name, fn))
				}
			}
			if logged[w.Name+"LogGroup"] {
				problems = append(problems, fmt.Sprintf("%s is subscribed to its own log group", w.Name))
			}
			found = 0
			for _, r := range tpl.Resources {
				if r.Type == "AWS::Lambda::Permission" && getAttOf(r.Properties["FunctionName"]) == w.Name && r.Properties["Principal"] == "logs.amazonaws.com" {
					found++
				}
			}
		}
		if found != 1 {
			problems = append(problems, fmt.Sprintf("%s has %d %s triggers, want 1", w.Name, found, w.Trigger))
		}
	}
	return problems
}

// Every worker's trigger, as deployed, is wired as its code expects.
func TestWorkerTriggers(t *testing.T) {
	for _, p := range triggerProblems(deployed(t)) {
		t.Error(p)
	}
}
