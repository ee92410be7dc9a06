package standin

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/workers/delivery"
)

// Received is one record a stand-in accepted.
type Received struct {
	// Target is the stream, delivery stream, log group, Datadog service or Azure stream.
	Target string
	// Key is the record's dedupe key (Kinesis partition key; the event id elsewhere).
	Key  string
	Data []byte
	// Auth is who sent it: an AWS access key id, a Datadog API key, an Azure client id.
	Auth string
	At   time.Time
}

// Sink is what every stand-in shares: the records it accepted, its calls, and failure injection.
type Sink struct {
	*httptest.Server
	mu       sync.Mutex
	received []Received
	calls    []time.Time
	failing  atomic.Int32
	// Rejects counts requests refused for a bad shape or authentication: a correct client
	// makes none.
	Rejects atomic.Int64
	// LastReject is the reason of the latest refused request.
	LastReject atomic.Value
}

// Fail makes every following request fail with status (0 stops failing).
func (s *Sink) Fail(status int) { s.failing.Store(int32(status)) }

// Received returns a copy of what was accepted so far.
func (s *Sink) Received() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.received...)
}

// Calls returns the times of every request (accepted, failed or rejected).
func (s *Sink) Calls() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.calls...)
}

// Unique returns the accepted records by dedupe key, as a consumer that drops duplicates by
// key sees them, and how many duplicates it dropped.
func (s *Sink) Unique() (map[string]Received, int) {
	out := map[string]Received{}
	dups := 0
	for _, r := range s.Received() {
		if _, ok := out[r.Key]; ok {
			dups++
			continue
		}
		out[r.Key] = r
	}
	return out, dups
}

func (s *Sink) accept(rs ...Received) {
	s.mu.Lock()
	s.received = append(s.received, rs...)
	s.mu.Unlock()
}

// reject refuses an AWS request with an AWS JSON error of awsType.
func (s *Sink) reject(w http.ResponseWriter, status int, awsType, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.rejected(msg)
	writeAWSError(w, status, awsType, msg)
}

// refuse refuses a request with body, the service's own error form for msg.
func (s *Sink) refuse(w http.ResponseWriter, status int, msg, body string) {
	s.rejected(msg)
	http.Error(w, body, status)
}

// rejected counts a refused request and keeps msg as the last reason.
func (s *Sink) rejected(msg string) {
	s.Rejects.Add(1)
	s.LastReject.Store(msg)
}

func writeAWSError(w http.ResponseWriter, status int, awsType, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-Errortype", awsType)
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"__type": awsType, "message": msg})
}

