package eventsub

import (
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws/arn"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/seal"
)

// Target kinds: the key of the one non-null object in a destination's target.
const (
	KindFirehose       = "firehose"
	KindKinesis        = "kinesis"
	KindCloudWatchLogs = "cloudwatch_logs"
	KindDatadog        = "datadog"
	KindAzure          = "azure_logs_ingestion"
)

// Codes of the event destination family.
const (
	CodeBadFormat     = "ERR_NGROK_235"
	CodeBadTarget     = "ERR_NGROK_236"
	CodeBadAuth       = "ERR_NGROK_240"
	CodeNoTarget      = "ERR_NGROK_5100"
	CodeTargetChanged = "ERR_NGROK_5108"
	CodeInUse         = "ERR_NGROK_5112"
	CodeManyTargets   = "ERR_NGROK_5115"
	CodeManyAuths     = "ERR_NGROK_5116"
	CodeDDAPIKey      = "ERR_NGROK_5133"
	CodeDDSite        = "ERR_NGROK_5134"
)

// DatadogSites are the Datadog sites a datadog target may name; logs go to
// https://http-intake.logs.<site>.
var DatadogSites = []string{
	"datadoghq.com", "us3.datadoghq.com", "us5.datadoghq.com", "datadoghq.eu",
	"ap1.datadoghq.com", "ap2.datadoghq.com", "ddog-gov.com",
}

// DefaultDatadogSite is the site of a datadog target that names none.
const DefaultDatadogSite = "datadoghq.com"

// azureIngestionSuffixes are the host suffixes of Azure Monitor data collection endpoints
// (public, US government and China clouds); nothing else receives an account's client token.
var azureIngestionSuffixes = []string{".ingest.monitor.azure.com", ".ingest.monitor.azure.us", ".ingest.monitor.azure.cn"}

// Target is a destination's stored target: its kind, the kind's settings, and its one secret
// (AWS secret access key, Datadog API key or Azure client secret) sealed with the account and
// destination id as additional data.
type Target struct {
	Kind string `dynamodbav:"kind"`
	// ARN is the stream, delivery stream or log group of an AWS target.
	ARN         string `dynamodbav:"arn,omitempty"`
	RoleARN     string `dynamodbav:"role_arn,omitempty"`
	AccessKeyID string `dynamodbav:"akid,omitempty"`

	DDTags  string `dynamodbav:"ddtags,omitempty"`
	Service string `dynamodbav:"service,omitempty"`
	DDSite  string `dynamodbav:"ddsite,omitempty"`

	TenantID     string `dynamodbav:"tenant,omitempty"`
	ClientID     string `dynamodbav:"client,omitempty"`
	IngestionURI string `dynamodbav:"ingest_uri,omitempty"`
	RuleID       string `dynamodbav:"dcr,omitempty"`
	StreamName   string `dynamodbav:"dcr_stream,omitempty"`

	Secret *seal.Sealed `dynamodbav:"secret,omitempty"`
}

// awsKind is what sets an AWS target kind apart; the rest (its auth, its delivery) is shared.
type awsKind struct {
	kind string
	// member is the request and response member holding the ARN of the kind's resource.
	member string
	// service, resource and shape are what that ARN must be: its service, a pattern of its
	// resource and, for messages, its form.
	service  string
	resource func() *regexp.Regexp
	shape    string
}

// awsKinds are the AWS target kinds: static data, where a map would be built at every start.
var awsKinds = [...]awsKind{
	{KindFirehose, "delivery_stream_arn", "firehose", deliveryRE, "arn:aws:firehose:<region>:<account>:deliverystream/<name>"},
	{KindKinesis, "stream_arn", "kinesis", streamRE, "arn:aws:kinesis:<region>:<account>:stream/<name>"},
	{KindCloudWatchLogs, "log_group_arn", "logs", logGroupRE, "arn:aws:logs:<region>:<account>:log-group:<name>"},
}

// awsKindOf returns the AWS target kind kind; false when kind is not one.
func awsKindOf(kind string) (awsKind, bool) {
	for _, k := range awsKinds {
		if k.kind == kind {
			return k, true
		}
	}
	return awsKind{}, false
}

// IsAWS reports whether the target is delivered through an AWS API.
func (t *Target) IsAWS() bool {
	_, ok := awsKindOf(t.Kind)
	return ok
}

