package main

import (
	"fmt"
	"regexp"
	"strings"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/metrics"
)

// region is a part of template.yaml the generator writes, between a "# BEGIN generated <name>"
// and a "# END generated <name>" line; the rest of the template is hand-written and kept as it
// is.
type region struct{ name, body string }

// logGroups is the region of each function's log group.
func logGroups(fns []string) region {
	var b strings.Builder
	for _, fn := range fns {
		fmt.Fprintf(&b, `  %sLogGroup:
    Type: AWS::Logs::LogGroup
    Properties: { RetentionInDays: { "Ref": LogRetentionDays } }
`, fn)
	}
	return region{"log groups", b.String()}
}

// alarms is the region of each function's alarm on its failed and throttled invocations.
func alarms(fns []string) region {
	var b strings.Builder
	for _, fn := range fns {
		metric := func(id, name string) string {
			return fmt.Sprintf(`        - { Id: %s, ReturnData: false, MetricStat: { Metric: { Namespace: AWS/Lambda, MetricName: %s, Dimensions: [{ Name: FunctionName, Value: { "Ref": %s } }] }, Period: 300, Stat: Sum } }
`, id, name, fn)
		}
		fmt.Fprintf(&b, `  %[1]sFailingAlarm:
    Type: AWS::CloudWatch::Alarm
    Properties:
      AlarmDescription: %[1]s invocations failed or were throttled
      AlarmActions: [{ "Ref": AlarmTopic }]
      ComparisonOperator: GreaterThanOrEqualToThreshold
      Threshold: 1
      EvaluationPeriods: 1
      TreatMissingData: notBreaching
      Metrics:
`, fn)
		b.WriteString(metric("errors", "Errors") + metric("throttles", "Throttles"))
		b.WriteString("        - { Id: failed, Expression: \"errors + throttles\", Label: failed, ReturnData: true }\n")
	}
	return region{"alarms", b.String()}
}

// usageSubscriptions is the region of each function's subscription filter sending its usage
// lines (metrics.UsageFilterPattern) to the usage worker, whose own log group has none.
func usageSubscriptions(fns []string) region {
	dest := usageWorker()
	var b strings.Builder
	for _, fn := range fns {
		if fn == dest {
			continue
		}
		fmt.Fprintf(&b, `  %[1]sUsageSubscription:
    Type: AWS::Logs::SubscriptionFilter
    DependsOn: %[2]sLogsPermission
    Properties:
      LogGroupName: { "Ref": %[1]sLogGroup }
      FilterPattern: '%[3]s'
      DestinationArn: { "Fn::GetAtt": [%[2]s, Arn] }
`, fn, dest, metrics.UsageFilterPattern)
	}
	return region{"usage subscriptions", b.String()}
}

// usageWorker is the logical id of the worker fed by the log groups (its Trigger is "Logs").
func usageWorker() string {
	for _, w := range app.Workers {
		if w.Trigger == "Logs" {
			return w.Name
		}
	}
	return ""
}

// dashboardLists are the lists of the dashboard's body (a JSON string, where no comment can
// mark a region) that name every function, one function a line: each is the one run of lines
// matching its pattern, rewritten for the functions with the run's last comma kept.
var dashboardLists = []struct {
	pattern *regexp.Regexp
	line    string // the line of one function (%[1]s its logical id)
}{
	{regexp.MustCompile(`^ +"\$\{\w+FunctionFailingAlarm\.Arn\}",?$`), `             "${%[1]sFailingAlarm.Arn}"`},
	{regexp.MustCompile(`^ +\["AWS/Lambda", "Errors", "FunctionName", "\$\{\w+\}", \{"label": "\w+"\}\],?$`),
		`             ["AWS/Lambda", "Errors", "FunctionName", "${%[1]s}", {"label": "%[1]s"}]`},
	{regexp.MustCompile(`^ +\["AWS/Lambda", "Throttles", "FunctionName", "\$\{\w+\}", \{"label": "\w+"\}\],?$`),
		`             ["AWS/Lambda", "Throttles", "FunctionName", "${%[1]s}", {"label": "%[1]s"}]`},
}

// template is the template.yaml text with its generated regions replaced by regions and the
// dashboard's lists written for the functions fns (logical ids).
func template(text string, regions []region, fns []string) (string, error) {
	for _, r := range regions {
		begin, end := "  # BEGIN generated "+r.name, "  # END generated "+r.name+"\n"
		i := strings.Index(text, begin)
		j := strings.Index(text, end)
		if i < 0 || j < i {
			return "", fmt.Errorf("template.yaml: no %q ... %q region", strings.TrimSpace(begin), strings.TrimSpace(end))
		}
		head := begin + " (shared/app/gen, go generate ./...: do not edit)\n"
		text = text[:i] + head + r.body + text[j:]
	}
	lines := strings.SplitAfter(text, "\n")
	for _, l := range dashboardLists {
		var run []int
		for i, line := range lines {
			if l.pattern.MatchString(strings.TrimSuffix(line, "\n")) {
				if len(run) > 0 && run[len(run)-1] != i-1 {
					return "", fmt.Errorf("template.yaml: the lines matching %s are not one run (line %d)", l.pattern, i+1)
				}
				run = append(run, i)
			}
		}
		if len(run) == 0 {
			return "", fmt.Errorf("template.yaml: no dashboard line matches %s", l.pattern)
		}
		first, last := run[0], run[len(run)-1]
		comma := strings.HasSuffix(strings.TrimSuffix(lines[last], "\n"), ",")
		var out []string
		for k, fn := range fns {
			line := fmt.Sprintf(l.line, fn)
			if k < len(fns)-1 || comma {
				line += ","
			}
			out = append(out, line+"\n")
		}
		lines = append(lines[:first], append(out, lines[last+1:]...)...)
	}
	return strings.Join(lines, ""), nil
}