// begin records the call and reads the body; it answers and returns false when failing.
func (s *Sink) begin(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	s.mu.Lock()
	s.calls = append(s.calls, time.Now())
	s.mu.Unlock()
	body, err := io.ReadAll(io.LimitReader(r.Body, 10<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return nil, false
	}
	if st := int(s.failing.Load()); st != 0 {
		if r.Header.Get("X-Amz-Target") != "" || r.Header.Get("Authorization") != "" && strings.HasPrefix(r.Header.Get("Authorization"), "AWS4") {
			writeAWSError(w, st, "InternalFailure", "injected failure")
		} else {
			http.Error(w, `{"errors":["injected failure"]}`, st)
		}
		return nil, false
	}
	return body, true
}

// Stand is one stand-in for every sink, sharing the AWS keys they accept.
type Stand struct {
	Creds    *Credentials
	Kinesis  *Sink
	Firehose *Sink
	Logs     *Sink
	STS      *STS
	Datadog  *Sink
	Azure    *Azure
	// DatadogKeys are the API keys the Datadog stand-in accepts.
	DatadogKeys sync.Map

	logStreams sync.Map
}

// Start starts every stand-in; Close stops them.
func Start() *Stand {
	s := &Stand{Creds: &Credentials{}}
	s.Kinesis = s.awsSink("kinesis", "Kinesis_20131202.", []string{"PutRecords"}, s.kinesis)
	s.Firehose = s.awsSink("firehose", "Firehose_20150804.", []string{"PutRecordBatch"}, s.firehose)
	s.Logs = s.awsSink("logs", "Logs_20140328.", []string{"CreateLogStream", "PutLogEvents"}, s.logs)
	s.STS = &STS{Sink: &Sink{}, creds: s.Creds}
	s.STS.Server = httptest.NewServer(http.HandlerFunc(s.STS.serve))
	s.Datadog = &Sink{}
	s.Datadog.Server = httptest.NewServer(http.HandlerFunc(s.datadog))
	s.Azure = &Azure{Sink: &Sink{}, apps: map[string]string{}, tokens: map[string]azureToken{}}
	s.Azure.Server = httptest.NewServer(http.HandlerFunc(s.Azure.serve))
	return s
}

// Close stops every stand-in.
func (s *Stand) Close() {
	for _, x := range []*Sink{s.Kinesis, s.Firehose, s.Logs, s.STS.Sink, s.Datadog, s.Azure.Sink} {
		x.Close()
	}
}

// Endpoints points a worker at the stand-ins.
func (s *Stand) Endpoints() config.Sinks {
	return config.Sinks{Kinesis: s.Kinesis.URL, Firehose: s.Firehose.URL, Logs: s.Logs.URL, STS: s.STS.URL,
		Datadog: s.Datadog.URL, AzureLogin: s.Azure.URL, AzureIngestion: s.Azure.URL}
}

type awsHandler func(sink *Sink, w http.ResponseWriter, op string, body []byte, sig SigV4)

// awsSink serves an AWS JSON 1.1 service: X-Amz-Target names the operation, one of ops, the
// body is JSON, and every request must carry a valid SigV4 signature for service.
func (s *Stand) awsSink(service, targetPrefix string, ops []string, h awsHandler) *Sink {
	sink := &Sink{}
	sink.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := sink.begin(w, r)
		if !ok {
			return
		}
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-amz-json-1.1" {
			sink.reject(w, 400, "SerializationException", "want POST with Content-Type application/x-amz-json-1.1")
			return
		}
		sig, err := s.Creds.Verify(r, body, service)
		if err != nil {
			sink.reject(w, 403, "InvalidSignatureException", "%s", err.Error())
			return
		}
		op, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), targetPrefix)
		if !ok {
			sink.reject(w, 400, "UnknownOperationException", "unknown target %q", r.Header.Get("X-Amz-Target"))
			return
		}
		if !slices.Contains(ops, op) {
			sink.reject(w, 400, "UnknownOperationException", "unsupported operation %s", op)
			return
		}
		h(sink, w, op, body, sig)
	}))
	return sink
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (s *Stand) kinesis(sink *Sink, w http.ResponseWriter, op string, body []byte, sig SigV4) {
	var in struct {
		StreamARN  string
		StreamName string
		Records    []struct {
			Data         []byte
			PartitionKey string
		}
	}
	if err := json.Unmarshal(body, &in); err != nil {
		sink.reject(w, 400, "SerializationException", "%s", err.Error())
		return
	}
	if in.StreamARN == "" && in.StreamName == "" {
		sink.reject(w, 400, "ValidationException", "StreamARN or StreamName is required")
		return
	}
	if !strings.Contains(in.StreamARN, ":"+sig.Region+":") {
		sink.reject(w, 400, "ValidationException", "the stream is not in the signed region %s", sig.Region)
		return
	}
	if n := len(in.Records); n < 1 || n > 500 {
		sink.reject(w, 400, "ValidationException", "1 to 500 records per call, not %d", n)
		return
	}
	var rs []Received
	out := map[string]any{"FailedRecordCount": 0}
	var results []map[string]string
	for i, rec := range in.Records {
		if len(rec.PartitionKey) < 1 || len(rec.PartitionKey) > 256 || len(rec.Data) == 0 || len(rec.Data) > 1<<20 {
			sink.reject(w, 400, "ValidationException", "record %d: partition key 1..256 chars and data 1 byte..1 MiB", i)
			return
		}
		rs = append(rs, Received{Target: in.StreamARN, Key: rec.PartitionKey, Data: rec.Data, Auth: sig.AccessKeyID, At: time.Now()})
		results = append(results, map[string]string{"SequenceNumber": fmt.Sprint(time.Now().UnixNano()), "ShardId": "shardId-000000000000"})
	}
	sink.accept(rs...)
	out["Records"] = results
	writeJSON(w, 200, out)
}

