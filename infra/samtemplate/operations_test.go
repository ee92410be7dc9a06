package samtemplate_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"testing"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/metrics"
	"tunnelapi/shared/testing/testkit"
)

// dimRule says what a dimension's value must be: a reference to a resource of type Resource
// (Ref, or GetAtt of Attr), a reference to the parameter Param, or one of Literals.
type dimRule struct {
	Resource, Attr, Param string
	Literals              []string
}

// awsMetric is an AWS metric the template may name and the dimension sets AWS publishes it with.
type awsMetric struct{ dims [][]string }

var (
	byFunction = awsMetric{[][]string{{"FunctionName"}}}
	byQueue    = awsMetric{[][]string{{"QueueName"}}}
	byPipe     = awsMetric{[][]string{{"PipeName"}}}
	byStage    = awsMetric{[][]string{{"ApiId"}, {"ApiId", "Stage"}}}
	byTable    = awsMetric{[][]string{{"TableName"}}}
	byTableOp  = awsMetric{[][]string{{"TableName", "Operation"}}}
)

// awsMetrics are, per namespace and name, the AWS metrics the template may name (from each
// service's CloudWatch metrics documentation).
var awsMetrics = map[string]map[string]awsMetric{
	"AWS/Lambda": {"Errors": byFunction, "Throttles": byFunction, "Invocations": byFunction, "Duration": byFunction},
	"AWS/SQS": {"ApproximateNumberOfMessagesVisible": byQueue, "ApproximateAgeOfOldestMessage": byQueue,
		"NumberOfMessagesSent": byQueue},
	"AWS/EventBridge/Pipes": {"ExecutionFailed": byPipe, "ExecutionThrottled": byPipe, "Invocations": byPipe,
		"TargetStageFailed": byPipe},
	"AWS/ApiGateway": {"Count": byStage, "4xx": byStage, "5xx": byStage, "Latency": byStage,
		"IntegrationLatency": byStage, "DataProcessed": byStage},
	"AWS/DynamoDB": {"ReadThrottleEvents": byTable, "WriteThrottleEvents": byTable, "ConsumedReadCapacityUnits": byTable,
		"ConsumedWriteCapacityUnits": byTable, "SystemErrors": byTableOp, "ThrottledRequests": byTableOp},
}

var dimRules = map[string]dimRule{
	"FunctionName": {Resource: "AWS::Serverless::Function"},
	"QueueName":    {Resource: "AWS::SQS::Queue", Attr: "QueueName"},
	"PipeName":     {Resource: "AWS::Pipes::Pipe"},
	"ApiId":        {Resource: "AWS::Serverless::HttpApi"},
	"Stage":        {Param: "StageName"},
	"TableName":    {Resource: "AWS::DynamoDB::Table"},
	"Operation":    {Literals: []string{"GetItem", "BatchGetItem", "Query", "TransactWriteItems", "PutItem", "UpdateItem", "DeleteItem"}},
}

// metricUse is one metric an alarm or a widget names, with its dimensions' values as the
// template gives them.
type metricUse struct {
	where, namespace, name string
	dims                   map[string]any
}

// templateMap is template.yaml as generic YAML.
func templateMap(t *testing.T) map[string]any {
	return testkit.TemplateMap(t, filepath.Join(root, "template.yaml"))
}

func resourcesOf(t *testing.T) map[string]map[string]any {
	out := map[string]map[string]any{}
	for name, r := range templateMap(t)["Resources"].(map[string]any) {
		out[name] = r.(map[string]any)
	}
	return out
}

