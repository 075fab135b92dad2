package route53_test

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeRoute53 is a local HTTP server speaking the part of Route 53's
// REST/XML API (version 2013-04-01) that libdns/route53 uses:
// ListHostedZonesByName, ListResourceRecordSets (paged) and
// GetChange (for WaitForSync; every batch is change /change/C1) and
// ChangeResourceRecordSets with CREATE, UPSERT and DELETE, applied
// atomically per batch and validated the way Route 53 documents it
// (DELETE must match the RRset exactly; no CNAME beside other data or at
// the apex; TXT strings of at most 255 bytes; no duplicate values). It can
// answer the next requests with an error, such as Route 53's
// <Code>Throttling</Code> with HTTP 400, to test classification.
type fakeRoute53 struct {
	*httptest.Server
	zoneID, zone string
	pageSize     int

	mu       sync.Mutex
	sets     map[setKey]*rrset
	failNext []fakeFailure
	requests []string
	// changeStatus answers GetChange, one status per request, the last
	// repeating; empty means INSYNC. onGetChange, if set, runs (under mu)
	// on every GetChange request.
	changeStatus []string
	onGetChange  func()
	// failGetChange, if set, answers every GetChange with this error.
	failGetChange *fakeFailure
}

type setKey struct{ name, typ string }

type rrset struct {
	Name   string
	Type   string
	TTL    int64
	Values []string
}

type fakeFailure struct {
	status int
	code   string
}

const r53NS = "https://route53.amazonaws.com/doc/2013-04-01/"

func newFakeRoute53(t *testing.T, zoneID, zone string) *fakeRoute53 {
	f := &fakeRoute53{zoneID: zoneID, zone: zone, pageSize: 7, sets: map[setKey]*rrset{}}
	f.sets[setKey{zone, "SOA"}] = &rrset{zone, "SOA", 900, []string{"ns-1.awsdns-1.net. awsdns-hostmaster.amazon.com. 1 7200 900 1209600 86400"}}
	f.sets[setKey{zone, "NS"}] = &rrset{zone, "NS", 172800, []string{"ns-1.awsdns-1.net.", "ns-2.awsdns-2.org."}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// getChange answers GetChange for the one change ID the fake hands out
// (every change batch is /change/C1).
func (f *fakeRoute53) getChange(w http.ResponseWriter) {
	if fl := f.failGetChange; fl != nil {
		writeError(w, fl.status, fl.code, "injected by the test")
		return
	}
	status := "INSYNC"
	if len(f.changeStatus) > 0 {
		status = f.changeStatus[0]
		if len(f.changeStatus) > 1 {
			f.changeStatus = f.changeStatus[1:]
		}
	}
	if f.onGetChange != nil {
		f.onGetChange()
	}
	writeXML(w, struct {
		XMLName xml.Name `xml:"GetChangeResponse"`
		NS      string   `xml:"xmlns,attr"`
		ID      string   `xml:"ChangeInfo>Id"`
		Status  string   `xml:"ChangeInfo>Status"`
		At      string   `xml:"ChangeInfo>SubmittedAt"`
	}{NS: r53NS, ID: "/change/C1", Status: status, At: "2026-01-01T00:00:00Z"})
}

// fail makes the next requests fail, one failure per request.
func (f *fakeRoute53) fail(fs ...fakeFailure) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failNext = append(f.failNext, fs...)
}

func (f *fakeRoute53) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r.Method+" "+r.URL.Path)
	if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
		writeError(w, http.StatusForbidden, "MissingAuthenticationToken", "request is not signed")
		return
	}
	if len(f.failNext) > 0 {
		fl := f.failNext[0]
		f.failNext = f.failNext[1:]
		writeError(w, fl.status, fl.code, "injected by the test")
		return
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	rrsetPath := "/2013-04-01/hostedzone/" + f.zoneID + "/rrset"
	switch {
	case r.Method == http.MethodGet && path == "/2013-04-01/hostedzonesbyname":
		f.listZones(w, r)
	case path == rrsetPath && r.Method == http.MethodGet:
		f.list(w, r)
	case path == rrsetPath && r.Method == http.MethodPost:
		f.change(w, r)
	case r.Method == http.MethodGet && path == "/2013-04-01/change/C1":
		f.getChange(w)
	case strings.HasPrefix(path, "/2013-04-01/hostedzone/"):
		writeError(w, http.StatusNotFound, "NoSuchHostedZone", "No hosted zone found with ID: "+strings.Split(path, "/")[3])
	default:
		writeError(w, http.StatusNotFound, "UnknownOperation", r.Method+" "+path)
	}
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `<?xml version="1.0"?>
<ErrorResponse xmlns="%s"><Error><Type>Sender</Type><Code>%s</Code><Message>%s</Message></Error><RequestId>req-1</RequestId></ErrorResponse>`,
		r53NS, code, xmlEscape(msg))
}