func (s *Stand) firehose(sink *Sink, w http.ResponseWriter, op string, body []byte, sig SigV4) {
	var in struct {
		DeliveryStreamName string
		Records            []struct{ Data []byte }
	}
	if err := json.Unmarshal(body, &in); err != nil || in.DeliveryStreamName == "" {
		sink.reject(w, 400, "ValidationException", "DeliveryStreamName and Records are required")
		return
	}
	if n := len(in.Records); n < 1 || n > 500 {
		sink.reject(w, 400, "ValidationException", "1 to 500 records per call, not %d", n)
		return
	}
	var rs []Received
	var results []map[string]string
	for _, rec := range in.Records {
		var head struct {
			EventID string `json:"event_id"`
		}
		if len(rec.Data) == 0 || rec.Data[len(rec.Data)-1] != '\n' || json.Unmarshal(rec.Data, &head) != nil {
			sink.reject(w, 400, "ValidationException", "each record must be one JSON document ending in a newline")
			return
		}
		rs = append(rs, Received{Target: in.DeliveryStreamName, Key: head.EventID, Data: rec.Data, Auth: sig.AccessKeyID, At: time.Now()})
		results = append(results, map[string]string{"RecordId": ids.RandomBase62(20)})
	}
	sink.accept(rs...)
	writeJSON(w, 200, map[string]any{"FailedPutCount": 0, "Encrypted": false, "RequestResponses": results})
}

func (s *Stand) logs(sink *Sink, w http.ResponseWriter, op string, body []byte, sig SigV4) {
	var in struct {
		LogGroupName  string `json:"logGroupName"`
		LogStreamName string `json:"logStreamName"`
		LogEvents     []struct {
			Timestamp int64  `json:"timestamp"`
			Message   string `json:"message"`
		} `json:"logEvents"`
	}
	if err := json.Unmarshal(body, &in); err != nil || in.LogGroupName == "" || in.LogStreamName == "" {
		sink.reject(w, 400, "InvalidParameterException", "logGroupName and logStreamName are required")
		return
	}
	key := in.LogGroupName + "\x00" + in.LogStreamName
	switch op {
	case "CreateLogStream":
		if _, loaded := s.logStreams.LoadOrStore(key, true); loaded {
			writeAWSError(w, 400, "ResourceAlreadyExistsException", "The specified log stream already exists")
			return
		}
		writeJSON(w, 200, map[string]any{})
	case "PutLogEvents":
		if _, ok := s.logStreams.Load(key); !ok {
			writeAWSError(w, 400, "ResourceNotFoundException", "The specified log stream does not exist.")
			return
		}
		if n := len(in.LogEvents); n < 1 || n > 10000 {
			sink.reject(w, 400, "InvalidParameterException", "1 to 10000 log events per call, not %d", n)
			return
		}
		var rs []Received
		for i, e := range in.LogEvents {
			if i > 0 && e.Timestamp < in.LogEvents[i-1].Timestamp {
				sink.reject(w, 400, "InvalidParameterException", "Log events in a single PutLogEvents request must be in chronological order.")
				return
			}
			var head struct {
				EventID string `json:"event_id"`
			}
			if json.Unmarshal([]byte(e.Message), &head) != nil || e.Timestamp <= 0 {
				sink.reject(w, 400, "InvalidParameterException", "event %d: message must be JSON with a timestamp", i)
				return
			}
			rs = append(rs, Received{Target: in.LogGroupName, Key: head.EventID, Data: []byte(e.Message), Auth: sig.AccessKeyID, At: time.Now()})
		}
		sink.accept(rs...)
		writeJSON(w, 200, map[string]any{"nextSequenceToken": ids.RandomBase62(20)})
	}
}

