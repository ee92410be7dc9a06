package faults

import "testing"

// Class is one kind of weather between the service and an emulator: a toxic on the network
// (Toxic set) or DynamoDB answering with its own failures (Kinds set, rate Rate of attempts).
type Class struct {
	Name  string
	Toxic *Toxic
	Kinds []Kind
	Rate  float64
}

// Classes are the fault classes every fault test goes through, so that the histories, the
// stream reader and both workers meet the same weather. A toxic applies to a fraction
// (Toxicity) of the connections the SDK opens; a connection a toxic broke is replaced by a new
// one, which may draw the toxic again.
var Classes = []Class{
	{Name: "latency", Toxic: &Toxic{Type: "latency", Stream: "downstream", Toxicity: 1, Attributes: map[string]any{"latency": 30, "jitter": 30}}},
	{Name: "held", Toxic: &Toxic{Type: "timeout", Stream: "upstream", Toxicity: 0.1, Attributes: map[string]any{"timeout": 0}}},
	{Name: "reset-before-request", Toxic: &Toxic{Type: "reset_peer", Stream: "upstream", Toxicity: 0.15, Attributes: map[string]any{"timeout": 0}}},
	{Name: "reset-after-request", Toxic: &Toxic{Type: "reset_peer", Stream: "downstream", Toxicity: 0.15, Attributes: map[string]any{"timeout": 0}}},
	{Name: "response-cut", Toxic: &Toxic{Type: "limit_data", Stream: "downstream", Toxicity: 0.15, Attributes: map[string]any{"bytes": 400}}},
	{Name: "slow-bandwidth", Toxic: &Toxic{Type: "bandwidth", Stream: "downstream", Toxicity: 0.5, Attributes: map[string]any{"rate": 64}}},
	{Name: "dynamodb-errors", Kinds: []Kind{Throttle, InternalBefore, InternalAfter, TxConflict}, Rate: 0.1},
}

// Apply starts c: its toxic on each proxy, or its DynamoDB failures on d (which may be nil for
// a class with a toxic). Heal stops it.
func (c Class) Apply(t testing.TB, d *DynamoDB, proxies ...*Proxy) {
	t.Helper()
	if c.Toxic != nil {
		for _, p := range proxies {
			p.Add(t, *c.Toxic)
		}
		return
	}
	if d == nil {
		t.Fatalf("faults: class %s needs a DynamoDB injector", c.Name)
	}
	d.Set(c.Rate, c.Kinds...)
}

// Heal ends every class on the proxies and d (nil allowed): the weather is fine again.
func Heal(d *DynamoDB, proxies ...*Proxy) {
	for _, p := range proxies {
		p.Clear()
	}
	if d != nil {
		d.Set(0)
	}
}

// Harsh is c with DynamoDB failures on rate of attempts (a class with a toxic is unchanged):
// a worker makes a handful of calls per message, most of which would meet none at the rate
// the histories use.
func (c Class) Harsh(rate float64) Class {
	if c.Toxic == nil {
		c.Rate = rate
	}
	return c
}
