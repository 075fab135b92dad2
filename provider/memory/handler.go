package memory

import (
	"net/netip"
	"strings"

	"github.com/miekg/dns"
)

// Limits on answers.
const (
	// maxChain bounds how many CNAMEs one answer follows.
	maxChain = 16
	// advertisedUDPSize is the EDNS buffer size the zone advertises.
	advertisedUDPSize = 1232
	// maxUDPSize caps the client's advertised buffer size.
	maxUDPSize = 4096
)

// ServeDNS implements dns.Handler: it answers r authoritatively from the
// zones the Provider holds and writes the reply to w. See Respond for what
// the answers contain. It never blocks writers of the zone.
func (p *Provider) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	var src netip.Addr
	tcp := false
	if a := w.RemoteAddr(); a != nil {
		if ap, err := netip.ParseAddrPort(a.String()); err == nil {
			src = ap.Addr().Unmap()
		}
		tcp = a.Network() == "tcp"
	}
	m := p.Respond(r, src, tcp)
	if m != nil {
		_ = w.WriteMsg(m)
	}
}

// Respond builds the reply to query req from source address src (used as the
// client for answer hooks when the query carries no EDNS Client Subnet); tcp
// says the reply is not limited to the UDP size. It returns nil for messages
// that deserve no reply (responses). The reply:
//
//   - answers from the closest enclosing zone with the AA bit, REFUSED when no
//     zone encloses the name, NOTIMP for opcodes other than QUERY, FORMERR for
//     a question count other than one or more than one OPT record, and
//     BADVERS for EDNS versions other than 0;
//   - serves SOA and NS at the apex and every stored type; follows CNAME
//     chains inside the zone (at most 16 links, loops stopped); answers ANY
//     with every RRset at the name;
//   - tells NXDOMAIN from NODATA (empty non-terminals are NODATA), with the
//     SOA in the authority section at TTL min(SOA TTL, minimum);
//   - echoes the question exactly as asked (resolvers randomise its case) and
//     names records at the queried name the same way;
//   - echoes an OPT record when the query had one (advertising 1232 bytes,
//     copying the DO bit, echoing EDNS Client Subnet with scope 0, or with the
//     source prefix length when an answer hook ran), and over UDP truncates
//     to the client's buffer size (512 without EDNS, at most 4096) by sending
//     no records with TC set, so the client retries over TCP.
func (p *Provider) Respond(req *dns.Msg, src netip.Addr, tcp bool) *dns.Msg {
	if req == nil || req.Response {
		return nil
	}
	m := new(dns.Msg)
	m.Id = req.Id
	m.Response = true
	m.Opcode = req.Opcode
	if len(req.Question) > 0 {
		m.Question = []dns.Question{req.Question[0]}
	}
	if req.Opcode != dns.OpcodeQuery {
		m.Rcode = dns.RcodeNotImplemented
		return m
	}
	m.RecursionDesired = req.RecursionDesired
	m.CheckingDisabled = req.CheckingDisabled

	// EDNS.
	var opt *dns.OPT
	optCount := 0
	for _, rr := range req.Extra {
		if o, ok := rr.(*dns.OPT); ok {
			optCount++
			opt = o
		}
	}
	if len(req.Question) != 1 || optCount > 1 || (opt != nil && opt.Hdr.Name != ".") {
		m.Rcode = dns.RcodeFormatError
		return m
	}
	var ecs *dns.EDNS0_SUBNET
	if opt != nil {
		ro := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
		ro.SetUDPSize(advertisedUDPSize)
		if opt.Do() {
			ro.SetDo()
		}
		m.Extra = append(m.Extra, ro)
		if opt.Version() != 0 {
			m.Rcode = dns.RcodeBadVers // packed into the OPT's extended rcode
			return m
		}
		for _, o := range opt.Option {
			if s, ok := o.(*dns.EDNS0_SUBNET); ok && ecs == nil {
				ecs = s
			}
		}
		if ecs != nil {
			if !validECS(ecs) {
				m.Rcode = dns.RcodeFormatError
				return m
			}
			ro.Option = append(ro.Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: ecs.Family,
				SourceNetmask: ecs.SourceNetmask, SourceScope: 0, Address: ecs.Address})
		}
	}

	q := req.Question[0]
	if q.Qclass != dns.ClassINET {
		m.Rcode = dns.RcodeRefused
		return m
	}
	switch q.Qtype {
	case dns.TypeAXFR, dns.TypeIXFR:
		m.Rcode = dns.RcodeRefused
		return m
	case dns.TypeOPT:
		m.Rcode = dns.RcodeFormatError
		return m
	}
	qname := strings.ToLower(q.Name)
	s := p.load()
	z := s.closest(qname)
	if z == nil {
		m.Rcode = dns.RcodeRefused
		return m
	}
	m.Authoritative = true
	client := clientPrefix(ecs, src)
	hooked := p.answer(m, z, q, qname, client)
	if hooked && ecs != nil {
		for _, o := range m.Extra[len(m.Extra)-1].(*dns.OPT).Option {
			if s, ok := o.(*dns.EDNS0_SUBNET); ok {
				s.SourceScope = s.SourceNetmask
			}
		}
	}
	if !tcp {
		limit := dns.MinMsgSize
		if opt != nil {
			limit = min(max(int(opt.UDPSize()), dns.MinMsgSize), maxUDPSize)
		}
		if m.Len() > limit {
			m.Truncated = true
			m.Answer, m.Ns = nil, nil
			if opt != nil {
				m.Extra = m.Extra[len(m.Extra)-1:]
			} else {
				m.Extra = nil
			}
		}
	}
	m.Compress = true
	return m
}

