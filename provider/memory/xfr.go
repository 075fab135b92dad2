package memory

import (
	"fmt"
	"slices"

	"github.com/miekg/dns"
)

// XFRKind says how a zone transfer request is answered (see Provider.XFR).
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

// XFR returns the records a zone transfer of zone sends (the package
// zonetransfer streams them to standard secondaries). With ixfr false it is
// the AXFR; with ixfr true and client the serial the client holds, it is
// one SOA when the client is as new as the zone, the differences since
// client from the journal (RFC 1995 section 4) when the journal reaches
// back to it, and the AXFR otherwise — also when the differences would be
// larger than the zone. It fails with ErrNoZone for a zone not held.
func (p *Provider) XFR(zone string, ixfr bool, client uint32) (XFR, error) {
	if p == nil {
		return XFR{}, fmt.Errorf("%w: %s", ErrNoZone, zoneKey(zone))
	}
	s := p.load()
	z, ok := s.zones[zoneKey(zone)]
	if !ok {
		return XFR{}, fmt.Errorf("%w: %s", ErrNoZone, zoneKey(zone))
	}
	rrs, kind := xfrRecords(s, z, ixfr, client)
	return XFR{Zone: z.name, Serial: z.soa.Serial, Kind: kind, Records: rrs}, nil
}

// SOARecord returns zone's SOA as a wire record (a new one each call), or
// ErrNoZone.
func (p *Provider) SOARecord(zone string) (*dns.SOA, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoZone, zoneKey(zone))
	}
	z, ok := p.load().zones[zoneKey(zone)]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoZone, zoneKey(zone))
	}
	return z.soaRR(), nil
}

// SOARecords returns, from one snapshot, the Provider's Version and every
// zone's SOA as a wire record, keyed by the zone's name (lower case, fully
// qualified): what a NOTIFY sender needs to see which serials changed
// (wait for the next change with Wait).
func (p *Provider) SOARecords() (version uint64, soas map[string]*dns.SOA) {
	if p == nil {
		return 0, map[string]*dns.SOA{}
	}
	s := p.load()
	soas = make(map[string]*dns.SOA, len(s.zones))
	for name, z := range s.zones {
		soas[name] = z.soaRR()
	}
	return s.version, soas
}

// HoldsZone reports whether the Provider holds the zone name, written lower
// case and fully qualified ("example.com."). It takes bytes so that a
// caller on a hot path (the DNS server's rate limiter) asks without
// allocating.
func (p *Provider) HoldsZone(name []byte) bool {
	if p == nil {
		return false
	}
	_, ok := p.load().zones[string(name)]
	return ok
}

// ZoneHooked reports whether answer hooks (SetAnswerFunc,
// SetZoneAnswerFunc) act on names of zone — hooks do not travel to
// secondaries — and a number that changes whenever the set of hooks does,
// so that a caller can warn once per set.
func (p *Provider) ZoneHooked(zone string) (hooked bool, set uint64) {
	if p == nil {
		return false, 0
	}
	h := p.hooks.Load()
	if h == nil {
		return false, 0
	}
	zone = zoneKey(zone)
	for n := range h.byName {
		if dns.IsSubDomain(zone, n) {
			return true, h.gen
		}
	}
	for n := range h.byZone {
		if dns.IsSubDomain(n, zone) || dns.IsSubDomain(zone, n) {
			return true, h.gen
		}
	}
	return false, h.gen
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
func xfrRecords(s *state, z *zone, ixfr bool, client uint32) ([]dns.RR, XFRKind) {
	if !ixfr {
		return axfrRecords(z), XFRFull
	}
	if !SerialGreater(z.soa.Serial, client) {
		return []dns.RR{z.soaRR()}, XFRUpToDate
	}
	groups, ok := journalSince(s, z, client)
	if !ok {
		return axfrRecords(z), XFRFull
	}
	size := 0
	for _, g := range groups {
		for _, c := range g {
			size += len(c.Records) + len(c.Old)
		}
	}
	if size > z.recordCount() {
		return axfrRecords(z), XFRFull
	}
	out := make([]dns.RR, 0, size+2+2*len(groups))
	out = append(out, z.soaRR())
	prev := client
	for _, g := range groups {
		var del, add []dns.RR
		for _, c := range g {
			d, a, ok := diffRRSet(z.name, c)
			if !ok {
				return axfrRecords(z), XFRFull
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
	return append(out, z.soaRR()), XFRIncremental
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
