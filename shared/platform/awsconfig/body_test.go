package awsconfig

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A call that succeeds leaves its connection to the next one, even when the server answers as
// soon as it has the request's header: the SDK then closes the request's body while net/http
// may still be sending it, which, with the body as the SDK hands it over, fails the write and
// drops the connection (memoryBodies).
func TestCallsKeepTheirConnection(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = io.WriteString(w, `{"Responses":{}}`)
	}))
	defer srv.Close()
	c := dynamodb.NewFromConfig(New(Settings{Region: "us-east-1", AccessKeyID: "k", SecretAccessKey: "s"}), func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(srv.URL)
		o.DisableValidateResponseChecksum = true
	})
	const calls = 200
	var dialed, wroteErrs int
	trace := &httptrace.ClientTrace{
		ConnectStart: func(string, string) { dialed++ },
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err != nil {
				wroteErrs++
			}
		},
	}
	ctx := httptrace.WithClientTrace(context.Background(), trace)
	in := &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"t": {Keys: []map[string]types.AttributeValue{
		{"pk": &types.AttributeValueMemberS{Value: "A#1"}, "sk": &types.AttributeValueMemberS{Value: "T"}},
	}}}}
	for i := 0; i < calls; i++ {
		if _, err := c.BatchGetItem(ctx, in); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if dialed != 1 || wroteErrs != 0 {
		t.Errorf("%d calls dialed %d connections and failed %d request writes, want 1 and 0", calls, dialed, wroteErrs)
	}
}
