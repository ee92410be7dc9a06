package api

import (
	"net/url"
	"strconv"
	"strings"

	"tunnelapi/shared/platform/ids"
)

// DefaultLimit and MaxLimit bound a list page.
const (
	DefaultLimit = 100
	MaxLimit     = 100
)

// Page is a parsed list query: items strictly older than BeforeID, at most Limit of them.
type Page struct {
	BeforeID string
	Limit    int
	Filter   string
}

// ParsePage reads before_id (or beforeId, as the JavaScript client spells it), limit (1..100,
// default 100) and (when allowFilter) filter from the query string. Any other parameter is 231;
// a limit outside 1..100 is 233; a before_id that is not an id of kind prefix is 223. Items are
// listed newest first, strictly older than before_id, in a List.
func ParsePage(r *Request, prefix string, allowFilter bool) (Page, error) {
	p := Page{Limit: DefaultLimit}
	q, err := url.ParseQuery(r.HTTP.URL.RawQuery)
	if err != nil {
		return p, BadRequest(CodeUnknownParam, "query", "the query string could not be parsed")
	}
	for k, vs := range q {
		v := vs[len(vs)-1]
		switch {
		case k == "before_id" || k == "beforeId":
			if v != "" && !ids.Is(v, prefix) {
				return p, BadRequest(CodeBadBeforeID, k, "%s %s is not an id of this resource kind (%s_…)", k, Describe(v), prefix)
			}
			if v == "" {
				continue // an empty cursor is the first page
			}
			if p.BeforeID != "" && p.BeforeID != v {
				return p, BadRequest(CodeBadBeforeID, k, "before_id and beforeId are both given, with different values")
			}
			p.BeforeID = v
		case k == "limit":
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 1 || n > MaxLimit {
				return p, BadRequest(CodeBadLimit, "limit", "limit must be a whole number from 1 to %d, not %s", MaxLimit, Describe(v))
			}
			p.Limit = n
		case k == "filter" && allowFilter:
			p.Filter = v
		default:
			return p, BadRequest(CodeUnknownParam, k, "unknown query parameter %s", Describe(k))
		}
	}
	return p, nil
}

// NextPageURI is the absolute URL of the page after one that ended at lastID, or nil when
// there is none. Query keys are in alphabetical order, as the platform emits them.
func NextPageURI(r *Request, collection string, p Page, lastID string, more bool) *string {
	if !more || lastID == "" {
		return nil
	}
	q := url.Values{}
	q.Set("before_id", lastID)
	q.Set("limit", strconv.Itoa(p.Limit))
	if p.Filter != "" {
		q.Set("filter", p.Filter)
	}
	s := r.URI(collection) + "?" + q.Encode()
	return &s
}

// MaxPageBytes bounds the items of a list page, as encoded in the response: a page ends before
// the item that would take it past this, even short of its limit (with next_page_uri set; the
// first item is always shown). A Lambda's response payload is at most 6 MB, and encoding the
// response body as a string in that payload at most doubles it; a hundred resources of a few
// hundred KB each (endpoints with large traffic policies) would not fit otherwise.
const MaxPageBytes = 2 << 20

// List renders a list page: {"<key>":[…],"uri":…,"next_page_uri":…}.
type List struct {
	Key      string
	Items    any
	URI      string
	NextPage *string
}

// MarshalJSON writes the per-family list key; the envelope is otherwise the same everywhere.
func (l List) MarshalJSON() ([]byte, error) {
	type wire struct {
		URI      string  `json:"uri"`
		NextPage *string `json:"next_page_uri"`
	}
	return marshalWithKey(l.Key, l.Items, wire{URI: l.URI, NextPage: l.NextPage})
}
