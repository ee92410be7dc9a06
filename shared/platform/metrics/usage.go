package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"sync"
)

// Usage is one usage line: what one request, batch of events delivered to a destination or
// issued certificate of an account used, written to the same output as the metric lines
// (standard output, which Lambda sends to the function's log group). Its first member, "usage", names the account: the log
// groups' subscription filter (UsageFilterPattern) selects the lines by it, and the usage worker
// sums them per account and day. A line carries counts and capacity only, never a token, a
// secret or a resource's content.
type Usage struct {
	Account string `json:"usage"`
	// Family is the collection path of the family a request was served by, without its
	// leading slash ("api_keys", "backends/failover"); empty for a worker's line.
	Family string `json:"f,omitempty"`
	// Status is a request's HTTP status.
	Status int `json:"s,omitempty"`
	// Mutation is 1 when the request committed a change.
	Mutation int `json:"m,omitempty"`
	// Items is how many resources the request or job created less how many it deleted.
	Items int `json:"n,omitempty"`
	// Events and Certificates count an event delivered to a destination and a certificate issued.
	Events       int `json:"e,omitempty"`
	Certificates int `json:"c,omitempty"`
	// ReadUnits and WriteUnits are the DynamoDB capacity units its calls consumed.
	ReadUnits  float64 `json:"r,omitempty"`
	WriteUnits float64 `json:"w,omitempty"`
}

// UsageFilterPattern is the CloudWatch Logs filter pattern that selects usage lines from a log
// group: JSON events whose "usage" member is a string.
const UsageFilterPattern = `{ $.usage = "*" }`

// usagePrefix begins every usage line (Usage's first member).
var usagePrefix = []byte(`{"usage":`)

// UsageLine is u as written: one JSON object and a newline.
func UsageLine(u Usage) []byte { return appendUsageLine(nil, u) }

// appendUsageLine appends u's line to line: the bytes json.Marshal writes, written directly (the
// event worker writes a line per batch it delivers, and reflection cost more than the rest of
// the line's work).
func appendUsageLine(line []byte, u Usage) []byte {
	if math.IsNaN(u.ReadUnits) || math.IsInf(u.ReadUnits, 0) || math.IsNaN(u.WriteUnits) || math.IsInf(u.WriteUnits, 0) {
		m, _ := json.Marshal(u) // as before: no JSON for them, an empty line
		return append(append(line, m...), '\n')
	}
	line = appendString(append(line, usagePrefix...), u.Account)
	if u.Family != "" {
		line = appendString(append(line, `,"f":`...), u.Family)
	}
	for _, f := range [...]struct {
		name string
		v    int
	}{{`,"s":`, u.Status}, {`,"m":`, u.Mutation}, {`,"n":`, u.Items}, {`,"e":`, u.Events}, {`,"c":`, u.Certificates}} {
		if f.v != 0 {
			line = strconv.AppendInt(append(line, f.name...), int64(f.v), 10)
		}
	}
	if u.ReadUnits != 0 {
		line = appendJSONFloat(append(line, `,"r":`...), u.ReadUnits)
	}
	if u.WriteUnits != 0 {
		line = appendJSONFloat(append(line, `,"w":`...), u.WriteUnits)
	}
	return append(line, '}', '\n')
}

// appendJSONFloat appends f as encoding/json writes a float64.
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1] // e-09 as e-9
		b = b[:n-1]
	}
	return b
}

// EmitUsage writes u's line (see Emit: a write error is dropped). A line without an account is
// not written: usage belongs to an account.
func (e *Emitter) EmitUsage(u Usage) {
	if u.Account == "" {
		return
	}
	if e == nil {
		e = Stdout
	}
	line := UsageLine(u)
	e.mu.Lock()
	defer e.mu.Unlock()
	_, _ = e.W.Write(line)
}

// IsUsageLine reports whether line begins as a usage line does (ParseUsage reads it).
func IsUsageLine(line []byte) bool { return bytes.HasPrefix(bytes.TrimSpace(line), usagePrefix) }

// ParseUsage reads one log line as a usage line; an error when it is not one.
func ParseUsage(line []byte) (Usage, error) {
	line = bytes.TrimSpace(line)
	if !bytes.HasPrefix(line, usagePrefix) {
		return Usage{}, errors.New("not a usage line")
	}
	var u Usage
	if err := json.Unmarshal(line, &u); err != nil {
		return Usage{}, err
	}
	if u.Account == "" {
		return Usage{}, errors.New("a usage line without an account")
	}
	return u, nil
}

// Tally is what one request or job used, summed while it runs: the DynamoDB capacity its calls
// consumed and the transactions it committed. Package store adds to the Tally its context
// carries (WithTally); it is safe for concurrent use (a request's reads run alongside its rate
// limit's count).
type Tally struct {
	mu                    sync.Mutex
	readUnits, writeUnits float64
	commits, items        int
	notes                 []any
	inline                [2]any // the first notes, without an allocation of their own
}

type tallyKey struct{}

// WithTally returns ctx carrying t: the store's calls under it add to t.
func WithTally(ctx context.Context, t *Tally) context.Context {
	return context.WithValue(ctx, tallyKey{}, t)
}

// TallyOf returns the Tally ctx carries, or nil.
func TallyOf(ctx context.Context) *Tally {
	t, _ := ctx.Value(tallyKey{}).(*Tally)
	return t
}

// AddCapacity adds the capacity units one call consumed.
func (t *Tally) AddCapacity(read, write float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.readUnits += read
	t.writeUnits += write
}

// AddCommit counts a committed transaction that created items resources less those it deleted.
func (t *Tally) AddCommit(items int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.commits++
	t.items += items
}

// Note keeps v for the rest of what t tallies: package store keeps there the items the request
// read, from which it counts its transactions' write units instead of asking DynamoDB.
func (t *Tally) Note(v any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.notes == nil {
		t.notes = t.inline[:0]
	}
	t.notes = append(t.notes, v)
}

// Notes are the values kept by Note, oldest first.
func (t *Tally) Notes() []any {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.notes[:len(t.notes):len(t.notes)]
}

// Fill sets u's capacity, mutation and items from what t summed.
func (t *Tally) Fill(u *Usage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	u.ReadUnits, u.WriteUnits, u.Items = round(t.readUnits), round(t.writeUnits), t.items
	if t.commits > 0 {
		u.Mutation = 1
	}
}

// round keeps a capacity sum to the precision DynamoDB reports units in (half units and
// their fractions), without float noise in the line.
func round(v float64) float64 { return math.Round(v*1e4) / 1e4 }
