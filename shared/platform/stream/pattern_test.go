package stream_test

import (
	"encoding/json"
	"strings"
	"testing"

	"tunnelapi/shared/platform/stream"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestPatternMatch(t *testing.T) {
	outbox := `{"eventName":["INSERT"],"dynamodb":{"Keys":{"pk":{"S":[{"prefix":"O#"}]}}}}`
	cases := []struct {
		pattern, event string
		want           bool
	}{
		{outbox, `{"eventName":"INSERT","dynamodb":{"Keys":{"pk":{"S":"O#3"},"sk":{"S":"ev_1"}}}}`, true},
		{outbox, `{"eventName":"REMOVE","dynamodb":{"Keys":{"pk":{"S":"O#3"}}}}`, false},
		{outbox, `{"eventName":"MODIFY","dynamodb":{"Keys":{"pk":{"S":"O#3"}}}}`, false},
		{outbox, `{"eventName":"INSERT","dynamodb":{"Keys":{"pk":{"S":"E#ac_1"}}}}`, false},
		{outbox, `{"eventName":"INSERT","dynamodb":{"Keys":{"pk":{"N":"1"}}}}`, false},
		{outbox, `{"eventName":"INSERT"}`, false},
		{outbox, `{"eventName":"INSERT","dynamodb":{"Keys":{"pk":{"S":"o#3"}}}}`, false},
		{`{"a":["x","y"]}`, `{"a":"y"}`, true},
		{`{"a":["x","y"]}`, `{"a":["q","x"]}`, true},
		{`{"a":["x"]}`, `{"a":["q","r"]}`, false},
		{`{"n":[5]}`, `{"n":5.0}`, true},
		{`{"n":[5]}`, `{"n":"5"}`, false},
		{`{"b":[true]}`, `{"b":true}`, true},
		{`{"z":[null]}`, `{"z":null}`, true},
		{`{"z":[null]}`, `{}`, false},
		{`{"a":[{"exists":true}]}`, `{"a":1}`, true},
		{`{"a":[{"exists":true}]}`, `{"b":1}`, false},
		{`{"a":[{"exists":false}]}`, `{"b":1}`, true},
		{`{"a":[{"exists":false}]}`, `{"a":1}`, false},
		{`{"a":[{"anything-but":["x","y"]}]}`, `{"a":"z"}`, true},
		{`{"a":[{"anything-but":"x"}]}`, `{"a":"x"}`, false},
		{`{"a":[{"anything-but":"x"}]}`, `{}`, false},
		{`{"a":{"b":["c"]},"d":["e"]}`, `{"a":{"b":"c"},"d":"e"}`, true},
		{`{"a":{"b":["c"]},"d":["e"]}`, `{"a":{"b":"c"},"d":"f"}`, false},
		{`{"a":{"b":["c"]}}`, `{"a":"c"}`, false},
	}
	for _, c := range cases {
		p, err := stream.ParsePattern(c.pattern)
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		if got := p.Match(decode(t, c.event)); got != c.want {
			t.Errorf("%s on %s: %v, want %v", c.pattern, c.event, got, c.want)
		}
	}
}

// A pattern this package cannot evaluate is refused, never treated as matching.
func TestPatternRefusesWhatItCannotEvaluate(t *testing.T) {
	for _, bad := range []string{
		``, `[]`, `{}`, `{"a":"x"}`, `{"a":[]}`, `{"a":[{"numeric":[">",1]}]}`, `{"a":[{"suffix":"x"}]}`,
		`{"a":[{"prefix":1}]}`, `{"a":[{"exists":"yes"}]}`, `{"a":[{"prefix":"x","exists":true}]}`,
		`{"a":[{"anything-but":{"prefix":"x"}}]}`, `{"a":[["x"]]}`,
	} {
		if _, err := stream.ParsePattern(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}

func TestTemplate(t *testing.T) {
	tpl, err := stream.ParseTemplate("<$.dynamodb.NewImage.payload.S>")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tpl.Apply(decode(t, `{"dynamodb":{"NewImage":{"payload":{"S":"{\"event_id\":\"ev_1\"}"}}}}`))
	if err != nil || got != `{"event_id":"ev_1"}` {
		t.Fatalf("%q, %v", got, err)
	}
	for _, ev := range []string{`{}`, `{"dynamodb":{"NewImage":{"payload":{"N":"1"}}}}`, `{"dynamodb":{"NewImage":{"payload":{"S":1}}}}`, `{"dynamodb":"x"}`} {
		if _, err := tpl.Apply(decode(t, ev)); err == nil {
			t.Errorf("%s: no error", ev)
		}
	}
	for _, bad := range []string{"", "$.a", "<$.a> <$.b>", `{"a": <$.a>}`, "<$>", "<$.a[0]>", "hello"} {
		if _, err := stream.ParseTemplate(bad); err == nil || !strings.Contains(err.Error(), "placeholder") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