// datadog serves POST /api/v2/logs with DD-API-KEY.
func (s *Stand) datadog(w http.ResponseWriter, r *http.Request) {
	sink := s.Datadog
	body, ok := sink.begin(w, r)
	if !ok {
		return
	}
	fail := func(status int, msg string) { sink.refuse(w, status, msg, `{"errors":[`+fmt.Sprintf("%q", msg)+`]}`) }
	key := r.Header.Get("DD-API-KEY")
	if _, ok := s.DatadogKeys.Load(key); !ok {
		fail(403, "Forbidden: invalid API key")
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/api/v2/logs" || r.Header.Get("Content-Type") != "application/json" {
		fail(400, "want POST /api/v2/logs with Content-Type application/json")
		return
	}
	var logs []delivery.DatadogLog
	if err := json.Unmarshal(body, &logs); err != nil || len(logs) == 0 || len(logs) > 1000 {
		fail(400, "the body must be a JSON array of 1 to 1000 logs")
		return
	}
	var rs []Received
	for _, l := range logs {
		if l.Message == "" || l.DDSource == "" || l.EventID == "" {
			fail(400, "each log needs message, ddsource and event_id")
			return
		}
		rs = append(rs, Received{Target: l.Service, Key: l.EventID, Data: []byte(l.Message), Auth: key, At: time.Now()})
	}
	sink.accept(rs...)
	w.WriteHeader(http.StatusAccepted)
	w.Write([]byte("{}"))
}

// STS stands in for the AWS Security Token Service's AssumeRole (query protocol, XML).
type STS struct {
	*Sink
	creds *Credentials
	// TTL is the lifetime of issued credentials (one hour when zero).
	TTL atomic.Int64
	mu  sync.Mutex
	// assumed records every AssumeRole: role ARN and external id.
	assumed []url.Values
}

// Assumed returns the parameters of every AssumeRole call.
func (s *STS) Assumed() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]url.Values(nil), s.assumed...)
}

func (s *STS) serve(w http.ResponseWriter, r *http.Request) {
	body, ok := s.begin(w, r)
	if !ok {
		return
	}
	if _, err := s.creds.Verify(r, body, "sts"); err != nil {
		s.refuse(w, 403, err.Error(), "<ErrorResponse><Error><Code>SignatureDoesNotMatch</Code></Error></ErrorResponse>")
		return
	}
	q, err := url.ParseQuery(string(body))
	if err != nil || q.Get("Action") != "AssumeRole" || q.Get("RoleArn") == "" || q.Get("RoleSessionName") == "" {
		s.Rejects.Add(1)
		http.Error(w, "<ErrorResponse><Error><Code>ValidationError</Code></Error></ErrorResponse>", 400)
		return
	}
	s.mu.Lock()
	s.assumed = append(s.assumed, q)
	s.mu.Unlock()
	ttl := time.Duration(s.TTL.Load())
	if ttl == 0 {
		ttl = time.Hour
	}
	akid := "ASIA" + strings.ToUpper(ids.RandomBase62(16))
	secret, token := ids.RandomBase62(40), ids.RandomBase62(64)
	exp := time.Now().Add(ttl).UTC()
	s.creds.Add(akid, secret, token, exp)
	type credsXML struct {
		AccessKeyID     string `xml:"AccessKeyId"`
		SecretAccessKey string `xml:"SecretAccessKey"`
		SessionToken    string `xml:"SessionToken"`
		Expiration      string `xml:"Expiration"`
	}
	var out struct {
		XMLName xml.Name `xml:"https://sts.amazonaws.com/doc/2011-06-15/ AssumeRoleResponse"`
		Result  struct {
			Credentials credsXML `xml:"Credentials"`
			User        struct {
				AssumedRoleID string `xml:"AssumedRoleId"`
				Arn           string `xml:"Arn"`
			} `xml:"AssumedRoleUser"`
		} `xml:"AssumeRoleResult"`
		Meta struct {
			RequestID string `xml:"RequestId"`
		} `xml:"ResponseMetadata"`
	}
	out.Result.Credentials = credsXML{akid, secret, token, exp.Format(time.RFC3339)}
	out.Result.User.AssumedRoleID = "AROA" + strings.ToUpper(ids.RandomBase62(16)) + ":" + q.Get("RoleSessionName")
	out.Result.User.Arn = q.Get("RoleArn")
	out.Meta.RequestID = ids.RandomBase62(20)
	w.Header().Set("Content-Type", "text/xml")
	xml.NewEncoder(w).Encode(out)
}