// writeInvalidChangeBatch uses the special shape Route 53 gives this error.
func writeInvalidChangeBatch(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<InvalidChangeBatch xmlns="%s"><Messages><Message>%s</Message></Messages><RequestId>req-2</RequestId></InvalidChangeBatch>`, r53NS, xmlEscape(msg))
}

func xmlEscape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func (f *fakeRoute53) listZones(w http.ResponseWriter, r *http.Request) {
	type hz struct {
		ID     string `xml:"Id"`
		Name   string `xml:"Name"`
		Config struct {
			PrivateZone bool `xml:"PrivateZone"`
		} `xml:"Config"`
		ResourceRecordSetCount int `xml:"ResourceRecordSetCount"`
	}
	out := struct {
		XMLName     xml.Name `xml:"ListHostedZonesByNameResponse"`
		NS          string   `xml:"xmlns,attr"`
		HostedZones []hz     `xml:"HostedZones>HostedZone"`
		IsTruncated bool     `xml:"IsTruncated"`
		MaxItems    int      `xml:"MaxItems"`
	}{NS: r53NS, MaxItems: 1}
	if dn := strings.ToLower(r.URL.Query().Get("dnsname")); dn == "" || dn == f.zone || dn+"." == f.zone {
		out.HostedZones = append(out.HostedZones, hz{ID: "/hostedzone/" + f.zoneID, Name: f.zone, ResourceRecordSetCount: len(f.sets)})
	}
	writeXML(w, out)
}

func writeXML(w http.ResponseWriter, v any) {
	b, err := xml.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	_, _ = w.Write([]byte(xml.Header))
	_, _ = w.Write(b)
}

type xmlRRset struct {
	Name    string      `xml:"Name"`
	Type    string      `xml:"Type"`
	TTL     int64       `xml:"TTL"`
	Records []xmlRecord `xml:"ResourceRecords>ResourceRecord"`
}

type xmlRecord struct {
	Value string `xml:"Value"`
}

func (x xmlRRset) values() []string {
	out := make([]string, 0, len(x.Records))
	for _, r := range x.Records {
		out = append(out, r.Value)
	}
	return out
}

func records(vs []string) []xmlRecord {
	out := make([]xmlRecord, 0, len(vs))
	for _, v := range vs {
		out = append(out, xmlRecord{Value: v})
	}
	return out
}

func (f *fakeRoute53) sorted() []*rrset {
	out := make([]*rrset, 0, len(f.sets))
	for _, s := range f.sets {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *rrset) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Type, b.Type)
	})
	return out
}

func (f *fakeRoute53) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	max := f.pageSize
	if m, err := strconv.Atoi(q.Get("maxitems")); err == nil && m > 0 && m < max {
		max = m
	}
	startName, startType := strings.ToLower(q.Get("name")), q.Get("type")
	out := struct {
		XMLName        xml.Name   `xml:"ListResourceRecordSetsResponse"`
		NS             string     `xml:"xmlns,attr"`
		Sets           []xmlRRset `xml:"ResourceRecordSets>ResourceRecordSet"`
		IsTruncated    bool       `xml:"IsTruncated"`
		NextRecordName string     `xml:"NextRecordName,omitempty"`
		NextRecordType string     `xml:"NextRecordType,omitempty"`
		MaxItems       int        `xml:"MaxItems"`
	}{NS: r53NS, MaxItems: max}
	for _, s := range f.sorted() {
		if startName != "" && (s.Name < startName || (s.Name == startName && startType != "" && s.Type < startType)) {
			continue
		}
		if len(out.Sets) == max {
			out.IsTruncated, out.NextRecordName, out.NextRecordType = true, s.Name, s.Type
			break
		}
		out.Sets = append(out.Sets, xmlRRset{Name: s.Name, Type: s.Type, TTL: s.TTL, Records: records(s.Values)})
	}
	writeXML(w, out)
}

func (f *fakeRoute53) change(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Changes []struct {
			Action string   `xml:"Action"`
			Set    xmlRRset `xml:"ResourceRecordSet"`
		} `xml:"ChangeBatch>Changes>Change"`
	}
	if err := xml.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "InvalidInput", "malformed XML: "+err.Error())
		return
	}
	next := make(map[setKey]*rrset, len(f.sets))
	for k, v := range f.sets {
		next[k] = v
	}
	for _, c := range req.Changes {
		name := strings.ToLower(c.Set.Name)
		if !strings.HasSuffix(name, ".") {
			name += "."
		}
		if name != f.zone && !strings.HasSuffix(name, "."+f.zone) {
			writeInvalidChangeBatch(w, fmt.Sprintf("RRSet with DNS name %s is not permitted in zone %s", name, f.zone))
			return
		}
		k := setKey{name, c.Set.Type}
		s := &rrset{Name: name, Type: c.Set.Type, TTL: c.Set.TTL, Values: c.Set.values()}
		if msg := validateSet(s); msg != "" {
			writeInvalidChangeBatch(w, msg)
			return
		}
		old, exists := next[k]
		switch c.Action {
		case "CREATE":
			if exists {
				writeInvalidChangeBatch(w, fmt.Sprintf("Tried to create resource record set [name='%s', type='%s'] but it already exists", name, s.Type))
				return
			}
			next[k] = s
		case "UPSERT":
			next[k] = s
		case "DELETE":
			if !exists || old.TTL != s.TTL || !sameValues(old.Values, s.Values) {
				writeInvalidChangeBatch(w, fmt.Sprintf("Tried to delete resource record set [name='%s', type='%s'] but the values provided do not match the current values", name, s.Type))
				return
			}
			delete(next, k)
		default:
			writeError(w, http.StatusBadRequest, "InvalidInput", "unknown action "+c.Action)
			return
		}
	}
	if msg := f.conflicts(next); msg != "" {
		writeInvalidChangeBatch(w, msg)
		return
	}
	f.sets = next
	writeXML(w, struct {
		XMLName xml.Name `xml:"ChangeResourceRecordSetsResponse"`
		NS      string   `xml:"xmlns,attr"`
		ID      string   `xml:"ChangeInfo>Id"`
		Status  string   `xml:"ChangeInfo>Status"`
		At      string   `xml:"ChangeInfo>SubmittedAt"`
	}{NS: r53NS, ID: "/change/C1", Status: "PENDING", At: "2026-01-01T00:00:00Z"})
}

func sameValues(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// validateSet checks one RRset as Route 53 does: values present, no
// duplicates, one CNAME value, TXT strings quoted and at most 255 bytes.
func validateSet(s *rrset) string {
	if len(s.Values) == 0 {
		return "Invalid request: Expected exactly one of [AliasTarget, all of [TTL, and ResourceRecords]]"
	}
	seen := map[string]bool{}
	for _, v := range s.Values {
		if seen[v] {
			return fmt.Sprintf("Invalid Resource Record: FATAL problem: DuplicateRecord encountered at %s", v)
		}
		seen[v] = true
		if len(v) > 4000 {
			return "Invalid Resource Record: FATAL problem: value exceeds 4000 characters encountered at " + v[:40]
		}
		if s.Type == "TXT" {
			strs, ok := txtStrings(v)
			if !ok {
				return "Invalid Resource Record: FATAL problem: InvalidCharacterString (Value should be enclosed in quotation marks) encountered at " + v
			}
			for _, str := range strs {
				if len(str) > 255 {
					return "Invalid Resource Record: FATAL problem: TXTRDATATooLong encountered at " + v
				}
			}
		}
	}
	if s.Type == "CNAME" && len(s.Values) > 1 {
		return "Invalid Resource Record: FATAL problem: RRSet of type CNAME with DNS name " + s.Name + " has more than one resource record"
	}
	return ""
}

// txtStrings decodes a Route 53 TXT value: quoted strings separated by
// spaces, with \" \\ and \DDD (octal) escapes.
func txtStrings(v string) ([]string, bool) {
	var out []string
	i := 0
	for i < len(v) {
		if v[i] == ' ' {
			i++
			continue
		}
		if v[i] != '"' {
			return nil, false
		}
		i++
		var b []byte
		for ; i < len(v) && v[i] != '"'; i++ {
			if v[i] == '\\' && i+1 < len(v) {
				if i+3 < len(v) && isOctal(v[i+1]) && isOctal(v[i+2]) && isOctal(v[i+3]) {
					n, _ := strconv.ParseUint(v[i+1:i+4], 8, 8)
					b = append(b, byte(n))
					i += 3
					continue
				}
				i++
			}
			b = append(b, v[i])
		}
		if i >= len(v) {
			return nil, false
		}
		i++ // closing quote
		out = append(out, string(b))
	}
	return out, true
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// conflicts applies Route 53's rules across the zone after a batch.
func (f *fakeRoute53) conflicts(sets map[setKey]*rrset) string {
	byName := map[string][]string{}
	for k := range sets {
		byName[k.name] = append(byName[k.name], k.typ)
	}
	for name, types := range byName {
		if !slices.Contains(types, "CNAME") {
			continue
		}
		if name == f.zone {
			return fmt.Sprintf("RRSet of type CNAME with DNS name %s is not permitted at apex in zone %s", name, f.zone)
		}
		if len(types) > 1 {
			return fmt.Sprintf("RRSet of type CNAME with DNS name %s is not permitted as it conflicts with other records with the same DNS name in zone %s", name, f.zone)
		}
	}
	return ""
}
