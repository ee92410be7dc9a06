package delivery

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"tunnelapi/shared/families/eventsub"
	"tunnelapi/shared/platform/config"
)

// httpSinkTimeout bounds one call to an HTTP sink, so a hanging sink delays only its own
// destination's batch.
const httpSinkTimeout = 10 * time.Second

func post(ctx context.Context, c *http.Client, u string, header http.Header, body []byte) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, httpSinkTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header = header
	res, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	return res.StatusCode, b, nil
}

// datadogSink sends to Datadog's log intake (POST /api/v2/logs) with the destination's API key.
// Each log's message is the envelope; event_id is also a top-level attribute to dedupe on.
type datadogSink struct {
	client   *http.Client
	endpoint string
}

// DatadogLog is one entry of a Datadog log intake request.
type DatadogLog struct {
	DDSource  string `json:"ddsource"`
	DDTags    string `json:"ddtags,omitempty"`
	Service   string `json:"service,omitempty"`
	Hostname  string `json:"hostname"`
	Message   string `json:"message"`
	EventID   string `json:"event_id"`
	EventType string `json:"event_type"`
}

// Deliver implements Sink.
func (s datadogSink) Deliver(ctx context.Context, d *Destination, recs []Record) []error {
	if d.Secret == "" {
		return every(len(recs), errNoSecret)
	}
	base := s.endpoint
	if base == "" {
		base = "https://http-intake.logs." + d.Target.DDSite
	}
	h := http.Header{"Content-Type": {"application/json"}, "Dd-Api-Key": {d.Secret}}
	// The intake takes at most 1,000 entries and 5 MB per request.
	return deliverChunked(recs, 1000, 5_000_000, 128, func(chunk []Record) []error {
		logs := make([]DatadogLog, 0, len(chunk))
		for _, r := range chunk {
			logs = append(logs, DatadogLog{DDSource: "ngrok", DDTags: d.Target.DDTags, Service: d.Target.Service,
				Hostname: "tunnelapi", Message: string(r.Data), EventID: r.EventID, EventType: r.EventType})
		}
		body, err := json.Marshal(logs)
		if err != nil {
			return every(len(chunk), err)
		}
		status, rb, err := post(ctx, s.client, base+"/api/v2/logs", h, body)
		if err != nil {
			return every(len(chunk), fmt.Errorf("datadog: %w", err))
		}
		if status != http.StatusAccepted && status != http.StatusOK {
			return every(len(chunk), httpStatusError("datadog", status, rb))
		}
		return make([]error, len(chunk))
	})
}

// azureSink sends to the Azure Monitor Logs Ingestion API with a client-credentials token of
// the destination's application, cached until shortly before it expires.
type azureSink struct {
	client    *http.Client
	login     string
	ingestion string

	mu     sync.Mutex
	tokens map[string]azureToken
}

type azureToken struct {
	value   string
	expires time.Time
}

// AzureScope is the scope of a Logs Ingestion token.
const AzureScope = "https://monitor.azure.com//.default"

// azureTokenMargin renews a token this long before it expires.
const azureTokenMargin = time.Minute

func (s *azureSink) tokenKey(d *Destination) string {
	sum := sha256.Sum256([]byte(d.Secret))
	return d.Target.TenantID + "\x00" + d.Target.ClientID + "\x00" + string(sum[:])
}

func (s *azureSink) token(ctx context.Context, d *Destination) (string, error) {
	key := s.tokenKey(d)
	s.mu.Lock()
	t, ok := s.tokens[key]
	s.mu.Unlock()
	if ok && time.Now().Before(t.expires) {
		return t.value, nil
	}
	login := s.login
	if login == "" {
		login = "https://login.microsoftonline.com"
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {d.Target.ClientID},
		"client_secret": {d.Secret}, "scope": {AzureScope}}
	status, body, err := post(ctx, s.client, login+"/"+url.PathEscape(d.Target.TenantID)+"/oauth2/v2.0/token",
		http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, []byte(form.Encode()))
	if err != nil {
		return "", fmt.Errorf("azure token: %w", err)
	}
	if status != http.StatusOK {
		return "", httpStatusError("azure token", status, body)
	}
	var tr struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	if err := json.Unmarshal(body, &tr); err != nil || tr.AccessToken == "" {
		return "", fmt.Errorf("azure token: unreadable token response")
	}
	t = azureToken{value: tr.AccessToken, expires: time.Now().Add(time.Duration(tr.ExpiresIn)*time.Second - azureTokenMargin)}
	s.mu.Lock()
	if s.tokens == nil || len(s.tokens) >= maxRoles {
		s.tokens = map[string]azureToken{}
	}
	s.tokens[key] = t
	s.mu.Unlock()
	return t.value, nil
}

