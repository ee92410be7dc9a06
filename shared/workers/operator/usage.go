package operator

import (
	"context"
	"time"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/workers/usage"
)

// Usage is a tenant's usage over a range of UTC days, as the usage route renders it: the days it
// used anything (package usage), oldest first.
type Usage struct {
	TenantID string      `json:"tenant_id"`
	From     string      `json:"from"`
	To       string      `json:"to"`
	Days     []usage.Day `json:"days"`
}

// MaxUsageDays is the longest range one usage request reads.
const MaxUsageDays = 366

// usageOf is a tenant's usage from the from query parameter to to (UTC dates, YYYY-MM-DD;
// to defaults to today, from to the first day of to's month).
func (o *Operator) usageOf(ctx context.Context, r *api.Request) (any, error) {
	t, err := o.tenant(ctx, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	q := r.HTTP.URL.Query()
	to := time.Now().UTC()
	if s := q.Get("to"); s != "" {
		if to, err = time.Parse(usage.DayFormat, s); err != nil {
			return nil, api.Invalid("to", "to must be a date, YYYY-MM-DD, not %q", s)
		}
	}
	from := time.Date(to.Year(), to.Month(), 1, 0, 0, 0, 0, time.UTC)
	if s := q.Get("from"); s != "" {
		if from, err = time.Parse(usage.DayFormat, s); err != nil {
			return nil, api.Invalid("from", "from must be a date, YYYY-MM-DD, not %q", s)
		}
	}
	if from.After(to) || to.Sub(from) >= MaxUsageDays*24*time.Hour {
		return nil, api.Invalid("from", "from must be on or before to, at most %d days before it", MaxUsageDays-1)
	}
	out := Usage{TenantID: t.ID, From: from.Format(usage.DayFormat), To: to.Format(usage.DayFormat)}
	if out.Days, err = usage.Days(ctx, o.DB, t.ID, out.From, out.To); err != nil {
		return nil, err
	}
	if out.Days == nil {
		out.Days = []usage.Day{}
	}
	return out, nil
}
