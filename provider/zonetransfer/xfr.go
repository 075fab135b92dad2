package zonetransfer

import (
	"fmt"
	"iter"
	"net/netip"
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
	// the zone's current SOA (RFC 5936, RFC 1995), as All yields them.
	// ReadXFR sets them; OpenXFR leaves them nil (read them with All).
	Records []dns.RR

	st   memory.ZoneState // the snapshot an AXFR streams from
	soa  *dns.SOA         // the zone's SOA in st
	diff []dns.RR         // an IXFR's records, or the one SOA
}

// All yields the transfer's records in order: Records when set, else,
// for an XFR from OpenXFR, the IXFR's records or, for an AXFR, the SOA,
// every record of the zone as it stands in the snapshot the XFR was read
// from (memory.ZoneState.All: apex first, then owner names in canonical
// order, each RRset's records together; RFC 5936 section 2.2 asks for no
// order) and the SOA again, streamed without a copy of the zone. Records yielded are shared: not to be modified.
func (x XFR) All() iter.Seq[dns.RR] {
	return func(yield func(dns.RR) bool) {
		switch {
		case x.Records != nil:
			for _, rr := range x.Records {
				if !yield(rr) {
					return
				}
			}
		case x.diff != nil:
			for _, rr := range x.diff {
				if !yield(rr) {
					return
				}
			}
		case x.soa != nil:
			if !yield(x.soa) {
				return
			}
			for rr := range x.st.All() {
				if !yield(rr) {
					return
				}
			}
			yield(dns.Copy(x.soa))
		}
	}
}

// ReadXFR returns the records a zone transfer of zone from p sends, read
// from one snapshot of p (see memory.Provider.ZoneState), in XFR.Records:
// OpenXFR's answer with All collected into one slice — for an AXFR, the
// whole zone in memory at once; a Transfer streams with OpenXFR instead.
// With ixfr false it is the AXFR; with ixfr
// true and client the serial the client holds, it is one SOA when the
// client is as new as the zone, the differences since client from the
// journal (RFC 1995 section 4: the current SOA, then per change the old
// SOA, the records deleted, the new SOA, the records added, and the
// current SOA again) when the journal reaches back to it, and the AXFR
// otherwise — also when the differences would be larger than the zone. It
// fails with memory.ErrNoZone for a zone not held (and for a nil p).
func ReadXFR(p *memory.Provider, zone string, ixfr bool, client uint32) (XFR, error) {
	x, err := OpenXFR(p, zone, ixfr, client)
	if err != nil {
		return XFR{}, err
	}
	recs := slices.Collect(x.All())
	return XFR{Zone: x.Zone, Serial: x.Serial, Kind: x.Kind, Records: recs}, nil
}

// OpenXFR is ReadXFR without the slice: it decides the answer (and
// computes an IXFR's differences, which are at most the zone's size) but
// leaves Records nil; All then yields the records, an AXFR's streamed
// from the snapshot OpenXFR read, which stays the same however long the
// reading takes and whatever is written meanwhile. The first record is
// ready at once, whatever the zone's size, and memory stays flat.
func OpenXFR(p *memory.Provider, zone string, ixfr bool, client uint32) (XFR, error) {
	if p == nil {
		return XFR{}, fmt.Errorf("%w: %s", memory.ErrNoZone, zone)
	}
	st, err := p.ZoneState(zone)
	if err != nil {
		return XFR{}, err
	}
	soa := st.SOA()
	x := XFR{Zone: st.Name(), Serial: soa.Serial}
	x.diff, x.Kind = xfrRecords(st, soa, ixfr, client)
	if x.Kind == XFRFull {
		x.st, x.soa = st, soa
	}
	return x, nil
}

