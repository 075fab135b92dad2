package zonetransfer

import (
	"fmt"
	"slices"

	"github.com/gslbkit/gslb/internal/zonerecord"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/miekg/dns"
)

// XFRKind says how a zone transfer request is answered (see ReadXFR).
type XFRKind uint8

const (
	// XFRFull is the whole zone: an AXFR, or an IXFR falling back to one.
	XFRFull XFRKind = iota
	// XFRIncremental is the differences since the client's serial.
	XFRIncremental
	// XFRUpToDate is an IXFR from a client as new as the zone: one SOA.
	XFRUpToDate
)

// String returns "AXFR", "IXFR" or "IXFR (up to date)".
func (k XFRKind) String() string {
	switch k {
	case XFRIncremental:
		return "IXFR"
	case XFRUpToDate:
		return "IXFR (up to date)"
	}
	return "AXFR"
}

// XFR is what a zone transfer sends, read from one snapshot of the store.
type XFR struct {
	// Zone is the zone's name, lower case and fully qualified.
	Zone string
	// Serial is the zone's current SOA serial.
	Serial uint32
	// Kind says which of the answers Records is.
	Kind XFRKind
	// Records are the transfer's records in order, the first and the last
	// the zone's current SOA (RFC 5936, RFC 1995).
	Records []dns.RR
}

// ReadXFR returns the records a zone transfer of zone from p sends (a
// Transfer streams them to secondaries), read from one snapshot of p (see
// memory.Provider.ZoneState). With ixfr false it is the AXFR; with ixfr
// true and client the serial the client holds, it is one SOA when the
// client is as new as the zone, the differences since client from the
// journal (RFC 1995 section 4: the current SOA, then per change the old
// SOA, the records deleted, the new SOA, the records added, and the
// current SOA again) when the journal reaches back to it, and the AXFR
// otherwise — also when the differences would be larger than the zone. It
// fails with memory.ErrNoZone for a zone not held (and for a nil p).
func ReadXFR(p *memory.Provider, zone string, ixfr bool, client uint32) (XFR, error) {
	if p == nil {
		return XFR{}, fmt.Errorf("%w: %s", memory.ErrNoZone, zone)
	}
	st, err := p.ZoneState(zone)
	if err != nil {
		return XFR{}, err
	}
	soa := st.SOA()
	rrs, kind := xfrRecords(st, soa, ixfr, client)
	return XFR{Zone: st.Name(), Serial: soa.Serial, Kind: kind, Records: rrs}, nil
}

// axfrRecords is the whole zone as AXFR sends it (RFC 5936): the SOA, every
// record, the SOA again.
func axfrRecords(st memory.ZoneState, soa *dns.SOA) []dns.RR {
	recs := st.Records()
	out := make([]dns.RR, 0, len(recs)+2)
	out = append(out, soa)
	out = append(out, recs...)
	return append(out, dns.Copy(soa))
}

// xfrRecords is the answer to a transfer request (see ReadXFR); soa is
// st's SOA.
func xfrRecords(st memory.ZoneState, soa *dns.SOA, ixfr bool, client uint32) ([]dns.RR, XFRKind) {
	if !ixfr {
		return axfrRecords(st, soa), XFRFull
	}
	if !memory.SerialGreater(soa.Serial, client) {
		return []dns.RR{soa}, XFRUpToDate
	}
	groups, ok := journalSince(st.Journal(), st.Name(), soa.Serial, client)
	if !ok {
		return axfrRecords(st, soa), XFRFull
	}
	size := 0
	for _, g := range groups {
		for _, c := range g {
			size += len(c.Records) + len(c.Old)
		}
	}
	if size > st.Len() {
		return axfrRecords(st, soa), XFRFull
	}
	withSerial := func(serial uint32) dns.RR {
		s := dns.Copy(soa).(*dns.SOA)
		s.Serial = serial
		return s
	}
	out := make([]dns.RR, 0, size+2+2*len(groups))
	out = append(out, soa)
	prev := client
	for _, g := range groups {
		var del, add []dns.RR
		for _, c := range g {
			d, a, ok := diffRRSet(st.Name(), c)
			if !ok {
				return axfrRecords(st, soa), XFRFull
			}
			del, add = append(del, d...), append(add, a...)
		}
		serial := g[0].Serial
		out = append(out, withSerial(prev))
		out = append(out, del...)
		out = append(out, withSerial(serial))
		out = append(out, add...)
		prev = serial
	}
	return append(out, dns.Copy(soa)), XFRIncremental
}

// journalSince returns the journal entries of zone after the change that
// left it at serial client (its current serial is serial), one group per
// version, oldest first; false when the journal does not reach back to
// that serial (or the zone was added or removed since, or its entries do
// not chain from serial to serial).
func journalSince(j []memory.Change, zone string, serial, client uint32) ([][]memory.Change, bool) {
	var groups [][]memory.Change // newest first while collecting
	want := serial               // the serial the next older group must have made
	for i := len(j); i > 0 && want != client; {
		v := j[i-1].Version
		k := i
		for k > 0 && j[k-1].Version == v {
			k--
		}
		var g []memory.Change
		other := false
		for _, c := range j[k:i] {
			if c.Zone != zone {
				continue
			}
			if c.Kind != memory.ChangeRRSet {
				other = true
			}
			g = append(g, c)
		}
		i = k
		if len(g) == 0 {
			continue
		}
		if other || g[0].Serial != want || g[0].PrevSerial == 0 || !memory.SerialGreater(g[0].Serial, g[0].PrevSerial) {
			return nil, false
		}
		groups = append(groups, g)
		want = g[0].PrevSerial
	}
	if want != client || len(groups) == 0 {
		return nil, false
	}
	slices.Reverse(groups)
	return groups, true
}

// diffRRSet returns the wire records a journal entry deleted and added
// (records that stayed, same data and TTL, are in neither).
func diffRRSet(zone string, c memory.Change) (del, add []dns.RR, ok bool) {
	in := func(set []memory.ZoneRecord, r memory.ZoneRecord) bool {
		for _, o := range set {
			if o.Data == r.Data && o.TTL == r.TTL && slices.Equal(o.Strings, r.Strings) {
				return true
			}
		}
		return false
	}
	conv := func(r memory.ZoneRecord) (dns.RR, bool) {
		r.Name, r.Type = c.Name, c.Type
		_, _, _, _, rr, err := zonerecord.Parse(zone, r.Record())
		return rr, err == nil
	}
	for _, r := range c.Old {
		if !in(c.Records, r) {
			w, ok := conv(r)
			if !ok {
				return nil, nil, false
			}
			del = append(del, w)
		}
	}
	for _, r := range c.Records {
		if !in(c.Old, r) {
			w, ok := conv(r)
			if !ok {
				return nil, nil, false
			}
			add = append(add, w)
		}
	}
	return del, add, true
}
