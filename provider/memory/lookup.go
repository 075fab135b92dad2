package memory

import (
	"net/netip"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// answer fills m's answer, authority and additional sections for question q
// (its name in lower case) from zone z. It reports whether an answer hook
// chose the answer (hooked) and whether one was consulted at all.
func (v view) answer(m *dns.Msg, z *zone, q dns.Question, client netip.Prefix) (hooked, consulted bool) {
	name := q.Name
	visited := map[string]bool{}
	for range maxChain + 1 {
		visited[name] = true
		n := z.nodes[name]
		if n == nil && name != z.name {
			if !z.ents[name] {
				m.Rcode = dns.RcodeNameError
			}
			m.Ns = append(m.Ns, z.negativeSOA())
			return hooked, consulted
		}
		if q.Qtype == dns.TypeANY {
			if name == z.name {
				m.Answer = append(m.Answer, z.soaRR())
			}
			if n != nil {
				for _, r := range n.sorted() {
					m.Answer = append(m.Answer, r.wire)
				}
			}
			return hooked, consulted
		}
		if q.Qtype == dns.TypeSOA && name == z.name {
			m.Answer = append(m.Answer, z.soaRR())
			return hooked, consulted
		}
		var set []rec
		if n != nil {
			set = n.sets[q.Qtype]
		}
		if len(set) > 0 {
			recs := set
			if f := v.hooks.hookFor(name, z.name); f != nil && !(name == z.name && q.Qtype == dns.TypeNS) {
				consulted = true
				if chosen := runHook(f, client, name, q.Qtype, set); chosen != nil {
					recs, hooked = chosen, true
				}
			}
			for _, r := range recs {
				m.Answer = append(m.Answer, r.wire)
			}
			if q.Qtype == dns.TypeNS {
				z.glue(m, recs)
			}
			return hooked, consulted
		}
		var cn []rec
		if n != nil {
			cn = n.sets[dns.TypeCNAME]
		}
		if len(cn) == 0 {
			// NODATA.
			m.Ns = append(m.Ns, z.negativeSOA())
			return hooked, consulted
		}
		m.Answer = append(m.Answer, cn[0].wire)
		target := cn[0].rr.Data
		if visited[target] || !dns.IsSubDomain(z.name, target) {
			return hooked, consulted
		}
		name = target
	}
	return hooked, consulted
}

// negativeSOA is the SOA for the authority section of NXDOMAIN and NODATA
// answers, its TTL min(SOA TTL, minimum) (RFC 2308).
func (z *zone) negativeSOA() dns.RR {
	s := z.soaRR()
	s.Hdr.Ttl = min(z.soa.TTL, z.soa.Minimum)
	return s
}

// glue adds the in-zone addresses of the name servers in ns.
func (z *zone) glue(m *dns.Msg, ns []rec) {
	for _, r := range ns {
		t := r.rr.Data
		if !dns.IsSubDomain(z.name, t) {
			continue
		}
		if n := z.nodes[t]; n != nil {
			for _, a := range n.sets[dns.TypeA] {
				m.Extra = append(m.Extra, a.wire)
			}
			for _, a := range n.sets[dns.TypeAAAA] {
				m.Extra = append(m.Extra, a.wire)
			}
		}
	}
}

// runHook asks f to choose among set and maps its choice back to wire
// records; nil means "no opinion".
func runHook(f AnswerFunc, client netip.Prefix, name string, qtype uint16, set []rec) []rec {
	in := make([]libdns.Record, len(set))
	for i, r := range set {
		in[i] = r.hook
	}
	typ := dns.TypeToString[qtype]
	out := f(client, name, typ, in)
	if len(out) == 0 {
		return nil
	}
	chosen := make([]rec, 0, len(out))
	for _, o := range out {
		if o == nil {
			continue
		}
		rr := o.RR()
		if rr.Type != typ {
			continue
		}
		found := false
		for _, r := range set {
			if r.rr.Data == rr.Data {
				chosen = append(chosen, r)
				found = true
				break
			}
		}
		if found {
			continue
		}
		ttl, err := ttlSeconds(rr.TTL)
		if err != nil {
			continue
		}
		data, wire, err := canonical(name, typ, qtype, ttl, rr.Data)
		if err != nil {
			continue
		}
		chosen = append(chosen, rec{rr: libdns.RR{Name: rr.Name, TTL: rr.TTL, Type: typ, Data: data}, wire: wire})
	}
	if len(chosen) == 0 {
		return nil
	}
	return chosen
}
