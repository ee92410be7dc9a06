package standin

import (
	"encoding/xml"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"tunnelapi/shared/platform/ids"
)

// Route53 stands in for Amazon Route 53's REST/XML API (version 2013-04-01), for the operations
// the certificate worker calls: CreateHostedZone, ListHostedZonesByName, GetHostedZone,
// ChangeResourceRecordSets, ListResourceRecordSets, GetChange and DeleteHostedZone. It checks
// what Route 53 checks for them (SigV4 for service route53, the delegation set, a caller
// reference used once, no two zones of related names on the same name servers, TXT values
// quoted, exact matches for DELETE, a zone emptied before its deletion) and answers with Route
// 53's error codes.
type Route53 struct {
	*Sink
	creds *Credentials

	mu        sync.Mutex
	sets      map[string][]string // delegation set id → name servers
	zones     map[string]*R53Zone // zone id → zone
	changes   []R53Change
	opCalls   map[string]int
	throttled atomic.Int64
	// Mirror, when set, is told every committed TXT change: the record's name (no trailing
	// dot) and its values unquoted, none for a deletion. Tests forward them to challtestsrv, so
	// an ACME server resolving through it sees what Route 53 would serve.
	Mirror func(name string, values []string)
	// Before, when set, is called with each request's operation before the stand-in serves it
	// (outside its lock, so other requests go on meanwhile): a test acts at that moment.
	Before func(op string)
}

// R53Zone is a hosted zone as the stand-in holds it.
type R53Zone struct {
	ID, Name, CallerReference, DelegationSetID, Comment string
	// Records are its record sets by name and type ("<name> <type>").
	Records map[string]R53Record
}

// R53Record is a record set: name with its trailing dot, type, TTL and values as sent.
type R53Record struct {
	Name, Type string
	TTL        int64
	Values     []string
}

// R53Change is one committed change of a record set.
type R53Change struct {
	ZoneID, Action string
	Record         R53Record
}

const r53NS = "https://route53.amazonaws.com/doc/2013-04-01/"

// StartRoute53 starts the stand-in, accepting requests signed with a key of creds.
func StartRoute53(creds *Credentials) *Route53 {
	r := &Route53{Sink: &Sink{}, creds: creds, sets: map[string][]string{}, zones: map[string]*R53Zone{}, opCalls: map[string]int{}}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

// AddDelegationSet registers a reusable delegation set, as `aws route53
// create-reusable-delegation-set` makes one.
func (r *Route53) AddDelegationSet(id string, nameServers []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sets[id] = nameServers
}

// Throttle answers the next n requests with Throttling (400), as Route 53 does past its rate of
// five requests a second per account; a negative n throttles until Throttle(0).
func (r *Route53) Throttle(n int64) { r.throttled.Store(n) }

// Zones returns copies of the zones that exist.
func (r *Route53) Zones() []R53Zone {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []R53Zone
	for _, z := range r.zones {
		c := *z
		c.Records = map[string]R53Record{}
		for k, v := range z.Records {
			c.Records[k] = v
		}
		out = append(out, c)
	}
	return out
}

// Changes returns every committed record change, in order.
func (r *Route53) Changes() []R53Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.changes)
}

// OpCalls is how many requests of operation op arrived (answered or refused).
func (r *Route53) OpCalls(op string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.opCalls[op]
}

// r53Error is Route 53's error body.
type r53Error struct {
	XMLName xml.Name `xml:"ErrorResponse"`
	Xmlns   string   `xml:"xmlns,attr"`
	Type    string   `xml:"Error>Type"`
	Code    string   `xml:"Error>Code"`
	Message string   `xml:"Error>Message"`
	ReqID   string   `xml:"RequestId"`
}

func (r *Route53) fail(w http.ResponseWriter, status int, code, format string, args ...any) {
	typ := "Sender"
	if status >= 500 {
		typ = "Receiver"
	}
	writeXML(w, status, r53Error{Xmlns: r53NS, Type: typ, Code: code, Message: fmt.Sprintf(format, args...), ReqID: ids.RandomBase62(16)})
}

