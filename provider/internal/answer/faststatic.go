package answer

import (
	"cmp"
	"encoding/binary"
	"math/bits"
	"slices"
	"strings"
	"unsafe"

	"github.com/gslbkit/gslb/provider/internal/zonedata"
	"github.com/miekg/dns"
)

// Static answers without the cache. For the commonest answers — the
// queried name (or a wildcard synthesising it) holds records of the queried
// type A, AAAA or TXT, or a CNAME leading, inside the zone, to a name
// holding them (one link), no answer hook, DO clear, or it is at or below
// a zone cut (a referral, staticReferral) —
// staticReply writes the reply straight from the zone's records instead of
// unpacking the query and packing a dns.Msg: the header, the question as
// asked, each record's owner as a pointer to the question or to the CNAME's
// target, and the OPT record, names compressed as miekg/dns compresses them,
// so the bytes are the general path's (FuzzFastPath, FuzzStaticReply and
// TestStaticReplySameBytes check). NXDOMAIN and NODATA answers (the zone's
// SOA in the authority section) are written so too. Anything else, or a
// reply that would not fit, returns nil and takes the general path.
//
// A static answer costs under twice what a cache hit does (1,619 against
// 863 instructions in BenchmarkFastPathSpread): the question's name is read
// from the cache key (lowered eight bytes at a time), turned into the
// zone's text form and tested eight bytes at a time; a view of a few
// zones finds the zone from a list (staticZones) and keeps each zone's
// apex wildcard and negative answer's SOA record ready; then one lookup
// of the name in the zone's nodes (plus the empty non-terminals' for a
// name that does not exist): in the zone's maps, or for a zone of 32,768
// names or more in its name index (zonedata.Index, staticNames), one
// probe of a compact table that tells a node, an empty non-terminal and a
// delegation point apart: with the names' bytes in their nodes (zonedata's
// packedNode) a query at 100,000 names takes 7.5 D1 read misses under
// callgrind with this host's caches, was 10.6 (1,000,000 names: 7.6, was
// 12.1; BenchmarkScaleQueries). Nothing is allocated.

// staticComp is the compression map of a reply staticReply writes, as
// miekg/dns's Pack keeps it: every suffix of the question (lower case,
// at offset 12) and of each name written after it, up to where that name
// became a pointer. The question is passed to each method (holding it
// would move it to the heap); the names written are the zone's strings, so
// nothing is copied.
type staticComp struct {
	str [2]string
	off [2]int // where str[k] starts in the reply
	end [2]int // str[k][:end[k]] was written as labels, the rest is a pointer
	n   int
}

// find returns the offset of suffix s (of a name, at a label boundary) in
// the reply so far: the question's, else the first name's holding it.
func (c *staticComp) find(q []byte, s string) (int, bool) {
	if k := len(q) - len(s); k >= 0 && (k == 0 || q[k-1] == '.') && string(q[k:]) == s {
		return 12 + k, true
	}
	for i := range c.n {
		t := c.str[i]
		if k := len(t) - len(s); k >= 0 && k < c.end[i] && (k == 0 || t[k-1] == '.') && t[k:] == s {
			return c.off[i] + k, true
		}
	}
	return 0, false
}

// name appends s (lower case, fully qualified) to out compressed as
// packDomainName does: its labels up to the first suffix written before,
// which becomes a pointer.
func (c *staticComp) name(out, q []byte, s string) ([]byte, bool) {
	if c.n == len(c.str) || len(out) > 0x3FFF-256 {
		return nil, false // every suffix's offset fits a pointer: no other case to mirror
	}
	k := c.n
	c.str[k], c.off[k], c.end[k] = s, len(out), len(s)
	for i := 0; i < len(s); {
		if o, ok := c.find(q, s[i:]); ok { // s itself not yet counted in c.n
			c.end[k] = i
			c.n++
			return append(out, 0xC0|byte(o>>8), byte(o)), true
		}
		j := i
		for j < len(s) && s[j] != '.' {
			if !staticLabelByte(s[j]) {
				return nil, false
			}
			j++
		}
		if j == len(s) || j == i || j-i > 63 {
			return nil, false
		}
		out = append(out, byte(j-i))
		out = append(out, s[i:j]...)
		i = j + 1
	}
	c.n++
	return append(out, 0), true
}

