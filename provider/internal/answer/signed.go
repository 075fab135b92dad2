package answer

import (
	"slices"
	"time"

	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// Online signing (see docs/dnssec.md). A zone added with a
// ZoneConfig.Signer answers DNSKEY, CDS and CDNSKEY at its apex from the
// signer's keys, NSEC at any name from its compact denial and RRSIG at any
// name with the signatures of what the name holds, and to a query with the
// DO bit it adds an RRSIG to every RRset it is authoritative for, in the
// answer, authority and additional sections (glue below a zone cut is not
// signed, RFC 4035 section 2.2) and denies by compact denial of existence
// (RFC 9824): one NSEC at the name, signed. The answer path builds the unsigned reply as for any zone;
// signReply then signs it, taking signatures from the signer's cache.

// signReply finishes m, the answer path's reply to q from the signed zone
// z; opt is the query's OPT record (nil without EDNS) and ro the reply's.
// It reports ok false when a signature could not be made (the signing
// budget spent, a key that fails): m is then a SERVFAIL with no records.
// complete is false when the additional section lost addresses whose
// signatures could not be made (the reply is right, but not the one to
// cache).
func signReply(m *dns.Msg, z *zone, q dns.Question, opt, ro *dns.OPT, now time.Time) (ok, complete bool) {
	s := z.Signer
	do := opt != nil && opt.Do()
	if q.Qtype == dns.TypeNSEC {
		nsecAnswer(m, z, q.Name, do && !opt.Co())
	}
	var proofs []dns.RR
	if q.Qtype == dns.TypeRRSIG {
		var err error
		if proofs, err = rrsigAnswer(m, z, q.Name, do && !opt.Co(), now); err != nil {
			return failed(m), false
		}
		if !do {
			proofs = nil
		}
	}
	if q.Name == z.Name && len(m.Answer) == 0 && m.Rcode == dns.RcodeSuccess {
		var keys []dns.RR
		switch q.Qtype {
		case dns.TypeDNSKEY:
			keys = s.DNSKEYs()
		case dns.TypeCDS:
			keys = s.CDS()
		case dns.TypeCDNSKEY:
			keys = s.CDNSKEY()
		}
		if len(keys) > 0 {
			m.Answer, m.Ns = append(m.Answer, keys...), m.Ns[:0]
		}
	}
	if !do {
		return true, true
	}
	if opt.Co() {
		ro.SetCo()
	}
	ans, aproofs, err := signSection(m.Answer, z, now)
	if err != nil {
		return failed(m), false
	}
	m.Answer, proofs = ans, append(proofs, aproofs...)
	switch {
	case len(m.Ns) > 0 && m.Ns[0].Header().Rrtype == dns.TypeSOA:
		// NXDOMAIN or NODATA, at the end of a CNAME chain when there is one.
		name := q.Name
		for i := len(m.Answer) - 1; i >= 0; i-- {
			if c, ok := m.Answer[i].(*dns.CNAME); ok {
				name = c.Target
				break
			}
		}
		ttl := m.Ns[0].Header().Ttl
		if m.Rcode == dns.RcodeNameError {
			m.Ns = append(m.Ns, dnssec.NXName(name, ttl))
			if !opt.Co() {
				m.Rcode = dns.RcodeSuccess // NODATA (RFC 9824 section 3.2)
			}
		} else {
			m.Ns = append(m.Ns, dnssec.NoData(name, z.TypesAt(name), ttl))
		}
	case len(m.Answer) == 0 && len(m.Ns) > 0 && m.Ns[0].Header().Rrtype == dns.TypeNS:
		// A referral carries the DS RRset held at the cut, or the NSEC
		// that proves there is none (RFC 4035 section 3.1.4).
		cut := m.Ns[0].Header().Name
		if ds := z.Nodes[cut].Get(dns.TypeDS); len(ds) > 0 {
			for _, r := range ds {
				m.Ns = append(m.Ns, r.Wire)
			}
		} else {
			m.Ns = append(m.Ns, dnssec.NoData(cut, z.TypesAt(cut), z.NegativeSOA().Header().Ttl))
		}
	}
	ns, _, err := signSection(m.Ns, z, now)
	if err != nil {
		return failed(m), false
	}
	m.Ns = append(ns, proofs...)
	complete = signAdditional(m, z, now)
	return true, complete
}

// nsecAnswer answers a query for type NSEC at name with the NSEC that
// compact denial gives at that name (RFC 9824; Knot's mod-onlinesign
// synthesises it too): a NODATA answer cannot be proved for type NSEC,
// since the NSEC at the name lists NSEC in its bitmap. A name that exists
// (or an empty non-terminal, a name a wildcard synthesises, a CNAME's
// owner) gets its NoData NSEC; a name that does not exist gets the NXNAME
// NSEC when lie is set (DO without CO), else keeps its NXDOMAIN. Names at
// or below a zone cut keep their referral.
func nsecAnswer(m *dns.Msg, z *zone, name string, lie bool) {
	if z.CutFor(name) != "" {
		return
	}
	ttl := z.NegativeSOA().Header().Ttl
	var nsec *dns.NSEC
	switch {
	case name == z.Name || z.Nodes[name] != nil || z.ENTs[name] || z.WildcardFor(name) != "":
		nsec = dnssec.NoData(name, z.TypesAt(name), ttl)
	case lie:
		nsec = dnssec.NXName(name, ttl)
	default:
		return
	}
	m.Rcode = dns.RcodeSuccess
	m.Answer, m.Ns, m.Extra = []dns.RR{nsec}, m.Ns[:0], m.Extra[:0]
}

// rrsigAnswer answers a query for type RRSIG at name with the RRSIGs of
// every RRset held there and of the NSEC that compact denial gives there,
// in type order, as BIND answers it from a signed zone: a NODATA answer
// cannot be proved for type RRSIG, since the NSEC at the name lists RRSIG.
// The RRSIGs are not signed themselves (RFC 4035 section 2.2). A name a
// wildcard synthesises gets the wildcard's RRSIGs, owned by the name, and
// proofs, the signed NSEC that proves the name does not exist (RFC 4035
// section 3.1.3.3), for the authority section of a DO reply. A hook's
// RRset is signed whole (RRSIGs are not chosen per client), a CNAME's
// owner gets its own RRSIGs (the chain is not followed). A name that does
// not exist gets the NXNAME NSEC's RRSIG when lie is set (DO without CO),
// else keeps its NXDOMAIN; names at or below a zone cut keep their
// referral. err is a signature that could not be made.
func rrsigAnswer(m *dns.Msg, z *zone, name string, lie bool, now time.Time) (proofs []dns.RR, err error) {
	if z.CutFor(name) != "" {
		return nil, nil
	}
	ttl := z.NegativeSOA().Header().Ttl
	var sets []dns.RR
	switch {
	case name == z.Name || z.Nodes[name] != nil || z.ENTs[name] || z.WildcardFor(name) != "":
		types := append(z.TypesAt(name), dns.TypeNSEC)
		slices.Sort(types)
		n := z.Nodes[name]
		if n == nil && name != z.Name && !z.ENTs[name] {
			n = z.Nodes[z.WildcardFor(name)]
		}
		for _, t := range types {
			switch {
			case t == dns.TypeNSEC:
				sets = append(sets, dnssec.NoData(name, z.TypesAt(name), ttl))
			case t == dns.TypeSOA && name == z.Name:
				sets = append(sets, z.SOARR())
			case t == dns.TypeDNSKEY && name == z.Name:
				for _, k := range z.Signer.DNSKEYs() {
					sets = append(sets, dns.Copy(k))
				}
			case t == dns.TypeCDS && name == z.Name:
				for _, k := range z.Signer.CDS() {
					sets = append(sets, dns.Copy(k))
				}
			case t == dns.TypeCDNSKEY && name == z.Name:
				for _, k := range z.Signer.CDNSKEY() {
					sets = append(sets, dns.Copy(k))
				}
			case n != nil:
				for _, r := range n.Get(t) {
					// A copy: signing packs the record (miekg writes its
					// Rdlength), and the zone's records are shared.
					c := dns.Copy(r.Wire)
					c.Header().Name = name
					sets = append(sets, c)
				}
			}
		}
	case lie:
		sets = []dns.RR{dnssec.NXName(name, ttl)}
	default:
		return nil, nil
	}
	signed, proofs, err := signSection(sets, z, now)
	if err != nil {
		return nil, err
	}
	sigs := signed[:0]
	for _, rr := range signed {
		if rr.Header().Rrtype == dns.TypeRRSIG {
			sigs = append(sigs, rr)
		}
	}
	m.Rcode = dns.RcodeSuccess
	m.Answer, m.Ns, m.Extra = sigs, m.Ns[:0], m.Extra[:0]
	return proofs, nil
}

// signAdditional signs the additional section's addresses the zone is
// authoritative for (RFC 4035 section 3.1.1); glue, at or below a zone
// cut, stays unsigned (RFC 4035 section 2.2). An RRset whose signature
// cannot be made is dropped with its signatures rather than served
// unsigned (the section is optional, RFC 2181 section 9), and complete is
// then false. m.Extra holds no OPT record yet.
func signAdditional(m *dns.Msg, z *zone, now time.Time) (complete bool) {
	if len(m.Extra) == 0 {
		return true
	}
	complete = true
	out := make([]dns.RR, 0, len(m.Extra)*2)
	for i := 0; i < len(m.Extra); {
		h := m.Extra[i].Header()
		j := i + 1
		for j < len(m.Extra) && m.Extra[j].Header().Rrtype == h.Rrtype && m.Extra[j].Header().Name == h.Name {
			j++
		}
		set := m.Extra[i:j]
		i = j
		if z.CutFor(h.Name) != "" {
			out = append(out, set...) // glue
			continue
		}
		sigs, err := z.Signer.Sign(set, now)
		if err != nil {
			complete = false
			continue
		}
		out = append(out, set...)
		for _, s := range sigs {
			out = append(out, s)
		}
	}
	m.Extra = out
	return complete
}

// failed turns m into a SERVFAIL with no records and returns false.
func failed(m *dns.Msg) bool {
	m.Rcode = dns.RcodeServerFailure
	m.Answer, m.Ns, m.Extra = nil, nil, nil
	return false
}

// signSection returns rrs with each RRset followed by its RRSIGs (the NS
// RRset of a delegation excepted); an RRset synthesised from a wildcard is
// signed as the wildcard's (RFC 4035 section 5.3.2), and proofs are the
// signed NSEC records that prove the names asked do not exist, for the
// authority section (RFC 4035 section 3.1.3.3).
func signSection(rrs []dns.RR, z *zone, now time.Time) (out, proofs []dns.RR, err error) {
	if len(rrs) == 0 {
		return rrs, nil, nil
	}
	out = make([]dns.RR, 0, len(rrs)*2)
	for i := 0; i < len(rrs); {
		h := rrs[i].Header()
		j := i + 1
		for j < len(rrs) && rrs[j].Header().Rrtype == h.Rrtype && rrs[j].Header().Name == h.Name {
			j++
		}
		set := rrs[i:j]
		out = append(out, set...)
		if h.Rrtype == dns.TypeNS && h.Name != z.Name || h.Rrtype == dns.TypeRRSIG {
			i = j
			continue // delegation NS: not authoritative; an RRSIG: never signed (RFC 4035 section 2.2)
		}
		w := ""
		if z.Nodes[h.Name] == nil && h.Name != z.Name && !z.ENTs[h.Name] && h.Rrtype != dns.TypeNSEC {
			w = z.WildcardFor(h.Name)
		}
		signed := set
		if w != "" {
			signed = make([]dns.RR, len(set))
			for k, rr := range set {
				signed[k] = dns.Copy(rr)
				signed[k].Header().Name = w
			}
		}
		sigs, err := z.Signer.Sign(signed, now)
		if err != nil {
			return nil, nil, err
		}
		for _, sig := range sigs {
			if w != "" {
				c := *sig
				c.Hdr.Name = h.Name
				out = append(out, &c)
			} else {
				out = append(out, sig)
			}
		}
		if w != "" {
			nsec, ok := dnssec.WildcardProof(h.Name, w[2:], z.NegativeSOA().Header().Ttl)
			if ok && !slices.ContainsFunc(proofs, func(r dns.RR) bool { return r.Header().Name == nsec.Hdr.Name }) {
				psigs, err := z.Signer.Sign([]dns.RR{nsec}, now)
				if err != nil {
					return nil, nil, err
				}
				proofs = append(proofs, nsec)
				for _, s := range psigs {
					proofs = append(proofs, s)
				}
			}
		}
		i = j
	}
	return out, proofs, nil
}

// signedMark is what a fast-path entry of a signed zone's reply keeps to
// know when its signatures must be looked at again: a key change
// (dnssec.Signer.Generation) or the time until which they are reused.
type signedMark struct {
	s     *dnssec.Signer
	gen   uint64
	until int64 // Unix seconds
}

// fresh reports whether a cached signed reply may still be served.
func (k *signedMark) fresh() bool {
	return k.s.Generation() == k.gen && time.Now().Unix() < k.until
}

// markFor returns the entry that marks a cached reply to the question in
// key (the fast cache's key, the name nameLen bytes of wire form) as a
// signed zone's, reused for dnssec.Signer.Reuse; nil when the zone is not
// signed. The hooked entry's pointer carries the mark, so the cache's
// entries do not grow for unsigned zones.
func (v view) markFor(key []byte, nameLen int) *hookedEntry {
	name, ok := wireName(key[:nameLen])
	if !ok {
		return nil
	}
	z := v.st.Closest(name)
	if z == nil || z.Signer == nil {
		return nil
	}
	return &hookedEntry{mark: &signedMark{s: z.Signer, gen: z.Signer.Generation(), until: time.Now().Add(z.Signer.Reuse()).Unix()}}
}

// signedDO reports whether z is signed and a fast-path key asks for DNSSEC
// records (the DO bit of its last byte).
func signedDO(z *zone, key []byte) bool {
	return z.Signer != nil && len(key) > 0 && key[len(key)-1]&0x80 != 0
}

// hookSigs returns the signature store for a hooked question's records
// (set, owned by src: the name asked, or the wildcard that synthesises
// it), or nil when the fast path leaves it to the general path (more than
// 64 records). A wildcard's store is shared by every name it synthesises,
// one per wildcard and type in the cache: its packed RRSIGs (the
// wildcard's signatures, owned by the question's name through a pointer)
// are the same bytes for all of them, so a flood of names does not
// multiply them.
func (c *fastCache) hookSigs(s *dnssec.Signer, set []rec, src string, qtype uint16, wildcard bool) *dnssec.Subsets {
	rrs := make([]dns.RR, len(set))
	for i, r := range set {
		rrs[i] = r.Wire
	}
	if !wildcard {
		return s.NewSubsets(rrs)
	}
	k := wildKey{src, qtype}
	c.mu.RLock()
	h, ok := c.wsigs[k]
	c.mu.RUnlock()
	if ok {
		return h
	}
	h = s.NewSubsets(rrs)
	c.mu.Lock()
	if old, ok := c.wsigs[k]; ok {
		h = old
	} else {
		if c.wsigs == nil {
			c.wsigs = map[wildKey]*dnssec.Subsets{}
		}
		c.wsigs[k] = h
	}
	c.mu.Unlock()
	return h
}

// wildKey names a wildcard's RRset of one type.
type wildKey struct {
	owner string
	qtype uint16
}

// proof is the authority section of a signed answer synthesised from a
// wildcard, as the general path packed it: the NSEC that proves the name
// asked does not exist and its RRSIGs (RFC 4035 section 3.1.3.3). The
// section's names point into the question, whose offset is fixed, and
// into the section itself (an RRSIG's owner is the NSEC's): those pointers
// move with the section's start, which the chosen records decide.
type proof struct {
	b     []byte   // the section, as packed at offset at
	at    int      // where it started in the reply it was taken from
	ptrs  []uint16 // offsets in b of the pointers into b itself
	count int      // its records
	mark  signedMark
}

// appendTo appends the section to out, at offset len(out), its inner
// pointers moved there; ok is false when a pointer would not fit.
func (p *proof) appendTo(out []byte) ([]byte, bool) {
	base := len(out)
	out = append(out, p.b...)
	for _, o := range p.ptrs {
		i := base + int(o)
		v := (int(out[i]&0x3F)<<8 | int(out[i+1])) + base - p.at
		if v < 0 || v >= 0x4000 {
			return out[:base], false
		}
		out[i], out[i+1] = 0xC0|byte(v>>8), byte(v)
	}
	return out, true
}

// newProof reads the authority section of reply, a wildcard's signed
// answer: records from off on, count of them, NSEC and RRSIG records only
// (names in their data are not compressed, RFC 4034 sections 3.1.7 and
// 4.1.1), their owners pointing into the question's name (which ends at
// nameEnd) or into the section. It returns nil for anything else.
func newProof(reply []byte, off, count, nameEnd int, z *zone) *proof {
	p := &proof{at: off, count: count}
	start := off
	for range count {
		// The owner: labels, ending in a zero or a pointer.
		for {
			if off >= len(reply) {
				return nil
			}
			l := int(reply[off])
			if l&0xC0 == 0xC0 {
				if off+1 >= len(reply) {
					return nil
				}
				if t := int(l&0x3F)<<8 | int(reply[off+1]); t >= start {
					p.ptrs = append(p.ptrs, uint16(off-start))
				} else if t < 12 || t >= nameEnd {
					return nil
				}
				off += 2
				break
			}
			if l&0xC0 != 0 {
				return nil
			}
			off += 1 + l
			if l == 0 {
				break
			}
		}
		if off+10 > len(reply) {
			return nil
		}
		typ := uint16(reply[off])<<8 | uint16(reply[off+1])
		if typ != dns.TypeNSEC && typ != dns.TypeRRSIG {
			return nil
		}
		off += 10 + (int(reply[off+8])<<8 | int(reply[off+9]))
		if off > len(reply) {
			return nil
		}
	}
	p.b = append([]byte(nil), reply[start:off]...)
	p.mark = signedMark{s: z.Signer, gen: z.Signer.Generation(), until: time.Now().Add(z.Signer.Reuse()).Unix()}
	return p
}

// skipRRs returns the offset past count records of msg from off, or -1.
func skipRRs(msg []byte, off, count int) int {
	for range count {
		for {
			if off >= len(msg) {
				return -1
			}
			l := int(msg[off])
			if l&0xC0 == 0xC0 {
				off += 2
				break
			}
			if l&0xC0 != 0 {
				return -1
			}
			off += 1 + l
			if l == 0 {
				break
			}
		}
		if off+10 > len(msg) {
			return -1
		}
		off += 10 + (int(msg[off+8])<<8 | int(msg[off+9]))
	}
	if off > len(msg) {
		return -1
	}
	return off
}

// chosen returns the records of h.in that an answer built from got holds,
// as a bit mask (bit i: h.in[i]), as respond builds it: a subslice of h.in
// by position, other records by type and data, every record when none is
// held. Only signed entries ask (at most 64 records).
func (h *hookedEntry) chosen(got []libdns.Record) uint64 {
	var m uint64
	if len(got) > 0 && len(got) <= len(h.in) {
		for j := range len(h.in) - len(got) + 1 {
			if &h.in[j] == &got[0] {
				return (1<<uint(len(got)) - 1) << uint(j)
			}
		}
	}
	for _, r := range got {
		if j := h.index(r); j >= 0 {
			m |= 1 << uint(j)
		}
	}
	if m == 0 {
		m = 1<<uint(len(h.in)) - 1
	}
	return m
}