// xfrRecords is the answer to a transfer request (see ReadXFR); soa is
// st's SOA. For XFRFull the records are nil: the AXFR is streamed.
func xfrRecords(st memory.ZoneState, soa *dns.SOA, ixfr bool, client uint32) ([]dns.RR, XFRKind) {
	if !ixfr {
		return nil, XFRFull
	}
	if !memory.SerialGreater(soa.Serial, client) {
		return []dns.RR{soa}, XFRUpToDate
	}
	groups, ok := journalSince(st.Journal(), st.Name(), soa.Serial, client)
	if !ok {
		return nil, XFRFull
	}
	size := 0
	for _, g := range groups {
		for _, c := range g {
			size += len(c.Records) + len(c.Old)
		}
	}
	// Larger than the zone: the zone instead (counting the zone only as
	// far as size, so that a small IXFR of a large zone stays cheap).
	if !st.LenAtLeast(size) {
		return nil, XFRFull
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
				return nil, XFRFull
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
		return wireRecord(zone, r)
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

// wireRecord is r's wire form in zone, as zonerecord.Parse makes it: an A
// or AAAA record in the canonical form the journal holds, and a CNAME, NS
// or PTR whose target is a fully qualified name of letters, digits, '-'
// and '_', are built directly (Parse would go through libdns's types and
// back, some microseconds a record), any other through Parse.
func wireRecord(zone string, r memory.ZoneRecord) (dns.RR, bool) {
	if r.Strings != nil || r.TTL > zonerecord.MaxTTL {
		return parseRecord(zone, r)
	}
	switch r.Type {
	case "A", "AAAA":
		ip, err := netip.ParseAddr(r.Data)
		a := r.Type == "A"
		if err == nil && ip.Zone() == "" && (a && ip.Is4() || !a && ip.Is6()) {
			if fqdn, ok := journalOwner(zone, r.Name); ok {
				hdr := dns.RR_Header{Name: fqdn, Rrtype: dns.TypeAAAA, Class: dns.ClassINET, Ttl: r.TTL}
				if a {
					hdr.Rrtype = dns.TypeA
					return &dns.A{Hdr: hdr, A: ip.AsSlice()}, true
				}
				return &dns.AAAA{Hdr: hdr, AAAA: ip.AsSlice()}, true
			}
		}
	case "CNAME", "NS", "PTR":
		fqdn, ok := journalOwner(zone, r.Name)
		if !ok || !plainFQDN(r.Data) || r.Type == "CNAME" && fqdn == zone {
			break
		}
		hdr := dns.RR_Header{Name: fqdn, Class: dns.ClassINET, Ttl: r.TTL}
		switch r.Type {
		case "CNAME":
			hdr.Rrtype = dns.TypeCNAME
			return &dns.CNAME{Hdr: hdr, Target: r.Data}, true
		case "NS":
			hdr.Rrtype = dns.TypeNS
			return &dns.NS{Hdr: hdr, Ns: r.Data}, true
		}
		hdr.Rrtype = dns.TypePTR
		return &dns.PTR{Hdr: hdr, Ptr: r.Data}, true
	}
	return parseRecord(zone, r)
}

// parseRecord is r's wire form in zone through zonerecord.Parse.
func parseRecord(zone string, r memory.ZoneRecord) (dns.RR, bool) {
	_, _, _, _, rr, err := zonerecord.Parse(zone, r.Record())
	return rr, err == nil
}

// plainFQDN reports whether s is a fully qualified name other than the
// root, lower case, of labels of letters, digits, '-' and '_' (as a
// journal's canonical data spells such a target).
func plainFQDN(s string) bool {
	if len(s) < 2 || len(s) > 254 || s[len(s)-1] != '.' {
		return false
	}
	label := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.':
			if label == 0 {
				return false
			}
			label = 0
			continue
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return false
		}
		if label++; label > 63 {
			return false
		}
	}
	return true
}

// journalOwner is zonerecord.Owner(zone, name) for a name as the journal
// holds it (lower case, relative, "@" at the apex) made of letters,
// digits, '-', '_' and '*' only, and false for any other (then ask Owner).
func journalOwner(zone, name string) (string, bool) {
	if name == "@" {
		return zone, true
	}
	if zone == "." || len(name)+1+len(zone) > 254 {
		return "", false
	}
	label := 0
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '.':
			if label == 0 {
				return "", false
			}
			label = 0
			continue
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_', c == '*':
		default:
			return "", false
		}
		if label++; label > 63 {
			return "", false
		}
	}
	if label == 0 {
		return "", false
	}
	return name + "." + zone, true
}