// staticLabelOK holds the bytes staticLabelByte accepts.
var staticLabelOK = func() (t [256]bool) {
	for b := range 256 {
		t[b] = 'a' <= b && b <= 'z' || '0' <= b && b <= '9' || b == '-' || b == '_' || b == '*'
	}
	return t
}()

// staticTextOK reports whether the name in text form in t[:l] holds only
// bytes staticLabelByte accepts and dots, labels of them (the dots placed
// between labels: a label holding a dot is refused). It tests eight bytes
// at a time: of the bytes without the high bit, those from lo to hi are
// those h+(0x80-lo) sets the high bit of and h+(0x7F-hi) does not; those
// equal to v those h^v+0x7F does not.
func staticTextOK(t *[256]byte, l, labels int) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	dots := 0
	for i := 0; i < l && i <= len(t)-8; i += 8 {
		w := binary.LittleEndian.Uint64(t[i:])
		h := w &^ highs
		az := (h + (0x80-'a')*ones) &^ (h + (0x7F-'z')*ones)
		digits := (h + (0x80-'-')*ones) &^ (h + (0x7F-'9')*ones) &^ ^(h ^ '/'*ones + 0x7F*ones) // '-', '.', '0' to '9'
		other := ^(h ^ '_'*ones + 0x7F*ones) | ^(h ^ '*'*ones + 0x7F*ones)
		lanes := uint64(highs)
		if l-i < 8 {
			lanes &= 1<<(8*(l-i)) - 1
		}
		if (az|digits|other)&^w&lanes != lanes {
			return false
		}
		dots += bits.OnesCount64(^(h ^ '.'*ones + 0x7F*ones) & lanes)
	}
	return dots == labels
}

// staticLabelByte reports whether b may appear in a label staticReply
// handles: bytes miekg/dns writes as themselves in a name's text form (no
// escaping), after lower-casing.
func staticLabelByte(b byte) bool { return staticLabelOK[b] }

// staticZoneList is the most zones (the root zone aside) for which a
// cache lists them for staticReply (staticZones); with more, it finds the
// zone with a map lookup per label.
const staticZoneList = 16

// staticZone is one zone as staticReply finds it: the zone and the
// wildcard at its apex ("*." and its name), or nil.
type staticZone struct {
	z      *zone
	wild   *zonedata.Node
	hooked bool // a zone-wide answer hook acts on its names (zoneHooked)
	// neg is the SOA record of the zone's negative answers (negativeSOA),
	// or nil; negPtr are the offsets of its negPtrs name pointers, negCheck
	// the suffixes a question must not have for it to serve.
	neg      []byte
	negPtr   [3]int
	negPtrs  int
	negCheck []string
}

// staticZones returns the zones of st (with hooks h), longest name first, but the root
// zone (whose names take the general path), when there are at most
// staticZoneList of them; ok is false when there are more.
func staticZones(st *zonedata.Set, h *hookTable) (zs []staticZone, ok bool) {
	if st == nil || len(st.Zones) > staticZoneList+1 {
		return nil, false
	}
	for name, z := range st.Zones {
		if name == "." {
			continue
		}
		var w *zonedata.Node
		if z.Wild {
			w = z.Nodes["*."+name]
		}
		zs = append(zs, staticZone{z: z, wild: w, hooked: zoneHooked(h, name)})
	}
	for i := range zs {
		zs[i].negativeSOA()
	}
	if len(zs) > staticZoneList {
		return nil, false
	}
	slices.SortFunc(zs, func(a, b staticZone) int { return cmp.Compare(len(b.z.Name), len(a.z.Name)) })
	return zs, true
}

