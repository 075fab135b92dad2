package memory

import (
	"slices"

	"github.com/miekg/dns"
)

// How a transfer request is answered.
type xfrKind uint8

const (
	xfrAXFR     xfrKind = iota // the whole zone (AXFR, or IXFR falling back)
	xfrIXFR                    // the differences since the client's serial
	xfrUpToDate                // IXFR from a client as new as the zone: one SOA
)

func (k xfrKind) String() string {
	switch k {
	case xfrIXFR:
		return "IXFR"
	case xfrUpToDate:
		return "IXFR (up to date)"
	}
	return "AXFR"
}

// axfrRecords is the whole zone as AXFR sends it (RFC 5936): the SOA, every
// record, the SOA again.
func axfrRecords(z *zone) []dns.RR {
	recs := z.records()
	out := make([]dns.RR, 0, len(recs)+2)
	out = append(out, z.soaRR())
	for _, r := range recs {
		out = append(out, r.wire)
	}
	return append(out, z.soaRR())
}

// xfrRecords is the answer to a transfer request for zone z of state s.
// With ixfr false it is the AXFR; with ixfr true and client the serial the
// client holds, it is one SOA when the client is as new as the zone, the
// differences since client from the journal (RFC 1995 section 4: the
// current SOA, then per change the old SOA, the records deleted, the new
// SOA, the records added, and the current SOA again) when the journal
// reaches back to client, and the AXFR otherwise — also when the
// differences would be larger than the zone.
func xfrRecords(s *state, z *zone, ixfr bool, client uint32) ([]dns.RR, xfrKind) {
	if !ixfr {
		return axfrRecords(z), xfrAXFR
	}
	if !SerialGreater(z.soa.Serial, client) {
		return []dns.RR{z.soaRR()}, xfrUpToDate
	}
	groups, ok := journalSince(s, z, client)
	if !ok {
		return axfrRecords(z), xfrAXFR
	}
	size := 0
	for _, g := range groups {
		for _, c := range g {
			size += len(c.Records) + len(c.Old)
		}
	}
	if size > z.recordCount() {
		return axfrRecords(z), xfrAXFR
	}
	out := make([]dns.RR, 0, size+2+2*len(groups))
	out = append(out, z.soaRR())
	prev := client
	for _, g := range groups {
		var del, add []dns.RR
		for _, c := range g {
			d, a, ok := diffRRSet(z.name, c)
			if !ok {
				return axfrRecords(z), xfrAXFR
			}
			del, add = append(del, d...), append(add, a...)
		}
		serial := g[0].Serial
		out = append(out, z.soaWithSerial(prev))
		out = append(out, del...)
		out = append(out, z.soaWithSerial(serial))
		out = append(out, add...)
		prev = serial
	}
	return append(out, z.soaRR()), xfrIXFR
}

// journalSince returns the journal entries of zone z after the change that
// left it at serial client, one group per version, oldest first; false when
// the journal does not reach back to that serial (or the zone was added or
// removed since, or its entries do not chain from serial to serial).
func journalSince(s *state, z *zone, client uint32) ([][]Change, bool) {
	j := s.journal
	var groups [][]Change // newest first while collecting
	want := z.soa.Serial  // the serial the next older group must have made
	for i := len(j); i > 0 && want != client; {
		v := j[i-1].Version
		k := i
		for k > 0 && j[k-1].Version == v {
			k--
		}
		var g []Change
		other := false
		for _, c := range j[k:i] {
			if c.Zone != z.name {
				continue
			}
			if c.Kind != ChangeRRSet {
				other = true
			}
			g = append(g, c)
		}
		i = k
		if len(g) == 0 {
			continue
		}
		if other || g[0].Serial != want || g[0].PrevSerial == 0 || !SerialGreater(g[0].Serial, g[0].PrevSerial) {
			return nil, false
		}
		groups = append(groups, g)
		want = g[0].PrevSerial
	}
	if want != client || len(groups) == 0 {
		return nil, false
	}
	slicesReverse(groups)
	return groups, true
}

func slicesReverse[T any](s []T) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

// diffRRSet returns the wire records a journal entry deleted and added
// (records that stayed, same data and TTL, are in neither).
func diffRRSet(zoneName string, c Change) (del, add []dns.RR, ok bool) {
	in := func(set []ZoneRecord, r ZoneRecord) bool {
		for _, o := range set {
			if o.Data == r.Data && o.TTL == r.TTL && slices.Equal(o.Strings, r.Strings) {
				return true
			}
		}
		return false
	}
	conv := func(r ZoneRecord) (dns.RR, bool) {
		r.Name, r.Type = c.Name, c.Type
		_, rr, err := makeRec(zoneName, r.libdns())
		return rr.wire, err == nil
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

// soaWithSerial is the zone's SOA record carrying serial.
func (z *zone) soaWithSerial(serial uint32) *dns.SOA {
	s := z.soaRR()
	s.Serial = serial
	return s
}

// recordCount is the number of records in the zone, SOA excluded.
func (z *zone) recordCount() int {
	n := 0
	for _, nd := range z.nodes {
		for _, rs := range nd.sets {
			n += len(rs)
		}
	}
	return n
}
