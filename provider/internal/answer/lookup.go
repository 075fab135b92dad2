package answer

import (
	"net/netip"

	"github.com/gslbkit/gslb/internal/zonerecord"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// answerOpts are the choices answer takes from the Provider's configuration
// and the query's transport.
type answerOpts struct {
	minimalANY bool // answer ANY with one RRset (RFC 8482 section 4.1)
	additional bool // add the in-zone addresses of NS, MX and SRV targets
	// pre, when set, is what the first answer hook consulted returned: the
	// fast path asked it already and must not ask twice (see fasthook.go).
	pre *hookAnswer
	p   *Engine // asks the hooks (Provider.callHook)
}

// answer fills m's answer, authority and additional sections for question q
// (its name in lower case) from zone z, as RFC 1034 section 4.3.2 describes
// with RFC 4592's wildcards: a name at or below a delegation point gets a
// referral (AA clear unless a CNAME led there), a name that does not exist
// is synthesised from the wildcard at its closest encloser when there is
// one, CNAMEs are followed inside the zone. It reports whether an answer
// hook was consulted and the scope it reported (see AnswerFunc; 0 when none
// was).
func (v view) answer(m *dns.Msg, z *zone, q dns.Question, client netip.Prefix, o answerOpts) (scope int, consulted bool) {
	name := q.Name
	var visited [maxChain + 1]string
	for i := range maxChain + 1 {
		visited[i] = name
		// RFC 1034 4.3.2 step 3b; DS at the cut belongs to the parent side
		// (RFC 4035 section 3.1.4.1).
		if cut := z.CutFor(name); cut != "" && !(cut == name && q.Qtype == dns.TypeDS) {
			if i == 0 {
				m.Authoritative = false
			}
			z.Referral(m, cut)
			return scope, consulted
		}
		n, src := z.Nodes[name], name // src owns the data: the wildcard when synthesised
		if n == nil && name != z.Name {
			if z.ENTs[name] {
				m.Ns = append(m.Ns, z.NegativeSOA())
				return scope, consulted
			}
			w := z.WildcardFor(name)
			if w == "" {
				m.Rcode = dns.RcodeNameError
				m.Ns = append(m.Ns, z.NegativeSOA())
				return scope, consulted
			}
			n, src = z.Nodes[w], w
		}
		if q.Qtype == dns.TypeANY {
			start := len(m.Answer)
			if name == z.Name && (!o.minimalANY || n == nil) {
				m.Answer = append(m.Answer, z.SOARR())
			}
			if n != nil {
				for _, r := range n.Sorted() {
					if o.minimalANY && len(m.Answer) > start && r.Wire.Header().Rrtype != m.Answer[len(m.Answer)-1].Header().Rrtype {
						break
					}
					m.Answer = append(m.Answer, at(r, name))
				}
			}
			if o.additional {
				z.Additional(m, m.Answer[start:])
			}
			return scope, consulted
		}
		if q.Qtype == dns.TypeSOA && name == z.Name {
			m.Answer = append(m.Answer, z.SOARR())
			return scope, consulted
		}
		var set []rec
		if n != nil {
			set = n.Get(q.Qtype)
		}
		if len(set) > 0 {
			recs := set
			if f := v.hooks.hookForSynth(name, src, z.Name); f != nil && !(name == z.Name && q.Qtype == dns.TypeNS) {
				consulted = true
				var chosen []rec
				chosen, scope = o.p.runHook(f, client, z.Name, name, q.Qtype, set, o.pre)
				o.pre = nil
				if chosen != nil {
					recs = chosen
				}
			}
			start := len(m.Answer)
			for _, r := range recs {
				m.Answer = append(m.Answer, at(r, name))
			}
			if o.additional {
				z.Additional(m, m.Answer[start:])
			}
			return scope, consulted
		}
		var cn []rec
		if n != nil {
			cn = n.Get(dns.TypeCNAME)
		}
		if len(cn) == 0 {
			// NODATA, also at a wildcard (RFC 4592 section 3.3.1).
			m.Ns = append(m.Ns, z.NegativeSOA())
			return scope, consulted
		}
		m.Answer = append(m.Answer, at(cn[0], name))
		target := cn[0].Data()
		for _, seen := range visited[:i+1] {
			if seen == target {
				return scope, consulted
			}
		}
		if !dns.IsSubDomain(z.Name, target) {
			return scope, consulted
		}
		name = target
	}
	return scope, consulted
}

// at returns r's wire form owned by name: r itself, or for a record
// synthesised from a wildcard a copy with the owner replaced.
func at(r rec, name string) dns.RR {
	if r.Wire.Header().Name == name {
		return r.Wire
	}
	c := dns.Copy(r.Wire)
	c.Header().Name = name
	return c
}

// hookInput returns set's records, of zone, as answer hooks receive them.
func hookInput(zone string, set []rec) []libdns.Record {
	in := make([]libdns.Record, len(set))
	for i, r := range set {
		in[i] = r.Typed(zone)
	}
	return in
}

// runHook asks f to choose among set, or takes pre when the fast path
// asked already, and maps the choice back to wire records; nil means "no
// opinion". scope is the hook's (see AnswerFunc).
func (p *Engine) runHook(f AnswerFunc, client netip.Prefix, zone, name string, qtype uint16, set []rec, pre *hookAnswer) (chosen []rec, scope int) {
	typ := dns.TypeToString[qtype]
	var a hookAnswer
	if pre != nil {
		a = *pre
	} else {
		a = p.callHook(f, client, name, typ, hookInput(zone, set))
	}
	out, scope := a.rrs, a.scope
	if len(out) == 0 {
		return nil, scope
	}
	chosen = make([]rec, 0, len(out))
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
			if r.Data() == rr.Data {
				chosen = append(chosen, r)
				found = true
				break
			}
		}
		if found {
			continue
		}
		ttl, err := zonerecord.TTL(rr.TTL)
		if err != nil {
			continue
		}
		_, wire, err := zonerecord.Canonical(o, name, typ, qtype, ttl, rr.Data)
		if err != nil {
			continue
		}
		chosen = append(chosen, rec{Wire: wire})
	}
	if len(chosen) == 0 {
		return nil, scope
	}
	return chosen, scope
}
