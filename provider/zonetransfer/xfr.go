package zonetransfer

import (
	"fmt"
	"iter"
	"net/netip"
	"slices"
	"strings"

	"github.com/gslbkit/gslb/internal/zoneops"
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

// wireRecord is r's wire form in zone, as zonerecord.Parse makes it
// (Parse would go through libdns's types, and for MX, SRV and CAA through
// miekg/dns's zone-file parser: some microseconds a record). Built
// directly when the journal's canonical data is in its plain form: an A
// or AAAA address; a CNAME, NS or PTR target, and an MX or SRV one after
// its numbers, that is a fully qualified name of letters, digits, '-' and
// '_'; a TXT record's text (no Strings); a CAA record whose value is
// printable ASCII with no quote or backslash. Any other through Parse.
func wireRecord(zone string, r memory.ZoneRecord) (dns.RR, bool) {
	if r.Strings != nil || r.TTL > zonerecord.MaxTTL {
		return parseRecord(zone, r)
	}
	code, ok := directTypes[r.Type]
	if !ok {
		return parseRecord(zone, r)
	}
	fqdn, ok := journalOwner(zone, r.Name)
	if !ok {
		return parseRecord(zone, r)
	}
	if rr := directRecord(dns.RR_Header{Name: fqdn, Rrtype: code, Class: dns.ClassINET, Ttl: r.TTL}, zone, r.Data); rr != nil {
		return rr, true
	}
	return parseRecord(zone, r)
}

// directTypes are the types directRecord builds.
var directTypes = map[string]uint16{
	"A": dns.TypeA, "AAAA": dns.TypeAAAA, "CNAME": dns.TypeCNAME, "NS": dns.TypeNS, "PTR": dns.TypePTR,
	"TXT": dns.TypeTXT, "MX": dns.TypeMX, "SRV": dns.TypeSRV, "CAA": dns.TypeCAA,
}

// directRecord is the record of hdr's type with data in the journal's
// canonical form (see wireRecord), or nil when data is not in the plain
// form it reads (then Parse decides).
func directRecord(hdr dns.RR_Header, zone, data string) dns.RR {
	switch hdr.Rrtype {
	case dns.TypeA, dns.TypeAAAA:
		ip, err := netip.ParseAddr(data)
		if err != nil || ip.Zone() != "" {
			return nil
		}
		switch {
		case hdr.Rrtype == dns.TypeA && ip.Is4():
			return &dns.A{Hdr: hdr, A: ip.AsSlice()}
		case hdr.Rrtype == dns.TypeAAAA && ip.Is6():
			return &dns.AAAA{Hdr: hdr, AAAA: ip.AsSlice()}
		}
	case dns.TypeCNAME, dns.TypeNS, dns.TypePTR:
		if !plainFQDN(data) || hdr.Rrtype == dns.TypeCNAME && hdr.Name == zone {
			return nil
		}
		switch hdr.Rrtype {
		case dns.TypeCNAME:
			return &dns.CNAME{Hdr: hdr, Target: data}
		case dns.TypeNS:
			return &dns.NS{Hdr: hdr, Ns: data}
		}
		return &dns.PTR{Hdr: hdr, Ptr: data}
	case dns.TypeTXT:
		if len(data) > zonerecord.MaxTXTData {
			return nil
		}
		return &dns.TXT{Hdr: hdr, Txt: zonerecord.TXTWire(zoneops.SplitTXT(data))}
	case dns.TypeMX:
		pref, rest, ok := cutUint(data, 0xFFFF)
		if !ok || !plainFQDN(rest) {
			return nil
		}
		return &dns.MX{Hdr: hdr, Preference: uint16(pref), Mx: rest}
	case dns.TypeSRV:
		prio, rest, ok := cutUint(data, 0xFFFF)
		weight, rest, ok2 := cutUint(rest, 0xFFFF)
		port, rest, ok3 := cutUint(rest, 0xFFFF)
		if !ok || !ok2 || !ok3 || !plainFQDN(rest) {
			return nil
		}
		return &dns.SRV{Hdr: hdr, Priority: uint16(prio), Weight: uint16(weight), Port: uint16(port), Target: rest}
	case dns.TypeCAA:
		flag, rest, ok := cutUint(data, 0xFF)
		tag, value, ok2 := strings.Cut(rest, " ")
		if !ok || !ok2 || !plainCAATag(tag) || !plainCAAValue(value) {
			return nil
		}
		return &dns.CAA{Hdr: hdr, Flag: uint8(flag), Tag: tag, Value: value[1 : len(value)-1]}
	}
	return nil
}

// cutUint reads the decimal number (1 to 5 digits, at most max) that
// begins s and the one space after it, and returns it and the rest of s.
func cutUint(s string, max uint32) (n uint32, rest string, ok bool) {
	i := 0
	for ; i < len(s) && i < 6 && '0' <= s[i] && s[i] <= '9'; i++ {
		n = n*10 + uint32(s[i]-'0')
	}
	if i == 0 || i > 5 || n > max || i >= len(s) || s[i] != ' ' {
		return 0, "", false
	}
	return n, s[i+1:], true
}

// plainCAATag reports whether s is a CAA tag of ASCII letters and digits
// (RFC 8659 section 4.1), at most 15 of them.
func plainCAATag(s string) bool {
	if s == "" || len(s) > 15 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// plainCAAValue reports whether s is a quoted CAA value of 0 to 255
// printable ASCII bytes with no quote or backslash inside (a value that
// needs no escape; RFC 8659 allows an empty one).
func plainCAAValue(s string) bool {
	if len(s) < 2 || len(s) > 257 || s[0] != '"' || s[len(s)-1] != '"' {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
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