// validECS checks an EDNS Client Subnet option as RFC 7871 section 6 asks.
func validECS(e *dns.EDNS0_SUBNET) bool {
	switch e.Family {
	case 1:
		return e.SourceNetmask <= 32 && e.SourceScope == 0
	case 2:
		return e.SourceNetmask <= 128 && e.SourceScope == 0
	}
	return false
}

// clientPrefix is the client subnet for answer hooks.
func clientPrefix(ecs *dns.EDNS0_SUBNET, src netip.Addr) netip.Prefix {
	if ecs != nil {
		if a, ok := netip.AddrFromSlice(ecs.Address); ok {
			a = a.Unmap()
			if ecs.Family == 2 && a.Is4() {
				a = netip.AddrFrom16(a.As16())
			}
			if p, err := a.Prefix(int(ecs.SourceNetmask)); err == nil {
				return p
			}
		}
	}
	if !src.IsValid() {
		return netip.Prefix{}
	}
	src = src.Unmap()
	return netip.PrefixFrom(src, src.BitLen())
}

// closest returns the zone that most closely encloses name, or nil.
func (s *state) closest(name string) *zone {
	for n := name; ; {
		if z, ok := s.zones[n]; ok {
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

// RespondWire answers one query in wire format, as a UDP or TCP server loop
// hands it over: it returns the packed reply, or nil when the message
// deserves none (shorter than a DNS header, or a response). A message that
// does not parse gets FORMERR with the query's ID and opcode and no question.
func (p *Provider) RespondWire(query []byte, src netip.Addr, tcp bool) []byte {
	if len(query) < 12 || query[2]&0x80 != 0 {
		return nil
	}
	req := new(dns.Msg)
	var m *dns.Msg
	if err := req.Unpack(query); err != nil {
		m = new(dns.Msg)
		m.Id = uint16(query[0])<<8 | uint16(query[1])
		m.Response = true
		m.Opcode = int(query[2]>>3) & 0xF
		m.Rcode = dns.RcodeFormatError
	} else {
		m = p.Respond(req, src, tcp)
		if m == nil {
			return nil
		}
	}
	out, err := m.Pack()
	if err != nil {
		// Only possible for records the zone cannot pack; say so plainly.
		f := new(dns.Msg)
		f.Id, f.Response, f.Opcode, f.Rcode = m.Id, true, m.Opcode, dns.RcodeServerFailure
		f.Question = m.Question
		if out, err = f.Pack(); err != nil {
			return nil
		}
	}
	return out
}