func ofType(res map[string]map[string]any, typ string) []string {
	var out []string
	for name, r := range res {
		if r["Type"] == typ {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func ref(name string) map[string]any { return map[string]any{"Ref": name} }

func getAtt(name, attr string) map[string]any {
	return map[string]any{"Fn::GetAtt": []any{name, attr}}
}

// refTo returns the resource or parameter v references (Ref or GetAtt) and the attribute.
func refTo(v any) (name, attr string) {
	m, _ := v.(map[string]any)
	if n, ok := m["Ref"].(string); ok {
		return n, ""
	}
	if l, ok := m["Fn::GetAtt"].([]any); ok && len(l) == 2 {
		return fmt.Sprint(l[0]), fmt.Sprint(l[1])
	}
	return "", ""
}

// checkMetric fails unless u names a metric that exists: an AWS metric of the catalogue above
// with one of its dimension sets, each value naming what it must, or one the service emits
// (package metrics) with one of its kind's dimension sets and declared values.
func checkMetric(t *testing.T, res map[string]map[string]any, u metricUse) {
	t.Helper()
	names := make([]string, 0, len(u.dims))
	for d := range u.dims {
		names = append(names, d)
	}
	slices.Sort(names)
	if u.namespace == metrics.Namespace {
		for _, k := range metrics.Kinds {
			for _, m := range k.Metrics {
				if m.Name != u.name {
					continue
				}
				if !slices.ContainsFunc(k.Dimensions, func(set []string) bool { return reflect.DeepEqual(sorted(set), names) }) {
					t.Errorf("%s: %s with dimensions %v, which it is not emitted with (%v)", u.where, u.name, names, k.Dimensions)
				}
				for d, v := range u.dims {
					if allowed := k.Values[d]; allowed != nil && !slices.Contains(allowed, fmt.Sprint(v)) {
						t.Errorf("%s: %s %s=%v, which is never emitted (%v)", u.where, u.name, d, v, allowed)
					}
				}
				return
			}
		}
		t.Errorf("%s: %s/%s is not emitted (package metrics)", u.where, u.namespace, u.name)
		return
	}
	m, ok := awsMetrics[u.namespace][u.name]
	if !ok {
		t.Errorf("%s: unknown metric %s/%s", u.where, u.namespace, u.name)
		return
	}
	if !slices.ContainsFunc(m.dims, func(set []string) bool { return reflect.DeepEqual(sorted(set), names) }) {
		t.Errorf("%s: %s/%s with dimensions %v, published with %v", u.where, u.namespace, u.name, names, m.dims)
	}
	for d, v := range u.dims {
		rule := dimRules[d]
		switch n, attr := refTo(v); {
		case rule.Literals != nil:
			if !slices.Contains(rule.Literals, fmt.Sprint(v)) {
				t.Errorf("%s: %s=%v, not one of %v", u.where, d, v, rule.Literals)
			}
		case rule.Param != "":
			if n != rule.Param || attr != "" {
				t.Errorf("%s: %s=%v, want a Ref to the parameter %s", u.where, d, v, rule.Param)
			}
		case res[n]["Type"] != rule.Resource || attr != rule.Attr:
			t.Errorf("%s: %s=%v, want a reference (attribute %q) to an %s", u.where, d, v, rule.Attr, rule.Resource)
		}
	}
}

func sorted(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	if c == nil {
		c = []string{}
	}
	return c
}

// alarmMetrics are the metrics an alarm names (its own, or each MetricStat of its Metrics), and
// fails unless every expression names only the ids the alarm defines.
func alarmMetrics(t *testing.T, name string, a map[string]any) []metricUse {
	t.Helper()
	p := a["Properties"].(map[string]any)
	dims := func(v any) map[string]any {
		out := map[string]any{}
		l, _ := v.([]any)
		for _, d := range l {
			d := d.(map[string]any)
			out[d["Name"].(string)] = d["Value"]
		}
		return out
	}
	if p["MetricName"] != nil {
		return []metricUse{{name, fmt.Sprint(p["Namespace"]), fmt.Sprint(p["MetricName"]), dims(p["Dimensions"])}}
	}
	var out []metricUse
	ids := map[string]bool{}
	var exprs []string
	returned := 0
	for _, q := range p["Metrics"].([]any) {
		q := q.(map[string]any)
		ids[q["Id"].(string)] = true
		if q["ReturnData"] == true {
			returned++
		}
		if e, ok := q["Expression"].(string); ok {
			exprs = append(exprs, e)
			continue
		}
		m := dig(q, "MetricStat", "Metric").(map[string]any)
		out = append(out, metricUse{name, fmt.Sprint(m["Namespace"]), fmt.Sprint(m["MetricName"]), dims(m["Dimensions"])})
	}
	if returned != 1 {
		t.Errorf("%s: %d of its metrics return data, want 1", name, returned)
	}
	for _, e := range exprs {
		for _, id := range regexp.MustCompile(`\b[a-z][A-Za-z0-9_]*\b`).FindAllString(e, -1) {
			if !ids[id] {
				t.Errorf("%s: expression %q names %s, which the alarm does not define", name, e, id)
			}
		}
	}
	return out
}

// Every function logs JSON at LogLevel to a log group of its own kept LogRetentionDays, and the
// API writes its access log, one JSON object per request with the fields the issue names, to one
// such group too.
func TestEveryFunctionHasARetainedLogGroup(t *testing.T) {
	tpl := templateMap(t)
	res := resourcesOf(t)
	retained := func(where string, group string) {
		if res[group]["Type"] != "AWS::Logs::LogGroup" {
			t.Errorf("%s: logs to %q, not a log group of the template", where, group)
			return
		}
		if got := dig(res[group], "Properties", "RetentionInDays"); !reflect.DeepEqual(got, ref("LogRetentionDays")) {
			t.Errorf("%s: its log group %s keeps events for %v, want the LogRetentionDays parameter", where, group, got)
		}
	}
	if got := dig(tpl, "Globals", "Function", "LoggingConfig"); !reflect.DeepEqual(got,
		map[string]any{"LogFormat": "JSON", "ApplicationLogLevel": ref("LogLevel")}) {
		t.Errorf("Globals.Function.LoggingConfig is %v, want JSON at the LogLevel parameter", got)
	}
	users := map[string]string{}
	fns := ofType(res, "AWS::Serverless::Function")
	var known []string
	for _, f := range app.Functions() {
		known = append(known, f.Name)
	}
	for _, w := range append(slices.Clone(app.Workers), app.Operator) {
		known = append(known, w.Name)
	}
	if slices.Sort(known); !slices.Equal(fns, known) {
		t.Errorf("template.yaml's functions %v, app's %v", fns, known)
	}
	for _, fn := range fns {
		group, _ := refTo(dig(res[fn], "Properties", "LoggingConfig", "LogGroup"))
		if other, ok := users[group]; ok {
			t.Errorf("%s and %s share the log group %s", fn, other, group)
		}
		users[group] = fn
		retained(fn, group)
	}
	api := res["HttpApi"]
	group, attr := refTo(dig(api, "Properties", "AccessLogSettings", "DestinationArn"))
	if attr != "Arn" {
		t.Errorf("the access log goes to %v, want a log group's Arn", dig(api, "Properties", "AccessLogSettings", "DestinationArn"))
	}
	retained("HttpApi's access log", group)
	fields := accessLogFields(t)
	for _, f := range []string{"requestId", "ip", "method", "route", "status", "latency", "integrationLatency", "error"} {
		if _, ok := fields[f]; !ok {
			t.Errorf("the access log lacks %s", f)
		}
	}
}

// accessLogFields parses the access log format as API Gateway fills it (every $context variable
// a value) and returns its fields with the variable each holds.
func accessLogFields(t *testing.T) map[string]any {
	t.Helper()
	format, _ := dig(resourcesOf(t)["HttpApi"], "Properties", "AccessLogSettings", "Format").(string)
	filled := regexp.MustCompile(`\$context\.[A-Za-z.]+`).ReplaceAllString(format, "1")
	var fields map[string]any
	if err := json.Unmarshal([]byte(filled), &fields); err != nil {
		t.Fatalf("the access log format is not one JSON object per request: %v (%s)", err, format)
	}
	return fields
}

// Every dead-letter queue (of a queue's redrive policy or a Pipe's) has an alarm on its depth,
// every function one on its errors and one on its throttles, every Pipe one on its failures,
// and the API, the table and the service's own delivery and certificate metrics theirs; every
// alarm notifies the alarm topic and names only metrics that exist, with the dimensions they
// are published with, each naming a resource of the template of the right type.
func TestAlarmsCoverAndNameWhatExists(t *testing.T) {
	res := resourcesOf(t)
	watched := map[string]bool{} // "<namespace>/<metric> <dimension value>"
	for _, name := range ofType(res, "AWS::CloudWatch::Alarm") {
		a := res[name]
		if actions, _ := dig(a, "Properties", "AlarmActions").([]any); !slices.ContainsFunc(actions, func(v any) bool {
			return reflect.DeepEqual(v, ref("AlarmTopic"))
		}) {
			t.Errorf("%s does not notify AlarmTopic", name)
		}
		for _, u := range alarmMetrics(t, name, a) {
			checkMetric(t, res, u)
			key := u.namespace + "/" + u.name
			// In the order of the dimensions' names, so the key does not depend on map order.
			for _, dn := range slices.Sorted(maps.Keys(u.dims)) {
				d := u.dims[dn]
				if n, _ := refTo(d); n != "" {
					key += " " + n
				} else if u.namespace == metrics.Namespace {
					key += " " + fmt.Sprint(d)
				}
			}
			watched[key] = true
		}
	}
	want := func(key, why string) {
		if !watched[key] {
			t.Errorf("no alarm on %s (%s)", key, why)
		}
	}
	for _, q := range ofType(res, "AWS::SQS::Queue") {
		if dlq, _ := refTo(dig(res[q], "Properties", "RedrivePolicy", "deadLetterTargetArn")); dlq != "" {
			want("AWS/SQS/ApproximateNumberOfMessagesVisible "+dlq, q+"'s dead-letter queue")
		}
	}
	for _, p := range ofType(res, "AWS::Pipes::Pipe") {
		dlq, _ := refTo(dig(res[p], "Properties", "SourceParameters", "DynamoDBStreamParameters", "DeadLetterConfig", "Arn"))
		want("AWS/SQS/ApproximateNumberOfMessagesVisible "+dlq, p+"'s dead-letter queue")
		want("AWS/EventBridge/Pipes/ExecutionFailed "+p, "its failures")
	}
	for _, fn := range ofType(res, "AWS::Serverless::Function") {
		want("AWS/Lambda/Errors "+fn, "its errors")
		want("AWS/Lambda/Throttles "+fn, "its throttles")
	}
	want("AWS/ApiGateway/5xx HttpApi StageName", "the API's 5xx rate")
	want("AWS/DynamoDB/ReadThrottleEvents Table", "throttled reads")
	want("AWS/DynamoDB/WriteThrottleEvents Table", "throttled writes")
	want("AWS/DynamoDB/SystemErrors Table", "the table's system errors")
	want(metrics.Namespace+"/Deliveries "+metrics.DeadLettered, "failing deliveries")
	want(metrics.Namespace+"/CertificateJobs "+metrics.Failed, "failing certificate jobs")
}

// The dashboard's widgets name only metrics that exist (as alarms must), only alarms of the
// template (all of them), and its log query reads the access log's own fields.
func TestDashboardNamesOnlyWhatExists(t *testing.T) {
	res := resourcesOf(t)
	body, _ := dig(res["Dashboard"], "Properties", "DashboardBody", "Fn::Sub").(string)
	var dash struct {
		Widgets []struct {
			Type       string
			Properties struct {
				Title   string
				Metrics [][]any
				Alarms  []string
				Query   string
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &dash); err != nil {
		t.Fatalf("the dashboard body: %v", err)
	}
	// sub reads "${X}" or "${X.Attr}" as the reference it stands for.
	sub := func(s string) any {
		m := regexp.MustCompile(`^\$\{([A-Za-z0-9]+)(?:\.([A-Za-z]+))?\}$`).FindStringSubmatch(s)
		switch {
		case m == nil:
			return s
		case m[2] == "":
			return ref(m[1])
		default:
			return getAtt(m[1], m[2])
		}
	}
	alarms := map[string]bool{}
	metricCount := 0
	for _, w := range dash.Widgets {
		where := "dashboard widget " + w.Properties.Title
		switch w.Type {
		case "metric":
			for _, m := range w.Properties.Metrics {
				if _, opts := m[len(m)-1].(map[string]any); opts {
					m = m[:len(m)-1]
				}
				if len(m) < 2 || len(m)%2 != 0 {
					t.Errorf("%s: malformed metric %v", where, m)
					continue
				}
				u := metricUse{where: where, namespace: fmt.Sprint(m[0]), name: fmt.Sprint(m[1]), dims: map[string]any{}}
				for i := 2; i < len(m); i += 2 {
					u.dims[fmt.Sprint(m[i])] = sub(fmt.Sprint(m[i+1]))
				}
				checkMetric(t, res, u)
				metricCount++
			}
		case "alarm":
			for _, a := range w.Properties.Alarms {
				n, attr := refTo(sub(a))
				if res[n]["Type"] != "AWS::CloudWatch::Alarm" || attr != "Arn" {
					t.Errorf("%s: %s is not an alarm's ARN", where, a)
				}
				alarms[n] = true
			}
		case "log":
			m := regexp.MustCompile(`^SOURCE '\$\{([A-Za-z0-9]+)\}' \|`).FindStringSubmatch(w.Properties.Query)
			if m == nil || m[1] != "ApiAccessLogGroup" {
				t.Errorf("%s: the query reads %q, want the access log group", where, w.Properties.Query)
				continue
			}
			fields := accessLogFields(t)
			for _, f := range regexp.MustCompile(`(?:pct|sum|by|avg|max)\(?\s*([a-zA-Z]+)`).FindAllStringSubmatch(w.Properties.Query, -1) {
				if _, ok := fields[f[1]]; !ok {
					t.Errorf("%s: the query reads %s, which the access log lacks", where, f[1])
				}
			}
		default:
			t.Errorf("%s: unexpected widget type %q", where, w.Type)
		}
	}
	for _, a := range ofType(res, "AWS::CloudWatch::Alarm") {
		if !alarms[a] {
			t.Errorf("the dashboard does not show the alarm %s", a)
		}
	}
	if metricCount < 20 {
		t.Errorf("the dashboard shows only %d metrics", metricCount)
	}
}

// The optional parts deploy only when asked for: with every parameter at its default, the
// custom domain, its record and the alarm e-mail subscription are left out, and ApiUrl is the
// execute-api URL.
func TestOptionalOperationsAreConditional(t *testing.T) {
	tpl := templateMap(t)
	res := resourcesOf(t)
	for name, cond := range map[string]string{"ApiDomain": "HasDomain", "ApiDomainMapping": "HasDomain",
		"ApiDomainRecord": "HasDomainZone", "AlarmEmailSubscription": "HasAlarmEmail"} {
		if res[name]["Condition"] != cond {
			t.Errorf("%s has condition %v, want %s", name, res[name]["Condition"], cond)
		}
	}
	for _, p := range []string{"DomainName", "CertificateArn", "DomainHostedZoneId", "AlarmEmail"} {
		if d := dig(tpl, "Parameters", p, "Default"); d != "" {
			t.Errorf("parameter %s defaults to %v, want empty (off)", p, d)
		}
	}
	for _, c := range []string{"HasDomain", "HasAlarmEmail"} {
		cond := dig(tpl, "Conditions", c, "Fn::Not").([]any)[0].(map[string]any)["Fn::Equals"].([]any)
		if n, _ := refTo(cond[0]); dig(tpl, "Parameters", n, "Default") != cond[1] {
			t.Errorf("%s holds with the defaults", c)
		}
	}
	if got := dig(tpl, "Outputs", "ApiUrl", "Value", "Fn::If").([]any); got[0] != "HasDomain" {
		t.Errorf("ApiUrl is %v, want the custom domain's URL when there is one", got)
	}
	stage := dig(res["HttpApi"], "Properties", "DefaultRouteSettings").(map[string]any)
	if !reflect.DeepEqual(stage["ThrottlingRateLimit"], ref("ThrottlingRateLimit")) ||
		!reflect.DeepEqual(stage["ThrottlingBurstLimit"], ref("ThrottlingBurstLimit")) {
		t.Errorf("the stage's throttling is %v, want the ThrottlingRateLimit and ThrottlingBurstLimit parameters", stage)
	}
}
