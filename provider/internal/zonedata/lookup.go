package zonedata

import (
	"strings"

	"github.com/miekg/dns"
)

// Closest returns the zone that most closely encloses name, or nil.
func (s *Set) Closest(name string) *Zone {
	for n := name; ; {
		if z, ok := s.Zones[n]; ok {
			return z
		}
		if n == "." || n == "" {
			return nil
		}
		i := strings.IndexByte(n, '.')
		if i < 0 {
			return nil
		}
		if i == len(n)-1 {
			n = "."
		} else {
			n = n[i+1:]
		}
	}
}

// CutFor returns the highest delegation point at or above name (below the
// apex), or "".
func (z *Zone) CutFor(name string) string {
	if z.Cuts == nil {
		return ""
	}
	cut := ""
	for n := name; n != z.Name; {
		if z.Cuts[n] {
			cut = n
		}
		i := strings.IndexByte(n, '.')
		if i < 0 || i == len(n)-1 {
			break
		}
		n = n[i+1:]
	}
	return cut
}

// WildcardFor returns the wildcard that synthesises the answer for name, a
// name that does not exist in the zone: "*." and name's closest encloser
// (RFC 4592 section 3.3.1), when that is an owner name; else "". Existing
// names and empty non-terminals between block it.
func (z *Zone) WildcardFor(name string) string {
	if !z.Wild {
		return ""
	}
	ce := name
	for ce != z.Name {
		i := strings.IndexByte(ce, '.')
		if i < 0 || i == len(ce)-1 {
			return ""
		}
		ce = ce[i+1:]
		if z.Nodes[ce] != nil || z.ENTs[ce] {
			break
		}
	}
	w := "*." + ce
	if z.Nodes[w] == nil {
		return ""
	}
	return w
}

// Referral adds the delegation at cut: its NS records in the authority
// section and their addresses held in the zone (glue) in the additional
// section (RFC 1034 section 4.3.2 step 3b).
func (z *Zone) Referral(m *dns.Msg, cut string) {
	ns := z.Nodes[cut].Get(dns.TypeNS)
	start := len(m.Ns)
	for _, r := range ns {
		m.Ns = append(m.Ns, r.Wire)
	}
	z.Addresses(m, m.Ns[start:])
}

// NegativeSOA is the SOA for the authority section of NXDOMAIN and NODATA
// answers, its TTL min(SOA TTL, minimum) (RFC 2308).
func (z *Zone) NegativeSOA() dns.RR {
	s := z.SOARR()
	s.Hdr.Ttl = min(z.SOA.TTL, z.SOA.Minimum)
	return s
}

// Additional adds the in-zone addresses of the NS, MX and SRV targets among
// rrs (RFC 1035 section 3.3, RFC 2782), glue below a delegation point
// included, as Knot does.
func (z *Zone) Additional(m *dns.Msg, rrs []dns.RR) {
	for _, rr := range rrs {
		switch rr.Header().Rrtype {
		case dns.TypeNS, dns.TypeMX, dns.TypeSRV:
			z.Addresses(m, rrs)
			return
		}
	}
}

// Addresses adds the A and AAAA records of the NS, MX and SRV targets among
// rrs that lie in the zone, each once.
func (z *Zone) Addresses(m *dns.Msg, rrs []dns.RR) {
	for _, rr := range rrs {
		var t string
		switch r := rr.(type) {
		case *dns.NS:
			t = r.Ns
		case *dns.MX:
			t = r.Mx
		case *dns.SRV:
			t = r.Target
		default:
			continue
		}
		if !dns.IsSubDomain(z.Name, t) {
			continue
		}
		n := z.Nodes[t]
		if n == nil {
			continue
		}
		for _, typ := range [2]uint16{dns.TypeA, dns.TypeAAAA} {
		next:
			for _, a := range n.Get(typ) {
				for _, e := range m.Extra {
					if e == a.Wire {
						continue next
					}
				}
				m.Extra = append(m.Extra, a.Wire)
			}
		}
	}
}

// TypesAt returns the types a compact-denial NSEC at name lists: the
// types held at name (at the apex SOA and the signer's key RRsets too),
// those of the wildcard that synthesises name, or none for an empty
// non-terminal.
func (z *Zone) TypesAt(name string) []uint16 {
	n := z.Nodes[name]
	if n == nil && name != z.Name && !z.ENTs[name] {
		if w := z.WildcardFor(name); w != "" {
			n = z.Nodes[w]
		}
	}
	var types []uint16
	if n != nil {
		types = SortedTypes(n, types)
	}
	if name == z.Name {
		types = append(types, dns.TypeSOA, dns.TypeDNSKEY)
		if len(z.Signer.CDS()) > 0 {
			types = append(types, dns.TypeCDS, dns.TypeCDNSKEY)
		}
	}
	return types
}