// Region is the AWS region of an AWS target's resource.
func (t *Target) Region() string {
	a, err := arn.Parse(t.ARN)
	if err != nil {
		return ""
	}
	return a.Region
}

// ResourceName is the name inside an AWS target's ARN: the delivery stream or log group name.
func (t *Target) ResourceName() string {
	a, err := arn.Parse(t.ARN)
	if err != nil {
		return ""
	}
	_, name, _ := strings.Cut(a.Resource, "/")
	if t.Kind == KindCloudWatchLogs {
		name = strings.TrimSuffix(strings.TrimPrefix(a.Resource, "log-group:"), ":*")
	}
	return name
}

// The forms of a target (EventTarget in the OpenAPI file), one for requests and responses:
// every member a pointer, so that a request's absent member differs from an empty one. A
// response sets every member of its kind but the secrets, which are write-only: always null.
type (
	// TargetJSON has exactly one non-null member, the destination's kind.
	TargetJSON struct {
		Firehose           *FirehoseJSON       `json:"firehose"`
		Kinesis            *KinesisJSON        `json:"kinesis"`
		CloudwatchLogs     *CloudwatchLogsJSON `json:"cloudwatch_logs"`
		Datadog            *DatadogJSON        `json:"datadog"`
		AzureLogsIngestion *AzureJSON          `json:"azure_logs_ingestion"`
	}
	// AWSAuthJSON has exactly one non-null member.
	AWSAuthJSON struct {
		Role  *AWSRoleJSON  `json:"role"`
		Creds *AWSCredsJSON `json:"creds"`
	}
	// AWSRoleJSON is a role the service assumes to deliver.
	AWSRoleJSON struct {
		RoleARN *string `json:"role_arn"`
	}
	// AWSCredsJSON is a long-term access key.
	AWSCredsJSON struct {
		AccessKeyID     *string `json:"aws_access_key_id"`
		SecretAccessKey *string `json:"aws_secret_access_key"`
	}
	// FirehoseJSON is a Firehose delivery stream target.
	FirehoseJSON struct {
		Auth              *AWSAuthJSON `json:"auth"`
		DeliveryStreamARN *string      `json:"delivery_stream_arn"`
	}
	// KinesisJSON is a Kinesis data stream target.
	KinesisJSON struct {
		Auth      *AWSAuthJSON `json:"auth"`
		StreamARN *string      `json:"stream_arn"`
	}
	// CloudwatchLogsJSON is a CloudWatch Logs log group target.
	CloudwatchLogsJSON struct {
		Auth        *AWSAuthJSON `json:"auth"`
		LogGroupARN *string      `json:"log_group_arn"`
	}
	// DatadogJSON is a Datadog logs target.
	DatadogJSON struct {
		APIKey  *string `json:"api_key"`
		DDTags  *string `json:"ddtags"`
		Service *string `json:"service"`
		DDSite  *string `json:"ddsite"`
	}
	// AzureJSON is an Azure Monitor Logs Ingestion target.
	AzureJSON struct {
		TenantID                 *string `json:"tenant_id"`
		ClientID                 *string `json:"client_id"`
		ClientSecret             *string `json:"client_secret"`
		LogsIngestionURI         *string `json:"logs_ingestion_uri"`
		DataCollectionRuleID     *string `json:"data_collection_rule_id"`
		DataCollectionStreamName *string `json:"data_collection_stream_name"`
	}
)

// JSON renders the target as GET returns it.
func (t *Target) JSON() TargetJSON {
	var out TargetJSON
	auth := &AWSAuthJSON{Creds: &AWSCredsJSON{AccessKeyID: &t.AccessKeyID}}
	if t.RoleARN != "" {
		auth = &AWSAuthJSON{Role: &AWSRoleJSON{RoleARN: &t.RoleARN}}
	}
	switch t.Kind {
	case KindFirehose:
		out.Firehose = &FirehoseJSON{Auth: auth, DeliveryStreamARN: &t.ARN}
	case KindKinesis:
		out.Kinesis = &KinesisJSON{Auth: auth, StreamARN: &t.ARN}
	case KindCloudWatchLogs:
		out.CloudwatchLogs = &CloudwatchLogsJSON{Auth: auth, LogGroupARN: &t.ARN}
	case KindDatadog:
		out.Datadog = &DatadogJSON{DDTags: &t.DDTags, Service: &t.Service, DDSite: &t.DDSite}
	case KindAzure:
		out.AzureLogsIngestion = &AzureJSON{TenantID: &t.TenantID, ClientID: &t.ClientID, LogsIngestionURI: &t.IngestionURI,
			DataCollectionRuleID: &t.RuleID, DataCollectionStreamName: &t.StreamName}
	}
	return out
}

