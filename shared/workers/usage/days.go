package usage

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/platform/store"
)

// Day is what one account used on one UTC day.
type Day struct {
	Day string `json:"day"` // YYYY-MM-DD
	// Requests counts the requests by family (its collection path without the leading slash)
	// and status class ("2xx", "4xx", "5xx").
	Requests           map[string]map[string]int64 `json:"requests"`
	Mutations          int64                       `json:"mutations"`
	EventsDelivered    int64                       `json:"events_delivered"`
	CertificatesIssued int64                       `json:"certificates_issued"`
	// ItemsStored is how many resources the account stored at the day's end (at the last
	// counted line, for the current day).
	ItemsStored int64   `json:"items_stored"`
	ReadUnits   float64 `json:"read_units"`
	WriteUnits  float64 `json:"write_units"`
}

// Total is the number of requests of the day in class ("" for all of them).
func (d Day) Total(class string) int64 {
	var n int64
	for _, byClass := range d.Requests {
		for c, v := range byClass {
			if class == "" || c == class {
				n += v
			}
		}
	}
	return n
}

// Days reads what account used on each day from from to to (UTC dates, YYYY-MM-DD, both
// included), the days it used nothing left out. Resources stored are summed from every day
// before too: one Query of the account's usage items up to to.
func Days(ctx context.Context, db *store.DB, account, from, to string) ([]Day, error) {
	if _, err := time.Parse(DayFormat, from); err != nil {
		return nil, fmt.Errorf("usage: %q is not a date (YYYY-MM-DD)", from)
	}
	all, err := upTo(ctx, db, account, to)
	if err != nil {
		return nil, err
	}
	var out []Day
	for _, d := range all {
		if d.Day >= from {
			out = append(out, d)
		}
	}
	return out, nil
}

// On reads what account used on day: zero counts when it used nothing, with the resources it
// stored since.
func On(ctx context.Context, db *store.DB, account, day string) (Day, error) {
	all, err := upTo(ctx, db, account, day)
	if err != nil {
		return Day{}, err
	}
	if len(all) > 0 && all[len(all)-1].Day == day {
		return all[len(all)-1], nil
	}
	d := Day{Day: day, Requests: map[string]map[string]int64{}}
	if len(all) > 0 {
		d.ItemsStored = all[len(all)-1].ItemsStored
	}
	return d, nil
}

// upTo reads every day of account up to to, with the resources stored at each day's end.
func upTo(ctx context.Context, db *store.DB, account, to string) ([]Day, error) {
	if _, err := time.Parse(DayFormat, to); err != nil {
		return nil, fmt.Errorf("usage: %q is not a date (YYYY-MM-DD)", to)
	}
	first, last := store.UsageKey(account, ""), store.UsageKey(account, to)
	items, err := db.QueryBetween(ctx, first.PK, first.SK, last.SK)
	if err != nil {
		return nil, err
	}
	out := make([]Day, 0, len(items))
	var stored int64
	for _, it := range items {
		d := dayOf(it)
		stored += number(it[AttrItems])
		d.ItemsStored = stored
		out = append(out, d)
	}
	return out, nil
}

func dayOf(it store.Item) Day {
	sk, _ := it[store.AttrSK].(*types.AttributeValueMemberS)
	d := Day{Requests: map[string]map[string]int64{}}
	if sk != nil {
		d.Day = strings.TrimPrefix(sk.Value, store.UsagePrefix)
	}
	for name, v := range it {
		class, family, ok := strings.Cut(name, " ")
		if !ok {
			continue
		}
		if d.Requests[family] == nil {
			d.Requests[family] = map[string]int64{}
		}
		d.Requests[family][class] = number(v)
	}
	d.Mutations, d.EventsDelivered, d.CertificatesIssued = number(it[AttrMutations]), number(it[AttrEvents]), number(it[AttrCertificates])
	d.ReadUnits, d.WriteUnits = float(it[AttrReadUnits]), float(it[AttrWriteUnits])
	return d
}

func float(v types.AttributeValue) float64 {
	n, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		return 0
	}
	f, _ := strconv.ParseFloat(n.Value, 64)
	return f
}

func number(v types.AttributeValue) int64 { return int64(float(v)) }

// CSVHeader are the columns WriteCSV writes: one row per account and day.
var CSVHeader = []string{"account", "day", "requests", "requests_2xx", "requests_4xx", "requests_5xx", "mutations",
	"events_delivered", "certificates_issued", "items_stored", "read_units", "write_units"}

// WriteCSV writes days of account as CSV for billing, with CSVHeader first when header is set.
func WriteCSV(w io.Writer, account string, days []Day, header bool) error {
	cw := csv.NewWriter(w)
	if header {
		_ = cw.Write(CSVHeader)
	}
	for _, d := range days {
		row := []string{account, d.Day}
		for _, class := range []string{"", "2xx", "4xx", "5xx"} {
			row = append(row, strconv.FormatInt(d.Total(class), 10))
		}
		for _, n := range []int64{d.Mutations, d.EventsDelivered, d.CertificatesIssued, d.ItemsStored} {
			row = append(row, strconv.FormatInt(n, 10))
		}
		row = append(row, strconv.FormatFloat(d.ReadUnits, 'f', -1, 64), strconv.FormatFloat(d.WriteUnits, 'f', -1, 64))
		_ = cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}