// Azure stands in for Microsoft Entra's token endpoint and the Logs Ingestion upload API.
type Azure struct {
	*Sink
	mu     sync.Mutex
	apps   map[string]string // client id → secret
	tokens map[string]azureToken
	// TokenCalls counts client-credentials token requests.
	TokenCalls atomic.Int64
}

type azureToken struct {
	clientID string
	expires  time.Time
}

// AddApp accepts an application's client credentials.
func (a *Azure) AddApp(clientID, secret string) {
	a.mu.Lock()
	a.apps[clientID] = secret
	a.mu.Unlock()
}

func (a *Azure) serve(w http.ResponseWriter, r *http.Request) {
	body, ok := a.begin(w, r)
	if !ok {
		return
	}
	fail := func(status int, msg string) {
		a.refuse(w, status, msg, `{"error":{"message":`+fmt.Sprintf("%q", msg)+`}}`)
	}
	if strings.HasSuffix(r.URL.Path, "/oauth2/v2.0/token") {
		a.TokenCalls.Add(1)
		q, _ := url.ParseQuery(string(body))
		a.mu.Lock()
		secret, known := a.apps[q.Get("client_id")]
		a.mu.Unlock()
		if r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || q.Get("grant_type") != "client_credentials" ||
			q.Get("scope") != delivery.AzureScope {
			fail(400, "invalid_request")
			return
		}
		if !known || secret != q.Get("client_secret") {
			fail(401, "invalid_client")
			return
		}
		tok := ids.RandomBase62(48)
		a.mu.Lock()
		a.tokens[tok] = azureToken{clientID: q.Get("client_id"), expires: time.Now().Add(time.Hour)}
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"token_type": "Bearer", "expires_in": 3599, "access_token": tok})
		return
	}
	// POST /dataCollectionRules/{dcr}/streams/{stream}?api-version=2023-01-01
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if r.Method != http.MethodPost || len(parts) != 4 || parts[0] != "dataCollectionRules" || parts[2] != "streams" ||
		r.URL.Query().Get("api-version") != "2023-01-01" || r.Header.Get("Content-Type") != "application/json" {
		fail(400, "want POST /dataCollectionRules/{id}/streams/{name}?api-version=2023-01-01 with JSON")
		return
	}
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	a.mu.Lock()
	t, ok := a.tokens[tok]
	a.mu.Unlock()
	if !ok || time.Now().After(t.expires) {
		fail(401, "InvalidAuthenticationToken")
		return
	}
	var rows []delivery.AzureRow
	if err := json.Unmarshal(body, &rows); err != nil || len(rows) == 0 {
		fail(400, "the body must be a JSON array of rows")
		return
	}
	var rs []Received
	for _, row := range rows {
		if row.TimeGenerated == "" || row.EventID == "" {
			fail(400, "each row needs TimeGenerated and event_id")
			return
		}
		b, _ := json.Marshal(row)
		rs = append(rs, Received{Target: parts[3], Key: row.EventID, Data: b, Auth: t.clientID, At: time.Now()})
	}
	a.accept(rs...)
	w.WriteHeader(http.StatusNoContent)
}