// staticReply returns the reply to query (parsed by parseFast as fq, its
// name lower case in wire form in name, flags the last byte of its key)
// written into buf when the answer is of the kind above, or nil. c gives
// the view and its zones (staticZones); its entries are not used.
func (p *Engine) staticReply(c *fastCache, query, buf []byte, fq fastQuery, name []byte, flags byte) []byte {
	if flags&0x80 != 0 || len(name) <= 1 || fq.nameEnd+4 > len(query) {
		return nil // DO set, or the root
	}
	v := c.v
	qtype := uint16(query[fq.nameEnd])<<8 | uint16(query[fq.nameEnd+1])
	if query[fq.nameEnd+2] != 0 || query[fq.nameEnd+3] != 1 ||
		(qtype != dns.TypeA && qtype != dns.TypeAAAA && qtype != dns.TypeTXT) {
		return nil
	}
	// The name in text form: the same length as on the wire, the label at
	// text offset i starting at wire offset 12+i.
	var nb [256]byte
	l := len(name) - 1
	copy(nb[:], name[1:])
	labels := 0
	for off := 0; off < l; labels++ {
		off += int(name[off]) + 1
		if off > l {
			return nil // not a name parseFast passed
		}
		nb[off-1] = '.'
	}
	qname := nb[:l]
	if !staticTextOK(&nb, l, labels) {
		return nil
	}
	var z *zone
	zi := 0            // text offset of the zone's name in qname
	var sz *staticZone // z in c.zones
	listed := c.zonesOK
	if listed {
		for i := range c.zones {
			if k := l - len(c.zones[i].z.Name); k >= 0 && (k == 0 || qname[k-1] == '.') && string(qname[k:]) == c.zones[i].z.Name {
				sz = &c.zones[i]
				z, zi = sz.z, k
				break
			}
		}
	} else {
		for i := 0; i < l; i++ {
			if i == 0 || qname[i-1] == '.' {
				if zz, ok := v.st.Zones[string(qname[i:])]; ok {
					z, zi = zz, i
					break
				}
			}
		}
	}
	if z == nil {
		return nil // no zone, or only the root zone: the general path
	}
	names := staticNames{z, z.FastIndex()}
	n, kind := names.find(qname)
	if z.Cuts != nil && zi > 0 {
		// A referral: qname is a delegation point (a name below the apex
		// holding NS records, as Cuts holds them) or below one; the cut
		// nearest the apex delegates, as z.CutFor says.
		cut, cn := -1, n
		for i := 1; i < zi; i++ {
			if qname[i-1] == '.' && names.cut(qname[i:]) {
				cut = i
			}
		}
		if cut > 0 {
			cn, _ = names.find(qname[cut:])
		} else if len(n.Get(dns.TypeNS)) > 0 {
			cut = 0
		}
		if cut >= 0 {
			if z.Signer != nil {
				return nil // DS or its denial: the general path
			}
			return p.staticReferral(query, buf, fq, flags, names, qname, cut, cn)
		}
	}
	var wname []byte // the wildcard's name when it synthesises the answer
	if n == nil {
		if zi == 0 || names.ent(qname, kind) {
			return p.staticNegative(query, buf, fq, flags, z, sz, qname, zi, dns.RcodeSuccess) // NODATA
		}
		if !z.Wild {
			return p.staticNegative(query, buf, fq, flags, z, sz, qname, zi, dns.RcodeNameError)
		}
		// wildcardFor: "*." and the closest encloser.
		ce := 0
		for {
			for ce < l && qname[ce] != '.' {
				ce++
			}
			ce++
			if ce >= zi || names.exists(qname[ce:]) {
				break
			}
		}
		wb := new([2 + 256]byte) // on the stack: it does not escape
		wb[0], wb[1] = '*', '.'
		k := copy(wb[2:], qname[ce:])
		if ce == zi && sz != nil {
			n = sz.wild
		} else {
			n, _ = names.find(wb[:2+k])
		}
		if n == nil {
			return p.staticNegative(query, buf, fq, flags, z, sz, qname, zi, dns.RcodeNameError)
		}
		wname = wb[:2+k]
	}
	// The queried type's RRset, else a CNAME's target's (one link).
	set := n.Get(qtype)
	var cname *dns.CNAME
	var target string
	if len(set) > 0 {
		if staticHooked(v.hooks, z, sz, qname, wname) {
			return nil
		}
	} else {
		cn := n.Get(dns.TypeCNAME)
		if len(cn) == 0 {
			return p.staticNegative(query, buf, fq, flags, z, sz, qname, zi, dns.RcodeSuccess) // NODATA
		}
		c, ok := cn[0].Wire.(*dns.CNAME)
		if !ok {
			return nil
		}
		cname, target = c, c.Target
		if target == string(qname) || !inZone(target, z.Name) {
			return nil
		}
		tn, _ := names.findString(target)
		if tn == nil || names.staticCut(target, tn) {
			return nil
		}
		set = tn.Get(qtype)
		if len(set) == 0 || v.hooks.hookForSynth(target, target, z.Name) != nil {
			return nil
		}
	}

	out := buf[:0]
	out = append(out, query[0], query[1], 0x80|0x04|query[2]&0x01, query[3]&0x10)
	an := len(set)
	if cname != nil {
		an++
	}
	out = append(out, 0, 1, byte(an>>8), byte(an), 0, 0, 0, flags&1)
	out = append(out, query[12:fq.nameEnd+4]...)
	owner := 12 // the question's name: every owner but a CNAME's target
	if cname != nil {
		// The compression map: the question's suffixes, then the target's.
		var comp staticComp
		out = append(out, 0xC0, 12, 0, 5, 0, 1)
		out = appendTTL(out, cname.Hdr.Ttl)
		rdl := len(out)
		out = append(out, 0, 0)
		var ok bool
		if out, ok = comp.name(out, qname, target); !ok {
			return nil
		}
		d := len(out) - rdl - 2
		out[rdl], out[rdl+1] = byte(d>>8), byte(d)
		if owner, ok = comp.find(qname, target); !ok {
			return nil
		}
	}
	for _, r := range set {
		var ok bool
		if out, ok = staticRecord(out, owner, qtype, r.Wire); !ok {
			return nil
		}
	}
	return p.staticOPT(out, query, fq, flags)
}

