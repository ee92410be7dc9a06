package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Proxy is a TCP proxy, run in the test process by toxiproxy, between the service and one
// emulator: the service is pointed at URL instead of the emulator's, and toxics added to the
// proxy make the network between them misbehave.
type Proxy struct {
	// URL is the emulator's URL with the proxy's address in place of its host and port.
	URL   string
	proxy *toxiproxy.Proxy
	mu    sync.Mutex
	names []string
	// added counts toxics added over the proxy's life.
	added atomic.Int64
}

var (
	serverOnce sync.Once
	server     *toxiproxy.ApiServer
)

// NewProxy starts a proxy to the emulator at endpoint (a URL) on a free local port; it is
// stopped when the test ends.
func NewProxy(t testing.TB, name, endpoint string) *Proxy {
	t.Helper()
	serverOnce.Do(func() {
		server = toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	})
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatalf("faults: endpoint %q: %v", endpoint, err)
	}
	p := toxiproxy.NewProxy(server, fmt.Sprintf("%s-%s", name, t.Name()), "127.0.0.1:0", u.Host)
	if err := p.Start(); err != nil {
		t.Fatalf("faults: start proxy %s: %v", name, err)
	}
	t.Cleanup(p.Stop)
	u.Host = p.Listen
	return &Proxy{URL: u.String(), proxy: p}
}

// Toxic is one misbehaviour of a proxy (toxiproxy's toxics: latency, timeout, reset_peer,
// limit_data, bandwidth, slicer, slow_close), on the traffic to the emulator (Stream
// "upstream") or back ("downstream"), for a fraction Toxicity of connections.
type Toxic struct {
	Type       string         `json:"type"`
	Stream     string         `json:"stream"`
	Toxicity   float32        `json:"toxicity"`
	Attributes map[string]any `json:"attributes"`
}

// Add adds toxics to the proxy.
func (p *Proxy) Add(t testing.TB, toxics ...Toxic) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, tx := range toxics {
		name := fmt.Sprintf("%s_%s_%d", tx.Type, tx.Stream, len(p.names))
		b, err := json.Marshal(struct {
			Name string `json:"name"`
			Toxic
		}{name, tx})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.proxy.Toxics.AddToxicJson(strings.NewReader(string(b))); err != nil {
			t.Fatalf("faults: add toxic %s: %v", b, err)
		}
		p.names = append(p.names, name)
		p.added.Add(1)
	}
}

// Added is how many toxics were added over the proxy's life.
func (p *Proxy) Added() int64 { return p.added.Load() }

// Clear removes every toxic: the network is healthy again.
func (p *Proxy) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, n := range p.names {
		p.proxy.Toxics.RemoveToxic(context.Background(), n)
	}
	p.names = nil
}
