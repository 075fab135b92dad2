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
// signer's keys, and to a query with the DO bit it adds an RRSIG to every
// RRset of the answer and authority sections it is authoritative for (the
// glue and the additional addresses are not signed) and denies by compact
// denial of existence (RFC 9824): one NSEC at the name, signed. The
// answer path builds the unsigned reply as for any zone; signReply then
// signs it, taking signatures from the signer's cache.

// signReply finishes m, the answer path's reply to q from the signed zone
// z; opt is the query's OPT record (nil without EDNS) and ro the reply's.
// It reports false when a signature could not be made (the signing
// budget spent, a key that fails): m is then a SERVFAIL with no records.
func signReply(m *dns.Msg, z *zone, q dns.Question, opt, ro *dns.OPT, now time.Time) bool {
	s := z.Signer
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
	if opt == nil || !opt.Do() {
		return true
	}
	if opt.Co() {
		ro.SetCo()
	}
	ans, proofs, err := signSection(m.Answer, z, now)
	if err != nil {
		return failed(m)
	}
	m.Answer = ans
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
		return failed(m)
	}
	m.Ns = append(ns, proofs...)
	return true
}

// failed turns m into a SERVFAIL with no records.
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
		if h.Rrtype == dns.TypeNS && h.Name != z.Name {
			i = j
			continue // delegation NS: not authoritative, not signed
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

// newHookSigs returns the signature store for a hooked question's
// records, or nil when the fast path leaves it to the general path: a
// wildcard's records (the answer carries a proof the entry does not
// build) or more than 64.
func newHookSigs(s *dnssec.Signer, set []rec, wildcard bool) *dnssec.Subsets {
	if wildcard {
		return nil
	}
	rrs := make([]dns.RR, len(set))
	for i, r := range set {
		rrs[i] = r.Wire
	}
	return s.NewSubsets(rrs)
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