// staticRecord appends record w of type typ (A, AAAA or TXT), its owner a
// pointer to offset owner, and reports whether it could.
func staticRecord(out []byte, owner int, typ uint16, w dns.RR) ([]byte, bool) {
	out = append(out, 0xC0|byte(owner>>8), byte(owner), byte(typ>>8), byte(typ), 0, 1)
	out = appendTTL(out, w.Header().Ttl)
	switch w := w.(type) {
	case *dns.A:
		a := w.A.To4()
		if a == nil || len(w.A) != 4 && len(w.A) != 16 {
			return nil, false
		}
		out = append(out, 0, 4)
		out = append(out, a...)
	case *dns.AAAA:
		if len(w.AAAA) != 16 {
			return nil, false
		}
		out = append(out, 0, 16)
		out = append(out, w.AAAA...)
	case *dns.TXT:
		rdl := len(out)
		out = append(out, 0, 0)
		for _, s := range w.Txt {
			if len(s) > 255 {
				return nil, false
			}
			for i := 0; i < len(s); i++ {
				if s[i] == '\\' {
					return nil, false // escapes: miekg/dns's packing decides
				}
			}
			out = append(out, byte(len(s)))
			out = append(out, s...)
		}
		d := len(out) - rdl - 2
		out[rdl], out[rdl+1] = byte(d>>8), byte(d)
	default:
		return nil, false
	}
	return out, true
}

