package dnssec

import (
	"slices"

	"github.com/miekg/dns"
)

// Compact denial of existence (RFC 9824). An online signer never holds a
// chain of NSEC records: every negative answer carries one NSEC made for
// the name asked, whose "next" name is the name's immediate successor in
// canonical order ("\000.<name>", RFC 4470 section 3), so it covers no
// other name and a resolver cannot walk the zone with it.

// TypeNXNAME is the NXNAME meta type (128) that marks a name that does not
// exist in a compact-denial NSEC type bitmap (RFC 9824 section 3.2).
const TypeNXNAME = dns.TypeNXNAME

// NoData returns the NSEC for a name that exists but holds no record of the
// type asked: owner name, next name its immediate successor, and the type
// bitmap types plus RRSIG and NSEC (RFC 9824 section 3.1). ttl is the
// negative TTL (RFC 9077: the smaller of the SOA's TTL and MINIMUM).
func NoData(name string, types []uint16, ttl uint32) *dns.NSEC {
	bm := make([]uint16, 0, len(types)+2)
	bm = append(bm, types...)
	bm = append(bm, dns.TypeRRSIG, dns.TypeNSEC)
	slices.Sort(bm)
	bm = slices.Compact(bm)
	return &dns.NSEC{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeNSEC, Class: dns.ClassINET, Ttl: ttl},
		NextDomain: Successor(name), TypeBitMap: bm}
}

// NXName returns the NSEC that denies a name that does not exist: the
// NoData form with the bitmap RRSIG, NSEC and NXNAME (RFC 9824 section
// 3.2). The answer's rcode is NOERROR unless the query set the Compact
// Answers OK flag (RFC 9824 section 4), when it is NXDOMAIN.
func NXName(name string, ttl uint32) *dns.NSEC {
	return NoData(name, []uint16{TypeNXNAME}, ttl)
}

// Successor returns the name immediately after name in DNS canonical order
// (RFC 4034 section 6.1): "\000." prepended (RFC 4470 section 3.1.2), or,
// when that would be longer than 255 octets, name with the last octet of
// its first label incremented (or a "\000" appended to that label when it
// is \255 and the label has room); name itself when neither is possible.
func Successor(name string) string {
	wire, ok := toWire(name)
	if !ok {
		return name
	}
	if len(wire)+2 <= 255 {
		return "\\000." + dns.Fqdn(name)
	}
	if wire[0] == 0 {
		return name
	}
	l := int(wire[0])
	if wire[l] < 0xFF {
		wire[l]++
		return fromWire(wire, name)
	}
	return name
}

// WildcardProof returns the NSEC that a wildcard answer needs (RFC 4035
// section 3.1.3.3): proof that no name closer to qname than the wildcard's
// closest encloser ce exists. It covers the next closer name (the child of
// ce on the way to qname) and every name below it, and nothing else: its
// owner is the next closer name's immediate predecessor among ce's
// children (the last octet of its first label decremented, the label
// padded with \255 octets to its largest length) and its next name the
// next closer name with a "\000" octet appended to its first label (RFC
// 4470 section 3, minimally covering). Its bitmap is RRSIG and NSEC. ok is
// false when qname is not below ce or the next closer name's first label
// ends in \000 or is 63 octets long (no such neighbours exist).
func WildcardProof(qname, ce string, ttl uint32) (nsec *dns.NSEC, ok bool) {
	if !dns.IsSubDomain(ce, qname) || dns.CountLabel(qname) <= dns.CountLabel(ce) {
		return nil, false
	}
	labels := dns.SplitDomainName(qname)
	nc := dns.Fqdn(labels[len(labels)-dns.CountLabel(ce)-1] + "." + ce)
	if ce == "." {
		nc = dns.Fqdn(labels[len(labels)-1])
	}
	w, good := toWire(nc)
	if !good {
		return nil, false
	}
	l := int(w[0])
	if l == 0 || l >= 63 || w[l] == 0 {
		return nil, false
	}
	rest := w[1+l:]
	// next: the label with a zero octet appended.
	next := append([]byte{byte(l + 1)}, w[1:1+l]...)
	next = append(append(next, 0), rest...)
	// owner: last octet decremented, padded with 0xFF up to 63 octets or
	// the 255-octet name limit.
	pad := min(63-l, 255-len(w))
	own := append([]byte{byte(l + pad)}, w[1:1+l]...)
	own[l]--
	for range pad {
		own = append(own, 0xFF)
	}
	own = append(own, rest...)
	return &dns.NSEC{Hdr: dns.RR_Header{Name: fromWire(own, nc), Rrtype: dns.TypeNSEC, Class: dns.ClassINET, Ttl: ttl},
		NextDomain: fromWire(next, nc), TypeBitMap: []uint16{dns.TypeRRSIG, dns.TypeNSEC}}, true
}

// toWire packs a presentation-form name.
func toWire(name string) ([]byte, bool) {
	b := make([]byte, 256)
	n, err := dns.PackDomainName(dns.Fqdn(name), b, 0, nil, false)
	if err != nil {
		return nil, false
	}
	return b[:n], true
}

// fromWire unpacks a wire-form name, or returns fallback.
func fromWire(w []byte, fallback string) string {
	s, _, err := dns.UnpackDomainName(w, 0)
	if err != nil {
		return fallback
	}
	return s
}
