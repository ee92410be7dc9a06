package main

import (
	"fmt"
	"os"
	"strings"
)

// templateRegions are the parts of template.yaml written from the lists of package app, between
// a "# BEGIN generated <name>" and a "# END generated <name>" line; the rest of the template is
// hand-written and kept as it is.
var templateRegions = []struct {
	name  string
	write func(fn string) string // the region's lines of one function, by logical id
}{
	{"log groups", func(fn string) string {
		return fmt.Sprintf(`  %sLogGroup:
    Type: AWS::Logs::LogGroup
    Properties: { RetentionInDays: { "Ref": LogRetentionDays } }
`, fn)
	}},
	{"alarms", func(fn string) string {
		metric := func(id, name string) string {
			return fmt.Sprintf(`        - { Id: %s, ReturnData: false, MetricStat: { Metric: { Namespace: AWS/Lambda, MetricName: %s, Dimensions: [{ Name: FunctionName, Value: { "Ref": %s } }] }, Period: 300, Stat: Sum } }
`, id, name, fn)
		}
		return fmt.Sprintf(`  %[1]sFailingAlarm:
    Type: AWS::CloudWatch::Alarm
    Properties:
      AlarmDescription: %[1]s invocations failed or were throttled
      AlarmActions: [{ "Ref": AlarmTopic }]
      ComparisonOperator: GreaterThanOrEqualToThreshold
      Threshold: 1
      EvaluationPeriods: 1
      TreatMissingData: notBreaching
      Metrics:
`, fn) + metric("errors", "Errors") + metric("throttles", "Throttles") +
			"        - { Id: failed, Expression: \"errors + throttles\", Label: failed, ReturnData: true }\n"
	}},
}

// template is the template.yaml at path with its generated regions rewritten for the functions
// fns (logical ids).
func template(path string, fns []string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	text := string(raw)
	for _, r := range templateRegions {
		begin, end := "  # BEGIN generated "+r.name, "  # END generated "+r.name+"\n"
		i := strings.Index(text, begin)
		j := strings.Index(text, end)
		if i < 0 || j < i {
			return nil, fmt.Errorf("%s: no %q ... %q region", path, strings.TrimSpace(begin), strings.TrimSpace(end))
		}
		i += strings.Index(text[i:], "\n") + 1
		var b strings.Builder
		for _, fn := range fns {
			b.WriteString(r.write(fn))
		}
		text = text[:i] + b.String() + text[j:]
	}
	return []byte(text), nil
}