// staticReferral writes the referral for qname, at or below the zone cut
// at text offset cut in it (its node n), as the general path does
// (zonedata's Referral method, RFC 1034 section 4.3.2 step 3b): AA clear,
// the cut's NS RRset in the authority section, the addresses of its
// targets inside the zone (glue, A before AAAA, per target in the NS
// RRset's order) in the additional section. A referral that would not fit
// the query's limit (the general path keeps the glue it must and may
// truncate) or names more targets than staticComp holds takes the general
// path.
func (p *Engine) staticReferral(query, buf []byte, fq fastQuery, flags byte, names staticNames, qname []byte, cut int, n *zonedata.Node) []byte {
	z := names.z
	ns := n.Get(dns.TypeNS)
	if len(ns) == 0 || len(ns) > len(staticComp{}.str) {
		return nil
	}
	out := buf[:0]
	out = append(out, query[0], query[1], 0x80|query[2]&0x01, query[3]&0x10)
	out = append(out, 0, 1, 0, 0, byte(len(ns)>>8), byte(len(ns)), 0, 0) // ARCOUNT below
	out = append(out, query[12:fq.nameEnd+4]...)
	var comp staticComp
	owner := 12 + cut
	for _, r := range ns {
		w, ok := r.Wire.(*dns.NS)
		if !ok {
			return nil
		}
		out = append(out, 0xC0|byte(owner>>8), byte(owner), 0, 2, 0, 1)
		out = appendTTL(out, w.Hdr.Ttl)
		rdl := len(out)
		out = append(out, 0, 0)
		if out, ok = comp.name(out, qname, w.Ns); !ok {
			return nil
		}
		d := len(out) - rdl - 2
		out[rdl], out[rdl+1] = byte(d>>8), byte(d)
	}
	ar := 0
	for _, r := range ns {
		t := r.Wire.(*dns.NS).Ns
		if !inZone(t, z.Name) {
			continue
		}
		tn, _ := names.findString(t)
		if tn == nil {
			continue
		}
		for _, typ := range [2]uint16{dns.TypeA, dns.TypeAAAA} {
			for _, a := range tn.Get(typ) {
				at, ok := comp.find(qname, t)
				if !ok {
					return nil
				}
				if out, ok = staticRecord(out, at, typ, a.Wire); !ok {
					return nil
				}
				ar++
			}
		}
	}
	ar += int(flags & 1)
	out[10], out[11] = byte(ar>>8), byte(ar)
	return p.staticOPT(out, query, fq, flags)
}

// staticOPT appends the OPT record when the query had one (echoing its
// EDNS Client Subnet option at scope 0) and returns out, or nil when the
// reply does not fit the query's limit (the general path trims or
// truncates).
func (p *Engine) staticOPT(out, query []byte, fq fastQuery, flags byte) []byte {
	if flags&1 != 0 {
		size := p.maxUDPSize()
		out = append(out, 0, 0, 41, byte(size>>8), byte(size), 0, 0, 0, 0)
		if fq.ecsLen > 0 {
			out = append(out, byte(fq.ecsLen>>8), byte(fq.ecsLen))
			out = append(out, query[fq.ecs:fq.ecs+fq.ecsLen]...)
		} else {
			out = append(out, 0, 0)
		}
	}
	if len(out) > fq.limit {
		return nil
	}
	return out
}