var (
	regionRE     = compileOnUse(`^[a-z]{2}(-[a-z]+)+-\d{1,2}$`)
	accountRE    = compileOnUse(`^\d{12}$`)
	streamRE     = compileOnUse(`^stream/[a-zA-Z0-9_.-]{1,128}$`)
	deliveryRE   = compileOnUse(`^deliverystream/[a-zA-Z0-9_.-]{1,64}$`)
	logGroupRE   = compileOnUse(`^log-group:[.\-_/#A-Za-z0-9]{1,512}(:\*)?$`)
	roleRE       = compileOnUse(`^role/([\x21-\x7e]{0,510}/)?[\w+=,.@-]{1,64}$`)
	accessKeyRE  = compileOnUse(`^[A-Z0-9]{16,128}$`)
	ddKeyRE      = compileOnUse(`^[0-9a-f]{32}$`)
	guidRE       = compileOnUse(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	tenantRE     = compileOnUse(`^[A-Za-z0-9][A-Za-z0-9.-]{0,252}$`)
	ruleIDRE     = compileOnUse(`^dcr-[0-9a-f]{32}$`)
	dcrStreamRE  = compileOnUse(`^(Custom|Microsoft)-[A-Za-z0-9_]{1,100}$`)
	maxDDTags    = 1024
	maxDDService = 256
	maxSecret    = 1024
)

// compileOnUse returns pattern's regexp, compiled on first use: the counted repetitions of
// some of these make them slow to compile, which would otherwise land in every cold start.
func compileOnUse(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}

// awsPartition reports whether p is an AWS partition a target may be in.
func awsPartition(p string) bool { return p == "aws" || p == "aws-cn" || p == "aws-us-gov" }

// resourceARN checks that s is an ARN of service whose resource matches re.
func resourceARN(s, service string, re func() *regexp.Regexp) bool {
	a, err := arn.Parse(s)
	return err == nil && awsPartition(a.Partition) && a.Service == service && regionRE().MatchString(a.Region) &&
		accountRE().MatchString(a.AccountID) && re().MatchString(a.Resource)
}

// RoleAccount is the AWS account of the role ARN s ("" when s is not an ARN).
func RoleAccount(s string) string {
	a, err := arn.Parse(s)
	if err != nil {
		return ""
	}
	return a.AccountID
}

func roleARN(s string) bool {
	a, err := arn.Parse(s)
	return err == nil && awsPartition(a.Partition) && a.Service == "iam" && a.Region == "" &&
		accountRE().MatchString(a.AccountID) && roleRE().MatchString(a.Resource)
}

func badTarget(field, format string, args ...any) *api.Error {
	return api.BadRequest(CodeBadTarget, field, format, args...)
}

// parseTarget validates a supplied target. prev is the stored target on PATCH (nil on
// create): the kind may not change, and an omitted secret keeps the stored one when the
// target still authenticates the same way. deployment is the AWS account the deployment runs
// in (empty when unknown): a role there is refused. It returns the new target (with prev's sealed
// secret when kept) and the plaintext secret to seal, if a new one was supplied.
func parseTarget(in *TargetJSON, prev *Target, deployment string) (Target, *string, error) {
	if in == nil {
		return Target{}, nil, api.BadRequest(CodeNoTarget, "target", "target is required: one of firehose, kinesis, cloudwatch_logs, datadog or azure_logs_ingestion")
	}
	var kinds []string
	for _, k := range []struct {
		kind string
		set  bool
	}{
		{KindFirehose, in.Firehose != nil}, {KindKinesis, in.Kinesis != nil}, {KindCloudWatchLogs, in.CloudwatchLogs != nil},
		{KindDatadog, in.Datadog != nil}, {KindAzure, in.AzureLogsIngestion != nil},
	} {
		if k.set {
			kinds = append(kinds, k.kind)
		}
	}
	switch {
	case len(kinds) == 0:
		return Target{}, nil, api.BadRequest(CodeNoTarget, "target", "target must set one of firehose, kinesis, cloudwatch_logs, datadog or azure_logs_ingestion")
	case len(kinds) > 1:
		return Target{}, nil, api.BadRequest(CodeManyTargets, "target", "target sets %s; exactly one target kind is allowed", strings.Join(kinds, " and "))
	}
	kind := kinds[0]
	if prev != nil && prev.Kind != kind {
		return Target{}, nil, api.BadRequest(CodeTargetChanged, "target."+kind,
			"the target kind of a destination cannot change (it is %s); create a new destination instead", prev.Kind)
	}
	t := Target{Kind: kind}
	field := "target." + kind
	switch kind {
	case KindFirehose:
		return parseAWS(t, prev, field, in.Firehose.Auth, in.Firehose.DeliveryStreamARN, deployment)
	case KindKinesis:
		return parseAWS(t, prev, field, in.Kinesis.Auth, in.Kinesis.StreamARN, deployment)
	case KindCloudWatchLogs:
		return parseAWS(t, prev, field, in.CloudwatchLogs.Auth, in.CloudwatchLogs.LogGroupARN, deployment)
	case KindDatadog:
		return parseDatadog(t, prev, field, in.Datadog)
	case KindAzure:
		return parseAzure(t, prev, field, in.AzureLogsIngestion)
	default:
		return Target{}, nil, badTarget("target", "target kind %s is not one of firehose, kinesis, cloudwatch_logs, datadog or azure_logs_ingestion", kind)
	}
}

// parseAWS validates the target of the AWS kind t.Kind: the ARN of its resource and its auth.
func parseAWS(t Target, prev *Target, field string, auth *AWSAuthJSON, arnIn *string, deployment string) (Target, *string, error) {
	k, _ := awsKindOf(t.Kind)
	f := field + "." + k.member
	if arnIn == nil || *arnIn == "" {
		return t, nil, badTarget(f, "%s is required", f)
	}
	if !resourceARN(*arnIn, k.service, k.resource) {
		return t, nil, badTarget(f, "%s %s is not an ARN of the form %s", f, api.Describe(*arnIn), k.shape)
	}
	t.ARN = *arnIn
	af := field + ".auth"
	if auth == nil || (auth.Role == nil && auth.Creds == nil) {
		return t, nil, api.BadRequest(CodeBadAuth, af, "%s must set one of role or creds", af)
	}
	if auth.Role != nil && auth.Creds != nil {
		return t, nil, api.BadRequest(CodeManyAuths, af, "%s sets both role and creds; exactly one is allowed", af)
	}
	if auth.Role != nil {
		rf := af + ".role.role_arn"
		if auth.Role.RoleARN == nil || !roleARN(*auth.Role.RoleARN) {
			v := ""
			if auth.Role.RoleARN != nil {
				v = *auth.Role.RoleARN
			}
			return t, nil, api.BadRequest(CodeBadAuth, rf, "%s %s is not an IAM role ARN (arn:aws:iam::<account>:role/<name>)", rf, api.Describe(v))
		}
		if deployment != "" && RoleAccount(*auth.Role.RoleARN) == deployment {
			return t, nil, api.BadRequest(CodeBadAuth, rf, "%s %s is a role of this service's own AWS account, which it never assumes; name a role of your AWS account that trusts the service with your account id as external id", rf, api.Describe(*auth.Role.RoleARN))
		}
		t.RoleARN = *auth.Role.RoleARN
		return t, nil, nil
	}
	c := auth.Creds
	kf := af + ".creds.aws_access_key_id"
	if c.AccessKeyID == nil || !accessKeyRE().MatchString(*c.AccessKeyID) {
		return t, nil, api.BadRequest(CodeBadAuth, kf, "%s must be an AWS access key id (16 to 128 upper-case letters and digits)", kf)
	}
	t.AccessKeyID = *c.AccessKeyID
	sf := af + ".creds.aws_secret_access_key"
	if c.SecretAccessKey == nil {
		// The stored secret still belongs to this key id: keep it.
		if prev != nil && prev.Secret != nil && prev.RoleARN == "" && prev.AccessKeyID == t.AccessKeyID {
			t.Secret = prev.Secret
			return t, nil, nil
		}
		return t, nil, api.BadRequest(CodeBadAuth, sf, "%s is required", sf)
	}
	if *c.SecretAccessKey == "" || len(*c.SecretAccessKey) > maxSecret {
		return t, nil, api.BadRequest(CodeBadAuth, sf, "%s must be 1 to %d bytes", sf, maxSecret)
	}
	return t, c.SecretAccessKey, nil
}

func parseDatadog(t Target, prev *Target, field string, in *DatadogJSON) (Target, *string, error) {
	t.DDSite = DefaultDatadogSite
	if in.DDSite != nil {
		site := strings.ToLower(*in.DDSite)
		ok := false
		for _, s := range DatadogSites {
			ok = ok || s == site
		}
		if !ok {
			return t, nil, api.BadRequest(CodeDDSite, field+".ddsite", "%s.ddsite %s is not a Datadog site (%s)", field,
				api.Describe(*in.DDSite), strings.Join(DatadogSites, ", "))
		}
		t.DDSite = site
	}
	if in.DDTags != nil {
		if len(*in.DDTags) > maxDDTags {
			return t, nil, badTarget(field+".ddtags", "%s.ddtags is longer than %d bytes", field, maxDDTags)
		}
		t.DDTags = *in.DDTags
	}
	if in.Service != nil {
		if len(*in.Service) > maxDDService {
			return t, nil, badTarget(field+".service", "%s.service is longer than %d bytes", field, maxDDService)
		}
		t.Service = *in.Service
	}
	kf := field + ".api_key"
	if in.APIKey == nil {
		if prev != nil && prev.Secret != nil {
			t.Secret = prev.Secret
			return t, nil, nil
		}
		return t, nil, api.BadRequest(CodeDDAPIKey, kf, "%s is required", kf)
	}
	if !ddKeyRE().MatchString(*in.APIKey) {
		return t, nil, api.BadRequest(CodeDDAPIKey, kf, "%s must be a Datadog API key (32 lower-case hex digits)", kf)
	}
	return t, in.APIKey, nil
}

func parseAzure(t Target, prev *Target, field string, in *AzureJSON) (Target, *string, error) {
	req := func(name string, v *string, re func() *regexp.Regexp, shape string) (string, error) {
		f := field + "." + name
		if v == nil || *v == "" {
			return "", badTarget(f, "%s is required", f)
		}
		if re != nil && !re().MatchString(*v) {
			return "", badTarget(f, "%s %s is not %s", f, api.Describe(*v), shape)
		}
		return *v, nil
	}
	var err error
	if t.TenantID, err = req("tenant_id", in.TenantID, tenantRE, "a tenant id or domain"); err != nil {
		return t, nil, err
	}
	if t.ClientID, err = req("client_id", in.ClientID, guidRE, "an application (client) id GUID"); err != nil {
		return t, nil, err
	}
	if t.IngestionURI, err = req("logs_ingestion_uri", in.LogsIngestionURI, nil, ""); err != nil {
		return t, nil, err
	}
	if !ingestionURI(t.IngestionURI) {
		f := field + ".logs_ingestion_uri"
		return t, nil, badTarget(f, "%s %s is not an https URL of an Azure Monitor data collection endpoint (*%s)", f,
			api.Describe(t.IngestionURI), azureIngestionSuffixes[0])
	}
	t.IngestionURI = strings.TrimSuffix(t.IngestionURI, "/")
	if t.RuleID, err = req("data_collection_rule_id", in.DataCollectionRuleID, ruleIDRE, "a data collection rule immutable id (dcr-<32 hex digits>)"); err != nil {
		return t, nil, err
	}
	if t.StreamName, err = req("data_collection_stream_name", in.DataCollectionStreamName, dcrStreamRE, "a stream name (Custom-<name> or Microsoft-<name>)"); err != nil {
		return t, nil, err
	}
	sf := field + ".client_secret"
	if in.ClientSecret == nil {
		if prev != nil && prev.Secret != nil && prev.TenantID == t.TenantID && prev.ClientID == t.ClientID {
			t.Secret = prev.Secret
			return t, nil, nil
		}
		return t, nil, badTarget(sf, "%s is required", sf)
	}
	if *in.ClientSecret == "" || len(*in.ClientSecret) > maxSecret {
		return t, nil, badTarget(sf, "%s must be 1 to %d bytes", sf, maxSecret)
	}
	return t, in.ClientSecret, nil
}

func ingestionURI(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Port() != "" {
		return false
	}
	host := strings.ToLower(u.Hostname())
	for _, suf := range azureIngestionSuffixes {
		if strings.HasSuffix(host, suf) && len(host) > len(suf) {
			return true
		}
	}
	return false
}