func (s *azureSink) forget(d *Destination) {
	s.mu.Lock()
	delete(s.tokens, s.tokenKey(d))
	s.mu.Unlock()
}

// AzureRow is one row sent to a data collection stream: the envelope's fields plus the
// TimeGenerated column every Log Analytics table has.
type AzureRow struct {
	TimeGenerated  string          `json:"TimeGenerated"`
	EventID        string          `json:"event_id"`
	EventType      string          `json:"event_type"`
	EventTimestamp string          `json:"event_timestamp"`
	AccountID      string          `json:"account_id"`
	Object         json.RawMessage `json:"object"`
	Principal      json.RawMessage `json:"principal"`
}

func (s *azureSink) uploadURL(d *Destination) string {
	base := d.Target.IngestionURI
	if s.ingestion != "" {
		if u, err := url.Parse(base); err == nil {
			base = strings.TrimSuffix(s.ingestion, "/") + u.EscapedPath()
		}
	}
	return base + "/dataCollectionRules/" + url.PathEscape(d.Target.RuleID) + "/streams/" +
		url.PathEscape(d.Target.StreamName) + "?api-version=2023-01-01"
}

// Deliver implements Sink.
func (s *azureSink) Deliver(ctx context.Context, d *Destination, recs []Record) []error {
	if d.Secret == "" {
		return every(len(recs), errNoSecret)
	}
	// The upload API takes at most 1 MB per call.
	return deliverChunked(recs, 10000, 1_000_000, 64, func(chunk []Record) []error {
		rows := make([]AzureRow, 0, len(chunk))
		for _, r := range chunk {
			var env struct {
				EventTimestamp string          `json:"event_timestamp"`
				AccountID      string          `json:"account_id"`
				Object         json.RawMessage `json:"object"`
				Principal      json.RawMessage `json:"principal"`
			}
			_ = json.Unmarshal(r.Data, &env)
			rows = append(rows, AzureRow{TimeGenerated: r.Time.UTC().Format(time.RFC3339), EventID: r.EventID,
				EventType: r.EventType, EventTimestamp: env.EventTimestamp, AccountID: env.AccountID,
				Object: env.Object, Principal: env.Principal})
		}
		body, err := json.Marshal(rows)
		if err != nil {
			return every(len(chunk), err)
		}
		tok, err := s.token(ctx, d)
		if err != nil {
			return every(len(chunk), err)
		}
		status, rb, err := post(ctx, s.client, s.uploadURL(d),
			http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + tok}}, body)
		if err != nil {
			return every(len(chunk), fmt.Errorf("azure: %w", err))
		}
		if status == http.StatusUnauthorized || status == http.StatusForbidden {
			s.forget(d)
		}
		if status != http.StatusNoContent && status != http.StatusOK {
			return every(len(chunk), httpStatusError("azure", status, rb))
		}
		return make([]error, len(chunk))
	})
}

// httpSinks are the sinks of the HTTP target kinds.
func httpSinks(c *http.Client, ep config.Sinks) map[string]Sink {
	return map[string]Sink{
		eventsub.KindDatadog: datadogSink{client: c, endpoint: strings.TrimSuffix(ep.Datadog, "/")},
		eventsub.KindAzure:   &azureSink{client: c, login: strings.TrimSuffix(ep.AzureLogin, "/"), ingestion: ep.AzureIngestion},
	}
}
