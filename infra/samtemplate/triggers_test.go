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
			problems = append(problems, onFailureProblems(tpl, w.Name)...)
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

// onFailureDestination is the queue fn's asynchronous invocations go to when they fail for
// good (its AWS::Lambda::EventInvokeConfig's OnFailure destination), "" for none.
func onFailureDestination(tpl *samtemplate.Template, fn string) string {
	for _, r := range tpl.Resources {
		if r.Type == "AWS::Lambda::EventInvokeConfig" && dig(r.Properties, "FunctionName", "Ref") == fn {
			return getAttOf(dig(r.Properties, "DestinationConfig", "OnFailure", "Destination"))
		}
	}
	return ""
}

// onFailureProblems holds a function invoked asynchronously (the usage worker: CloudWatch Logs
// invokes it so) to never dropping an event silently: its failed invocations go to a queue of
// the template that its role may send to and whose depth an alarm notifies.
func onFailureProblems(tpl *samtemplate.Template, fn string) []string {
	dest := onFailureDestination(tpl, fn)
	if q, ok := tpl.Resources[dest]; !ok || q.Type != "AWS::SQS::Queue" {
		return []string{fmt.Sprintf("%s has no on-failure destination queue (an AWS::Lambda::EventInvokeConfig): a batch failing every attempt is dropped", fn)}
	}
	var problems []string
	gs, _ := grants(tpl, fn)
	if !slices.ContainsFunc(gs, func(g grant) bool { return g.action == "sqs:SendMessage" && g.resource == dest }) {
		problems = append(problems, fmt.Sprintf("%s's role may not send to its on-failure destination %s", fn, dest))
	}
	alarmed := false
	for _, r := range tpl.Resources {
		if acts, _ := dig(r.Properties, "AlarmActions").([]any); r.Type != "AWS::CloudWatch::Alarm" || len(acts) == 0 {
			continue
		}
		ms, _ := dig(r.Properties, "Metrics").([]any)
		for _, m := range ms {
			dims, _ := dig(m, "MetricStat", "Metric", "Dimensions").([]any)
			for _, d := range dims {
				alarmed = alarmed || (dig(m, "MetricStat", "Metric", "Namespace") == "AWS/SQS" && dig(d, "Name") == "QueueName" && getAttOf(dig(d, "Value")) == dest)
			}
		}
	}
	if !alarmed {
		problems = append(problems, fmt.Sprintf("%s's on-failure destination %s has no alarm on its depth", fn, dest))
	}
	return problems
}

// Every worker's trigger, as deployed, is wired as its code expects.
func TestWorkerTriggers(t *testing.T) {
	for _, p := range triggerProblems(deployed(t)) {
		t.Error(p)
	}
}