// invalidChangeBatch is the body Route 53 gives that error, unlike the others.
func (r *Route53) invalidChangeBatch(w http.ResponseWriter, msgs ...string) {
	type body struct {
		XMLName  xml.Name `xml:"InvalidChangeBatch"`
		Xmlns    string   `xml:"xmlns,attr"`
		Messages []string `xml:"Messages>Message"`
		ReqID    string   `xml:"RequestId"`
	}
	writeXML(w, http.StatusBadRequest, body{Xmlns: r53NS, Messages: msgs, ReqID: ids.RandomBase62(16)})
}

func writeXML(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	w.Write([]byte(xml.Header))
	xml.NewEncoder(w).Encode(v)
}

func (r *Route53) serve(w http.ResponseWriter, req *http.Request) {
	body, ok := r.begin(w, req)
	if !ok {
		return
	}
	if _, err := r.creds.Verify(req, body, "route53"); err != nil {
		r.Rejects.Add(1)
		r.LastReject.Store(err.Error())
		r.fail(w, http.StatusForbidden, "SignatureDoesNotMatch", "%s", err.Error())
		return
	}
	path, ok := strings.CutPrefix(req.URL.Path, "/2013-04-01/")
	if !ok {
		r.fail(w, http.StatusNotFound, "UnknownOperationException", "unknown path %s", req.URL.Path)
		return
	}
	parts := strings.Split(path, "/")
	var op string
	switch {
	case req.Method == http.MethodPost && path == "hostedzone":
		op = "CreateHostedZone"
	case req.Method == http.MethodGet && path == "hostedzonesbyname":
		op = "ListHostedZonesByName"
	case len(parts) == 2 && parts[0] == "hostedzone" && req.Method == http.MethodGet:
		op = "GetHostedZone"
	case len(parts) == 2 && parts[0] == "hostedzone" && req.Method == http.MethodDelete:
		op = "DeleteHostedZone"
	case len(parts) == 3 && parts[0] == "hostedzone" && parts[2] == "rrset" && req.Method == http.MethodPost:
		op = "ChangeResourceRecordSets"
	case len(parts) == 3 && parts[0] == "hostedzone" && parts[2] == "rrset" && req.Method == http.MethodGet:
		op = "ListResourceRecordSets"
	case len(parts) == 2 && parts[0] == "change" && req.Method == http.MethodGet:
		op = "GetChange"
	default:
		r.fail(w, http.StatusNotFound, "UnknownOperationException", "unsupported %s %s", req.Method, req.URL.Path)
		return
	}
	if r.Before != nil {
		r.Before(op)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.opCalls[op]++
	if n := r.throttled.Load(); n != 0 {
		if n > 0 {
			r.throttled.Add(-1)
		}
		r.fail(w, http.StatusBadRequest, "Throttling", "Rate exceeded")
		return
	}
	switch op {
	case "CreateHostedZone":
		r.createZone(w, body)
	case "ListHostedZonesByName":
		r.listZones(w, req)
	case "GetHostedZone":
		if z := r.zone(w, parts[1]); z != nil {
			writeXML(w, http.StatusOK, struct {
				XMLName xml.Name `xml:"GetHostedZoneResponse"`
				Xmlns   string   `xml:"xmlns,attr"`
				Zone    r53ZoneXML
				Set     r53SetXML
			}{Xmlns: r53NS, Zone: z.xml(), Set: r.setXML(z.DelegationSetID)})
		}
	case "DeleteHostedZone":
		r.deleteZone(w, parts[1])
	case "ChangeResourceRecordSets":
		if z := r.zone(w, parts[1]); z != nil {
			r.change(w, z, body)
		}
	case "ListResourceRecordSets":
		if z := r.zone(w, parts[1]); z != nil {
			r.listRecords(w, req, z)
		}
	case "GetChange":
		// Every change is served by all name servers by the time it is asked about.
		writeXML(w, http.StatusOK, struct {
			XMLName xml.Name `xml:"GetChangeResponse"`
			Xmlns   string   `xml:"xmlns,attr"`
			Info    r53ChangeInfo
		}{Xmlns: r53NS, Info: r53ChangeInfo{ID: "/change/" + parts[1], Status: "INSYNC", SubmittedAt: time.Now().UTC().Format(time.RFC3339)}})
	}
}

type r53ZoneXML struct {
	XMLName         xml.Name `xml:"HostedZone"`
	ID              string   `xml:"Id"`
	Name            string   `xml:"Name"`
	CallerReference string   `xml:"CallerReference"`
	Comment         string   `xml:"Config>Comment,omitempty"`
	Private         bool     `xml:"Config>PrivateZone"`
	Count           int      `xml:"ResourceRecordSetCount"`
}

type r53SetXML struct {
	XMLName     xml.Name `xml:"DelegationSet"`
	ID          string   `xml:"Id,omitempty"`
	NameServers []string `xml:"NameServers>NameServer"`
}

type r53ChangeInfo struct {
	XMLName     xml.Name `xml:"ChangeInfo"`
	ID          string   `xml:"Id"`
	Status      string   `xml:"Status"`
	SubmittedAt string   `xml:"SubmittedAt"`
}

func (z *R53Zone) xml() r53ZoneXML {
	return r53ZoneXML{ID: "/hostedzone/" + z.ID, Name: z.Name, CallerReference: z.CallerReference, Comment: z.Comment, Count: len(z.Records)}
}

func (r *Route53) setXML(id string) r53SetXML {
	return r53SetXML{ID: "/delegationset/" + id, NameServers: r.sets[id]}
}

func (r *Route53) newChange() r53ChangeInfo {
	return r53ChangeInfo{ID: "/change/C" + strings.ToUpper(ids.RandomBase62(12)), Status: "PENDING", SubmittedAt: time.Now().UTC().Format(time.RFC3339)}
}

// zone finds a zone by id (with or without /hostedzone/), answering NoSuchHostedZone if none.
func (r *Route53) zone(w http.ResponseWriter, id string) *R53Zone {
	z := r.zones[strings.TrimPrefix(id, "/hostedzone/")]
	if z == nil {
		r.fail(w, http.StatusNotFound, "NoSuchHostedZone", "No hosted zone found with ID: %s", id)
	}
	return z
}

// r53Name is a name as Route 53 keeps it: lower case with the trailing dot.
func r53Name(s string) string { return strings.ToLower(strings.TrimSuffix(s, ".")) + "." }

// r53Order is the order Route 53 lists names in: by labels from the right.
func r53Order(name string) string {
	labels := strings.Split(strings.TrimSuffix(name, "."), ".")
	slices.Reverse(labels)
	return strings.Join(labels, ".")
}

// related reports a and b equal, or one a subdomain of the other.
func related(a, b string) bool {
	return a == b || strings.HasSuffix(a, "."+b) || strings.HasSuffix(b, "."+a)
}

func (r *Route53) createZone(w http.ResponseWriter, body []byte) {
	var in struct {
		Name            string `xml:"Name"`
		CallerReference string `xml:"CallerReference"`
		DelegationSetID string `xml:"DelegationSetId"`
		Comment         string `xml:"HostedZoneConfig>Comment"`
	}
	if err := xml.Unmarshal(body, &in); err != nil || in.Name == "" || in.CallerReference == "" {
		r.fail(w, http.StatusBadRequest, "InvalidInput", "Name and CallerReference are required (%v)", err)
		return
	}
	name := r53Name(in.Name)
	if !validR53Name(name) {
		r.fail(w, http.StatusBadRequest, "InvalidDomainName", "%s is not a valid domain name", in.Name)
		return
	}
	for _, z := range r.zones {
		if z.CallerReference == in.CallerReference {
			r.fail(w, http.StatusConflict, "HostedZoneAlreadyExists", "A hosted zone has already been created with the specified caller reference.")
			return
		}
	}
	set := strings.TrimPrefix(in.DelegationSetID, "/delegationset/")
	if set == "" {
		set = "N" + strings.ToUpper(ids.RandomBase62(12)) // a set of its own, as Route 53 assigns
		r.sets[set] = []string{"ns-1.awsdns-" + set + ".org", "ns-2.awsdns-" + set + ".net"}
	} else if r.sets[set] == nil {
		r.fail(w, http.StatusBadRequest, "NoSuchDelegationSet", "A reusable delegation set with the specified ID does not exist: %s", in.DelegationSetID)
		return
	}
	for _, z := range r.zones {
		if z.DelegationSetID == set && related(strings.TrimSuffix(z.Name, "."), strings.TrimSuffix(name, ".")) {
			r.fail(w, http.StatusBadRequest, "ConflictingDomainExists",
				"Cannot create hosted zone with DelegationSetId %s as the DNSName %s conflicts with existing ones sharing the delegation set", set, name)
			return
		}
	}
	z := &R53Zone{ID: "Z" + strings.ToUpper(ids.RandomBase62(14)), Name: name, CallerReference: in.CallerReference, DelegationSetID: set,
		Comment: in.Comment, Records: map[string]R53Record{}}
	z.Records[name+" SOA"] = R53Record{Name: name, Type: "SOA", TTL: 900, Values: []string{r.sets[set][0] + ". awsdns-hostmaster.amazon.com. 1 7200 900 1209600 86400"}}
	var ns []string
	for _, s := range r.sets[set] {
		ns = append(ns, r53Name(s))
	}
	z.Records[name+" NS"] = R53Record{Name: name, Type: "NS", TTL: 172800, Values: ns}
	r.zones[z.ID] = z
	w.Header().Set("Location", r.URL+"/2013-04-01/hostedzone/"+z.ID)
	writeXML(w, http.StatusCreated, struct {
		XMLName xml.Name `xml:"CreateHostedZoneResponse"`
		Xmlns   string   `xml:"xmlns,attr"`
		Zone    r53ZoneXML
		Info    r53ChangeInfo
		Set     r53SetXML
	}{Xmlns: r53NS, Zone: z.xml(), Info: r.newChange(), Set: r.setXML(set)})
}

// validR53Name accepts what a DNS name may be: labels of letters, digits and hyphens (an
// underscore too, as Route 53 allows), 1–63 characters, 255 in all.
func validR53Name(name string) bool {
	if len(name) > 255 || name == "." {
		return false
	}
	for _, l := range strings.Split(strings.TrimSuffix(name, "."), ".") {
		if l == "" || len(l) > 63 || strings.Trim(l, "abcdefghijklmnopqrstuvwxyz0123456789-_*") != "" {
			return false
		}
	}
	return true
}

func (r *Route53) listZones(w http.ResponseWriter, req *http.Request) {
	start := ""
	if n := req.URL.Query().Get("dnsname"); n != "" {
		start = r53Order(r53Name(n))
		if id := req.URL.Query().Get("hostedzoneid"); id != "" {
			start += " " + strings.TrimPrefix(id, "/hostedzone/")
		}
	}
	shown, next, list := page(r.zones, func(z *R53Zone) string { return r53Order(z.Name) + " " + z.ID }, start, req.URL.Query(), 100)
	type out struct {
		XMLName xml.Name     `xml:"ListHostedZonesByNameResponse"`
		Zones   []r53ZoneXML `xml:"HostedZones>HostedZone"`
		DNSName string       `xml:"DNSName,omitempty"`
		r53List
		NextName string `xml:"NextDNSName,omitempty"`
		NextID   string `xml:"NextHostedZoneId,omitempty"`
	}
	o := out{r53List: list, DNSName: req.URL.Query().Get("dnsname"), Zones: []r53ZoneXML{}}
	for _, z := range shown {
		o.Zones = append(o.Zones, z.xml())
	}
	if next != nil {
		o.NextName, o.NextID = (*next).Name, (*next).ID
	}
	writeXML(w, http.StatusOK, o)
}

func (r *Route53) deleteZone(w http.ResponseWriter, id string) {
	z := r.zone(w, id)
	if z == nil {
		return
	}
	for _, rec := range z.Records {
		if rec.Name != z.Name || rec.Type != "SOA" && rec.Type != "NS" {
			r.fail(w, http.StatusBadRequest, "HostedZoneNotEmpty",
				"The specified hosted zone contains non-required resource record sets and so cannot be deleted.")
			return
		}
	}
	delete(r.zones, z.ID)
	writeXML(w, http.StatusOK, struct {
		XMLName xml.Name `xml:"DeleteHostedZoneResponse"`
		Xmlns   string   `xml:"xmlns,attr"`
		Info    r53ChangeInfo
	}{Xmlns: r53NS, Info: r.newChange()})
}

type r53RecordXML struct {
	Name   string   `xml:"Name"`
	Type   string   `xml:"Type"`
	TTL    int64    `xml:"TTL"`
	Values []string `xml:"ResourceRecords>ResourceRecord>Value"`
}

// change applies a change batch all or nothing, as Route 53 does.
func (r *Route53) change(w http.ResponseWriter, z *R53Zone, body []byte) {
	var in struct {
		Changes []struct {
			Action string       `xml:"Action"`
			Set    r53RecordXML `xml:"ResourceRecordSet"`
		} `xml:"ChangeBatch>Changes>Change"`
	}
	if err := xml.Unmarshal(body, &in); err != nil || len(in.Changes) == 0 {
		r.fail(w, http.StatusBadRequest, "InvalidInput", "a change batch with at least one change is required (%v)", err)
		return
	}
	next := map[string]R53Record{}
	for k, v := range z.Records {
		next[k] = v
	}
	var done []R53Change
	var problems []string
	for _, c := range in.Changes {
		rec := R53Record{Name: r53Name(c.Set.Name), Type: c.Set.Type, TTL: c.Set.TTL, Values: c.Set.Values}
		key := rec.Name + " " + rec.Type
		if rec.Name != z.Name && !strings.HasSuffix(rec.Name, "."+z.Name) {
			problems = append(problems, fmt.Sprintf("RRSet with DNS name %s is not permitted in zone %s", rec.Name, z.Name))
			continue
		}
		if problem := checkValues(rec); problem != "" && c.Action != "DELETE" {
			problems = append(problems, problem)
			continue
		}
		cur, exists := next[key]
		switch c.Action {
		case "CREATE":
			if exists {
				problems = append(problems, fmt.Sprintf("Tried to create resource record set [name='%s', type='%s'] but it already exists", rec.Name, rec.Type))
				continue
			}
			next[key] = rec
		case "UPSERT":
			next[key] = rec
		case "DELETE":
			switch {
			case !exists:
				problems = append(problems, fmt.Sprintf("Tried to delete resource record set [name='%s', type='%s'] but it was not found", rec.Name, rec.Type))
				continue
			case rec.Name == z.Name && (rec.Type == "SOA" || rec.Type == "NS"):
				problems = append(problems, fmt.Sprintf("A HostedZone must contain at least one NS record and one SOA record for the zone itself: [name='%s', type='%s']", rec.Name, rec.Type))
				continue
			case cur.TTL != rec.TTL || !slices.Equal(cur.Values, rec.Values):
				problems = append(problems, fmt.Sprintf("Tried to delete resource record set [name='%s', type='%s'] but the values provided do not match the current values", rec.Name, rec.Type))
				continue
			}
			delete(next, key)
		default:
			problems = append(problems, fmt.Sprintf("unknown action %q", c.Action))
			continue
		}
		done = append(done, R53Change{ZoneID: z.ID, Action: c.Action, Record: rec})
	}
	if len(problems) > 0 {
		r.invalidChangeBatch(w, problems...)
		return
	}
	z.Records = next
	r.changes = append(r.changes, done...)
	if r.Mirror != nil {
		for _, c := range done {
			if c.Record.Type != "TXT" {
				continue
			}
			var vals []string
			if c.Action != "DELETE" {
				for _, v := range c.Record.Values {
					vals = append(vals, strings.Trim(v, `"`))
				}
			}
			r.Mirror(strings.TrimSuffix(c.Record.Name, "."), vals)
		}
	}
	writeXML(w, http.StatusOK, struct {
		XMLName xml.Name `xml:"ChangeResourceRecordSetsResponse"`
		Xmlns   string   `xml:"xmlns,attr"`
		Info    r53ChangeInfo
	}{Xmlns: r53NS, Info: r.newChange()})
}

// checkValues refuses what Route 53 refuses in a record set written: no values, a TTL out of
// range, a TXT value that is not one or more quoted strings of at most 255 characters.
func checkValues(rec R53Record) string {
	if len(rec.Values) == 0 || rec.TTL < 0 || rec.TTL > 2147483647 {
		return fmt.Sprintf("Invalid Resource Record: [name='%s', type='%s'] needs values and a TTL", rec.Name, rec.Type)
	}
	if rec.Type != "TXT" {
		return ""
	}
	for _, v := range rec.Values {
		if len(v) < 2 || !strings.HasPrefix(v, `"`) || !strings.HasSuffix(v, `"`) || len(v) > 257 || strings.Contains(v[1:len(v)-1], `"`) {
			return fmt.Sprintf("Invalid Resource Record: FATAL problem: InvalidCharacterString (Value should be enclosed in quotation marks) encountered with '%s'", v)
		}
	}
	return ""
}

func (r *Route53) listRecords(w http.ResponseWriter, req *http.Request, z *R53Zone) {
	q := req.URL.Query()
	start := ""
	if n := q.Get("name"); n != "" {
		start = r53Order(r53Name(n)) + " " + q.Get("type")
	}
	shown, next, list := page(z.Records, func(rec R53Record) string { return r53Order(rec.Name) + " " + rec.Type }, start, q, 300)
	type out struct {
		XMLName xml.Name       `xml:"ListResourceRecordSetsResponse"`
		Sets    []r53RecordXML `xml:"ResourceRecordSets>ResourceRecordSet"`
		r53List
		NextName string `xml:"NextRecordName,omitempty"`
		NextType string `xml:"NextRecordType,omitempty"`
	}
	o := out{r53List: list, Sets: []r53RecordXML{}}
	for _, rec := range shown {
		o.Sets = append(o.Sets, r53RecordXML(rec))
	}
	if next != nil {
		o.NextName, o.NextType = next.Name, next.Type
	}
	writeXML(w, http.StatusOK, o)
}

// r53List is what every list answer carries besides its items, in the service's namespace.
type r53List struct {
	Xmlns     string `xml:"xmlns,attr"`
	Truncated bool   `xml:"IsTruncated"`
	MaxItems  int    `xml:"MaxItems"`
}

// page is one page of a Route 53 list of m: the items whose key (their place in Route 53's
// order) is start or after, in that order, at most the maxitems of q (see r53MaxItems), the
// first one left out, and the answer's list members.
func page[K comparable, T any](m map[K]T, key func(T) string, start string, q url.Values, limit int) (shown []T, next *T, list r53List) {
	items := slices.DeleteFunc(slices.Collect(maps.Values(m)), func(it T) bool { return key(it) < start })
	slices.SortFunc(items, func(a, b T) int { return strings.Compare(key(a), key(b)) })
	list = r53List{Xmlns: r53NS, MaxItems: r53MaxItems(q, limit)}
	if len(items) > list.MaxItems {
		list.Truncated = true
		return items[:list.MaxItems], &items[list.MaxItems], list
	}
	return items, nil, list
}

// r53MaxItems is a list's maxitems parameter: at most limit, which is also what an absent or
// bad value means.
func r53MaxItems(q url.Values, limit int) int {
	if m, err := strconv.Atoi(q.Get("maxitems")); err == nil && m > 0 && m < limit {
		return m
	}
	return limit
}
