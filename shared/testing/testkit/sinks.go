package testkit

import (
	"strings"
	"testing"
	"time"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/testing/standin"
)

// Sinks is a stack of every family with the events pipeline, the stand-ins of every sink an
// event destination can name, and the event worker's configuration pointing at both.
type Sinks struct {
	*Stack
	// Stand holds the sinks' stand-ins; it trusts the stack's own AWS credentials, which sign
	// the worker's STS calls.
	Stand *standin.Stand
	// Worker is the event worker's configuration: the stack's events queue and dead-letter
	// queue, the stand-ins as its sinks.
	Worker config.EventWorker
}

// StartSinks starts a Sinks, stopped when the test ends; it skips without an SQS emulator.
func StartSinks(t testing.TB) *Sinks {
	t.Helper()
	s := StartWithEvents(t, app.Families...)
	if s.Queues == nil {
		t.Skip("no SQS emulator")
	}
	st := standin.Start()
	t.Cleanup(st.Close)
	c := Config(t, config.LoadEventWorker)
	st.Creds.Add(c.AWS.AccessKeyID, c.AWS.SecretAccessKey, "", time.Time{})
	c.QueueURL, c.DLQURL, c.Sinks = s.Queues.Events, s.Queues.DLQ, st.Endpoints()
	return &Sinks{Stack: s, Stand: st, Worker: c}
}

// KinesisTarget is an event destination target for the Kinesis stream named stream (region
// us-east-1), authenticated with fresh access keys the stand-in accepts.
func (s *Sinks) KinesisTarget(stream string) map[string]any {
	akid, secret := "AKIA"+strings.ToUpper(ids.RandomBase62(16)), ids.RandomBase62(40)
	s.Stand.Creds.Add(akid, secret, "", time.Time{})
	return map[string]any{"kinesis": map[string]any{"stream_arn": "arn:aws:kinesis:us-east-1:123456789012:stream/" + stream,
		"auth": map[string]any{"creds": map[string]any{"aws_access_key_id": akid, "aws_secret_access_key": secret}}}}
}