// staticNegative writes an NXDOMAIN (rcode 3) or NODATA (rcode 0) reply
// from zone z (listed as sz, or nil) for qname (the zone's name at text
// offset zi in it): the zone's SOA in the authority section at TTL
// min(SOA TTL, minimum), its owner a pointer into the question and its
// names compressed.
func (p *Engine) staticNegative(query, buf []byte, fq fastQuery, flags byte, z *zone, sz *staticZone, qname []byte, zi, rcode int) []byte {
	out := buf[:0]
	out = append(out, query[0], query[1], 0x80|0x04|query[2]&0x01, query[3]&0x10|byte(rcode))
	out = append(out, 0, 1, 0, 0, 0, 1, 0, flags&1)
	out = append(out, query[12:fq.nameEnd+4]...)
	if sz != nil && sz.neg != nil && sz.negFits(qname) {
		at := len(out)
		out = append(out, sz.neg...)
		for _, i := range sz.negPtr[:sz.negPtrs] {
			o := int(out[at+i]&0x3F)<<8 | int(out[at+i+1]) + zi
			out[at+i], out[at+i+1] = 0xC0|byte(o>>8), byte(o)
		}
		return p.staticOPT(out, query, fq, flags)
	}
	var ok bool
	if out, ok = staticSOA(out, qname, z, zi); !ok {
		return nil
	}
	return p.staticOPT(out, query, fq, flags)
}

// staticSOA appends the SOA record of a negative answer from zone z to out,
// which holds the header and the question qname (the zone's name at text
// offset zi in it).
func staticSOA(out, qname []byte, z *zone, zi int) ([]byte, bool) {
	var comp staticComp
	apex := 12 + zi
	out = append(out, 0xC0|byte(apex>>8), byte(apex), 0, 6, 0, 1)
	out = appendTTL(out, min(z.SOA.TTL, z.SOA.Minimum))
	rdl := len(out)
	out = append(out, 0, 0)
	var ok bool
	if out, ok = comp.name(out, qname, z.SOA.NS); !ok {
		return nil, false
	}
	if out, ok = comp.name(out, qname, z.SOA.Mbox); !ok {
		return nil, false
	}
	for _, v := range [5]uint32{z.SOA.Serial, z.SOA.Refresh, z.SOA.Retry, z.SOA.Expire, z.SOA.Minimum} {
		out = appendTTL(out, v)
	}
	d := len(out) - rdl - 2
	out[rdl], out[rdl+1] = byte(d>>8), byte(d)
	return out, true
}

// negativeSOA prepares sz's negative answers: the SOA record staticSOA
// writes after the question of the apex itself, and where its pointers
// are. For a question zi bytes longer every pointer is zi more, so long as
// the question has no suffix longer than the zone's name that the SOA's
// names hold (negFits): then it shares with them only the suffixes the
// apex has.
func (sz *staticZone) negativeSOA() {
	z := sz.z
	qname := []byte(z.Name)
	out := make([]byte, 12+len(qname)+1+4, 512)
	out, ok := staticSOA(out, qname, z, 0)
	if !ok {
		return
	}
	rr := out[12+len(qname)+1+4:]
	sz.negPtr[0], sz.negPtrs = 0, 1 // the owner
	at := 12                        // the RDATA: two names, then the counters
	for range 2 {
		for rr[at] != 0 && rr[at] < 0xC0 {
			at += 1 + int(rr[at])
		}
		if rr[at] == 0 {
			at++
			continue
		}
		sz.negPtr[sz.negPtrs] = at
		sz.negPtrs++
		at += 2
	}
	for _, s := range [2]string{z.SOA.NS, z.SOA.Mbox} {
		for i := 0; len(s)-i > len(z.Name); i++ {
			if (i == 0 || s[i-1] == '.') && inZone(s[i:], z.Name) {
				sz.negCheck = append(sz.negCheck, s[i:])
			}
		}
	}
	sz.neg = rr
}

// negFits reports whether sz.neg serves question qname: no suffix of
// qname is in sz.negCheck.
func (sz *staticZone) negFits(qname []byte) bool {
	for _, s := range sz.negCheck {
		if k := len(qname) - len(s); k >= 0 && (k == 0 || qname[k-1] == '.') && string(qname[k:]) == s {
			return false
		}
	}
	return true
}

