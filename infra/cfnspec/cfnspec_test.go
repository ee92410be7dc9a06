package cfnspec_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tunnelapi/infra/cfnspec"
)

const root = "../.."

// packageDir is where infra/stack/stack.sh installs npm @aws-cdk/cfnspec (make test runs it).
var packageDir = filepath.Join(root, ".local", "npm", "node_modules", "@aws-cdk", "cfnspec")

// loadSpec loads the installed specification. Without it the tests skip, unless REQUIRE_STACK
// says the install ran (make test), where its absence is a failure.
func loadSpec(t testing.TB) *cfnspec.Spec {
	t.Helper()
	if _, err := os.Stat(filepath.Join(packageDir, cfnspec.PackageFile)); err != nil {
		if os.Getenv("REQUIRE_STACK") != "" {
			t.Fatalf("the resource specification is not installed (infra/stack/stack.sh install): %v", err)
		}
		t.Skip("npm @aws-cdk/cfnspec is not installed under .local/npm: run make test")
	}
	spec, redundant, err := cfnspec.Load(packageDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range redundant {
		t.Errorf("the specification now defines %s.%s: remove it from cfnspec.Additions", a.Type, a.Name)
	}
	return spec
}

// template.yaml departs from the CloudFormation and SAM resource specification nowhere.
func TestTemplateMatchesSpecification(t *testing.T) {
	spec := loadSpec(t)
	raw, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	problems, err := spec.Check(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("template.yaml:%s", p)
	}
}

const samHeader = "Transform: AWS::Serverless-2016-10-31\n"

// checkCases are small templates, each with exactly the problems it has (as substrings of
// Problem.String): the sound ones have none.
var checkCases = []struct {
	name     string
	template string
	want     []string
}{
	{"sound CloudFormation", `
Resources:
  Dlq: { Type: AWS::SQS::Queue, Properties: { MessageRetentionPeriod: "1209600" } }
  Queue:
    Type: AWS::SQS::Queue
    DeletionPolicy: Retain
    Properties:
      VisibilityTimeout: 30
      FifoQueue: false
      RedrivePolicy: { deadLetterTargetArn: !GetAtt Dlq.Arn, maxReceiveCount: 5 }
      Tags: [{ Key: app, Value: !Sub "${AWS::StackName}-q" }]
  Table:
    Type: AWS::DynamoDB::Table
    Properties:
      KeySchema: [{ AttributeName: pk, KeyType: HASH }]
      AttributeDefinitions: !If [Cond, [{ AttributeName: pk, AttributeType: S }], !Ref AWS::NoValue]
      StreamSpecification: { StreamViewType: NEW_IMAGE }
      TimeToLiveSpecification: { AttributeName: ttl, Enabled: "true" }
  Hook: { Type: Custom::Thing, Properties: { ServiceToken: arn, Anything: [1, 2] } }
`, nil},
	{"unknown property", `
Resources:
  Queue: { Type: AWS::SQS::Queue, Properties: { VisibilityTimout: 30 } }
`, []string{"3:49: Resources.Queue.Properties.VisibilityTimout: unknown property VisibilityTimout of AWS::SQS::Queue (known: "}},
	{"missing required property", `
Resources:
  Sub:
    Type: AWS::SNS::Subscription
    Properties: { TopicArn: !Ref Topic }
`, []string{"5:17: Resources.Sub.Properties: missing required property Protocol of AWS::SNS::Subscription"}},
	{"unknown resource type", `
Resources:
  Queue: { Type: AWS::SQS::Queu }
`, []string{"Resources.Queue.Type: unknown resource type AWS::SQS::Queu"}},
	{"wrong nested property", `
Resources:
  Table:
    Type: AWS::DynamoDB::Table
    Properties:
      KeySchema: [{ AttributeName: pk, KeyType: HASH }]
      TimeToLiveSpecification: { AttributeNam: ttl, Enabled: true }
`, []string{
		"Resources.Table.Properties.TimeToLiveSpecification.AttributeNam: unknown property AttributeNam of AWS::DynamoDB::Table.TimeToLiveSpecification",
		"Resources.Table.Properties.TimeToLiveSpecification: missing required property AttributeName of AWS::DynamoDB::Table.TimeToLiveSpecification",
	}},
	{"wrong property in a list item", `
Resources:
  Table:
    Type: AWS::DynamoDB::Table
    Properties:
      KeySchema: [{ AttributeName: pk, KeyType: HASH, Kind: x }]
`, []string{"Resources.Table.Properties.KeySchema[0].Kind: unknown property Kind of AWS::DynamoDB::Table.KeySchema"}},
	{"wrong primitive types", `
Resources:
  Queue: { Type: AWS::SQS::Queue, Properties: { VisibilityTimeout: soon, FifoQueue: maybe, DelaySeconds: 1.5 } }
`, []string{
		`Resources.Queue.Properties.VisibilityTimeout: "soon" is not an Integer`,
		`Resources.Queue.Properties.FifoQueue: "maybe" is not a Boolean`,
		`Resources.Queue.Properties.DelaySeconds: "1.5" is not an Integer`,
	}},
	{"wrong shapes", `
Resources:
  Queue: { Type: AWS::SQS::Queue, Properties: { QueueName: [a], Tags: { Key: k, Value: v } } }
  Table:
    Type: AWS::DynamoDB::Table
    Properties: { KeySchema: pk, SSESpecification: [true] }
`, []string{
		"Resources.Queue.Properties.QueueName: a list; expected a String",
		"Resources.Queue.Properties.Tags: an object; expected a list of (an object (Tag))",
		`Resources.Table.Properties.KeySchema: "pk" is a scalar; expected a list of (an object (AWS::DynamoDB::Table.KeySchema))`,
		"Resources.Table.Properties.SSESpecification: a list; expected an object (AWS::DynamoDB::Table.SSESpecification)",
	}},
	{"no value", `
Resources:
  Queue: { Type: AWS::SQS::Queue, Properties: { QueueName: } }
`, []string{"Resources.Queue.Properties.QueueName: no value; expected a String"}},
	{"unknown intrinsics", `
Resources:
  Queue: { Type: AWS::SQS::Queue, Properties: { QueueName: !Reff x, RedrivePolicy: { a: { "Fn::Fetch": x } } } }
`, []string{
		"Resources.Queue.Properties.QueueName: unknown tag !Reff",
		"Resources.Queue.Properties.RedrivePolicy.a: unknown intrinsic function Fn::Fetch",
	}},
	{"template structure", `
Resource: {}
Resources:
  Queue: { Type: AWS::SQS::Queue, Propertes: { QueueName: q }, DeletionPolicy: Keep }
  Other: { Type: AWS::SQS::Queue, Properties: { QueueName: a, QueueName: b } }
  NoType: { Properties: {} }
`, []string{
		"Resource: unknown template section Resource",
		"Resources.Queue.Propertes: unknown resource attribute Propertes",
		`Resources.Queue.DeletionPolicy: "Keep" is none of Delete, Retain, RetainExceptOnCreate, Snapshot`,
		"Resources.Other.Properties.QueueName: duplicate key QueueName",
		"Resources.NoType: the resource has no Type",
	}},
	{"SAM type without the transform", `
Resources:
  Fn: { Type: AWS::Serverless::Function, Properties: { CodeUri: . } }
`, []string{"Resources.Fn.Type: AWS::Serverless::Function needs Transform: AWS::Serverless-2016-10-31"}},
	{"sound SAM function", samHeader + `
Globals:
  Function:
    Runtime: provided.al2023
    Architectures: [arm64]
    Environment: { Variables: { A: !Ref Queue } }
Resources:
  Queue: { Type: AWS::SQS::Queue }
  Fn:
    Type: AWS::Serverless::Function
    Metadata: { BuildMethod: makefile }
    Properties:
      CodeUri: .
      Handler: bootstrap
      MemorySize: 1024
      Environment: { Variables: { B: "1" } }
      Policies:
        - AWSLambdaBasicExecutionRole
        - SQSPollerPolicy: { QueueName: !GetAtt Queue.QueueName }
        - Statement: [{ Effect: Allow, Action: [sqs:SendMessage], Resource: !GetAtt Queue.Arn }]
      Events:
        Get: { Type: HttpApi, Properties: { Method: GET, Path: "/x/{id}", PayloadFormatVersion: "2.0" } }
        Work:
          Type: SQS
          Properties: { Queue: !GetAtt Queue.Arn, BatchSize: 10, MaximumBatchingWindowInSeconds: 1, FunctionResponseTypes: [ReportBatchItemFailures] }
        Tick: { Type: Schedule, Properties: { Schedule: rate(1 minute), Enabled: true } }
  Other:
    Type: AWS::Serverless::Function
    Properties: { CodeUri: { Bucket: b, Key: k }, Policies: { Statement: [] } }
`, nil},
	{"SAM event sources", samHeader + `
Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: .
      Events:
        A: { Type: Sqs, Properties: { Queue: q } }
        B: { Type: HttpApi, Properties: { Methd: GET } }
        C: { Type: SQS, Properties: { BatchSize: ten } }
        D: { Type: Schedule }
`, []string{
		"Resources.Fn.Properties.Events.A.Type: event type Sqs is not in the specification (known: S3, SNS, SQS,",
		"Resources.Fn.Properties.Events.B.Properties.Methd: unknown property Methd of AWS::Serverless::Function.HttpApiEvent",
		`Resources.Fn.Properties.Events.C.Properties.BatchSize: "ten" is not an Integer`,
		"Resources.Fn.Properties.Events.C.Properties: missing required property Queue of AWS::Serverless::Function.SQSEvent",
		"Resources.Fn.Properties.Events.D: missing required property Properties of AWS::Serverless::Function.EventSource",
	}},
	{"SAM policies", samHeader + `
Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Policies:
        - DynamoDBCrudPolisy: { TableName: t }
        - SQSPollerPolicy: { Queue: q }
        - [nested]
`, []string{
		"Resources.Fn.Properties.Policies[0].DynamoDBCrudPolisy: unknown property DynamoDBCrudPolisy of AWS::Serverless::Function.SAMPolicyTemplate",
		"Resources.Fn.Properties.Policies[1].SQSPollerPolicy.Queue: unknown property Queue of AWS::Serverless::Function.QueueSAMPT",
		"Resources.Fn.Properties.Policies[1].SQSPollerPolicy: missing required property QueueName of AWS::Serverless::Function.QueueSAMPT",
		"Resources.Fn.Properties.Policies[2]: a list; expected a String or an object (AWS::Serverless::Function.IAMPolicyDocument) or an object (AWS::Serverless::Function.SAMPolicyTemplate)",
	}},
	{"required property from Globals", samHeader + `
Globals:
  Api: { StageName: prod }
Resources:
  Api: { Type: AWS::Serverless::Api }
`, nil},
	{"required property in neither Globals nor the resource", samHeader + `
Globals:
  Api: { TracingEnabled: true }
Resources:
  Api: { Type: AWS::Serverless::Api, Properties: { Description: d } }
`, []string{"Resources.Api.Properties: missing required property StageName of AWS::Serverless::Api"}},
	{"Globals problems, reported once", samHeader + `
Globals:
  Function: { Runtim: go, Timeout: long, Environment: { Variabls: {} } }
  Functions: { Timeout: 3 }
Resources:
  A: { Type: AWS::Serverless::Function, Properties: { CodeUri: . } }
  B: { Type: AWS::Serverless::Function, Properties: { CodeUri: ., Environment: { Variables: { X: "1" } } } }
`, []string{
		"Globals.Function.Runtim: unknown property Runtim of AWS::Serverless::Function",
		`Globals.Function.Timeout: "long" is not an Integer`,
		"Globals.Function.Environment.Variabls: unknown property Variabls of AWS::Serverless::Function.FunctionEnvironment",
		"Globals.Function.Environment: missing required property Variables of AWS::Serverless::Function.FunctionEnvironment",
		"Globals.Functions: unknown Globals section Functions",
	}},
}

// Each broken template yields exactly the problems listed, and each sound one none: the check
// can fail, and fails precisely.
func TestCheckFindsEachProblem(t *testing.T) {
	spec := loadSpec(t)
	for _, tc := range checkCases {
		t.Run(tc.name, func(t *testing.T) {
			problems, err := spec.Check([]byte(tc.template))
			if err != nil {
				t.Fatal(err)
			}
			got := make([]string, len(problems))
			for i, p := range problems {
				got[i] = p.String()
			}
			unmatched := append([]string(nil), got...)
			for _, w := range tc.want {
				found := false
				for i, g := range unmatched {
					if strings.Contains(g, w) {
						unmatched = append(unmatched[:i], unmatched[i+1:]...)
						found = true
						break
					}
				}
				if !found {
					t.Errorf("no problem %q among:\n  %s", w, strings.Join(got, "\n  "))
				}
			}
			for _, u := range unmatched {
				t.Errorf("unexpected problem: %s", u)
			}
		})
	}
}

// A template that is not YAML is an error, not an empty list of problems.
func TestCheckRefusesWhatIsNotYAML(t *testing.T) {
	spec := loadSpec(t)
	if _, err := spec.Check([]byte("Resources: [\n")); err == nil {
		t.Fatal("no error for a template that is not YAML")
	}
}

// No template makes the check panic, and every problem says where it is.
func FuzzCheck(f *testing.F) {
	spec := loadSpec(f)
	for _, tc := range checkCases {
		f.Add([]byte(tc.template))
	}
	if raw, err := os.ReadFile(filepath.Join(root, "template.yaml")); err == nil {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, template []byte) {
		problems, err := spec.Check(template)
		if err != nil {
			return
		}
		for _, p := range problems {
			if p.Line < 1 || p.Message == "" {
				t.Errorf("problem without a place or a message: %+v", p)
			}
		}
	})
}