// staticHooked reports whether an answer hook acts on the RRset answering
// qname (owned by the wildcard wname when not nil) in zone z (listed as
// sz, or nil), as hookForSynth decides, without building the names as
// strings.
func staticHooked(h *hookTable, z *zone, sz *staticZone, qname, wname []byte) bool {
	if h == nil {
		return false
	}
	if _, ok := h.byName[string(qname)]; ok {
		return true
	}
	if _, ok := h.byName[string(wname)]; ok && wname != nil {
		return true
	}
	if sz != nil {
		return sz.hooked
	}
	return zoneHooked(h, z.Name)
}

// zoneHooked reports whether a zone-wide hook acts on the names of zone
// (registered for it or for a name enclosing it).
func zoneHooked(h *hookTable, zone string) bool {
	if h == nil || len(h.byZone) == 0 {
		return false
	}
	for n := zone; ; {
		if _, ok := h.byZone[n]; ok {
			return true
		}
		i := strings.IndexByte(n, '.')
		if i < 0 || i == len(n)-1 {
			return false
		}
		n = n[i+1:]
	}
}

// staticCut reports whether name (its node n) is a delegation point or
// below one, as z.CutFor(name) != "" does: name itself by its NS records,
// the names between it and the apex by z.Cuts.
func (s staticNames) staticCut(name string, n *zonedata.Node) bool {
	z := s.z
	if z.Cuts == nil || name == z.Name {
		return false
	}
	if len(n.Get(dns.TypeNS)) > 0 {
		return true
	}
	above := len(name) - len(z.Name) // the apex starts here
	for i := 0; i+1 < above; i++ {
		if name[i] == '.' && s.cut(viewBytes(name[i+1:])) {
			return true
		}
	}
	return false
}

// viewBytes returns s's bytes without a copy, for lookups that only read
// them.
func viewBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// staticNames looks names (lower case, fully qualified, in text form) up
// in zone z for staticReply: in its name index x when it has one (a large
// zone: one probe, which tells a node, an empty non-terminal and a cut
// apart, see zonedata.Index), else in its Nodes, ENTs and Cuts maps.
type staticNames struct {
	z *zone
	x *zonedata.Index
}

// find returns name's node, nil if it has none, and with an index its
// kind (zonedata.IndexNode, IndexENT, IndexCut bits; without, 0).
func (s staticNames) find(name []byte) (*zonedata.Node, uint16) {
	if s.x != nil {
		return s.x.Find(name)
	}
	return s.z.Nodes[string(name)], 0
}

// findString is find for a name held as a string.
func (s staticNames) findString(name string) (*zonedata.Node, uint16) {
	if s.x != nil {
		return s.x.Find(viewBytes(name))
	}
	return s.z.Nodes[name], 0
}

// ent reports whether name, of kind kind (find's), is an empty
// non-terminal.
func (s staticNames) ent(name []byte, kind uint16) bool {
	if s.x != nil {
		return kind&zonedata.IndexENT != 0
	}
	return s.z.ENTs[string(name)]
}

// exists reports whether name is an owner name or an empty non-terminal.
func (s staticNames) exists(name []byte) bool {
	if s.x != nil {
		_, kind := s.x.Find(name)
		return kind&(zonedata.IndexNode|zonedata.IndexENT) != 0
	}
	return s.z.Nodes[string(name)] != nil || s.z.ENTs[string(name)]
}

// cut reports whether name is a delegation point below the apex (in
// z.Cuts).
func (s staticNames) cut(name []byte) bool {
	if s.x != nil {
		_, kind := s.x.Find(name)
		return kind&zonedata.IndexCut != 0
	}
	return s.z.Cuts[string(name)]
}

// inZone reports whether name (lower case, fully qualified) is zone or
// below it, as dns.IsSubDomain(zone, name) does for such names, without
// allocating.
func inZone(name, zone string) bool {
	if zone == "." {
		return true
	}
	return name == zone || len(name) > len(zone) && name[len(name)-len(zone)-1] == '.' && strings.HasSuffix(name, zone)
}

func appendTTL(b []byte, ttl uint32) []byte {
	return append(b, byte(ttl>>24), byte(ttl>>16), byte(ttl>>8), byte(ttl))
}
