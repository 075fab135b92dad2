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
// zones the Provider holds and writes the reply to w, in the same bytes
// RespondWire produces. It never blocks writers of the zone.
func (p *Provider) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	var src netip.Addr
	tcp := false
	if a := w.RemoteAddr(); a != nil {
		if ap, err := netip.ParseAddrPort(a.String()); err == nil {
			src = ap.Addr().Unmap()
		}
		tcp = a.Network() == "tcp"
	}
	m, asked, _ := p.respond(p.view(), r, src, tcp)
	if m == nil {
		return
	}
	if out := pack(m, asked); out != nil {
		_, _ = w.Write(out)
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
//   - echoes the question exactly as asked (resolvers randomise its case);
//     record names are lower case (on the wire, RespondWire and the server
//     compress them against the question, as most servers do);
//   - echoes an OPT record when the query had one (advertising 1232 bytes,
//     copying the DO bit, echoing EDNS Client Subnet with scope 0, or with the
//     source prefix length when an answer hook ran), and over UDP truncates
//     to the client's buffer size (512 without EDNS, at most 4096) by sending
//     no records with TC set, so the client retries over TCP.
func (p *Provider) Respond(req *dns.Msg, src netip.Addr, tcp bool) *dns.Msg {
	m, asked, _ := p.respond(p.view(), req, src, tcp)
	if m != nil && len(m.Question) == 1 {
		m.Question[0].Name = asked
	}
	return m
}

// respond builds the reply with the question name in lower case; asked is
// the name as the query spelled it. cacheable says the reply depends only on
// the question, the zone and the EDNS shape (no answer hook consulted, no
// client subnet), so the fast path may reuse its bytes.
func (p *Provider) respond(v view, req *dns.Msg, src netip.Addr, tcp bool) (m *dns.Msg, asked string, cacheable bool) {
	if req == nil || req.Response {
		return nil, "", false
	}
	m = new(dns.Msg)
	m.Id = req.Id
	m.Response = true
	m.Opcode = req.Opcode
	if len(req.Question) > 0 {
		q := req.Question[0]
		asked = q.Name
		q.Name = strings.ToLower(q.Name)
		m.Question = []dns.Question{q}
	}
	if req.Opcode != dns.OpcodeQuery {
		m.Rcode = dns.RcodeNotImplemented
		return m, asked, false
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
		return m, asked, false
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
			return m, asked, false
		}
		for _, o := range opt.Option {
			if s, ok := o.(*dns.EDNS0_SUBNET); ok && ecs == nil {
				ecs = s
			}
		}
		if ecs != nil {
			if !validECS(ecs) {
				m.Rcode = dns.RcodeFormatError
				return m, asked, false
			}
			ro.Option = append(ro.Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: ecs.Family,
				SourceNetmask: ecs.SourceNetmask, SourceScope: 0, Address: ecs.Address})
		}
	}

	q := m.Question[0]
	if q.Qclass != dns.ClassINET {
		m.Rcode = dns.RcodeRefused
		return m, asked, false
	}
	switch q.Qtype {
	case dns.TypeAXFR, dns.TypeIXFR:
		m.Rcode = dns.RcodeRefused
		return m, asked, false
	case dns.TypeOPT:
		m.Rcode = dns.RcodeFormatError
		return m, asked, false
	}
	z := v.st.closest(q.Name)
	if z == nil {
		m.Rcode = dns.RcodeRefused
		return m, asked, false
	}
	m.Authoritative = true
	hooked, consulted := v.answer(m, z, q, clientPrefix(ecs, src))
	if hooked && ecs != nil {
		for _, o := range m.Extra[len(m.Extra)-1].(*dns.OPT).Option {
			if s, ok := o.(*dns.EDNS0_SUBNET); ok {
				s.SourceScope = s.SourceNetmask
			}
		}
	}
	m.Compress = true // before Len, which then counts compressed bytes
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
	return m, asked, !consulted && ecs == nil && !tcp && !m.Truncated
}

// pack packs a reply built by respond and writes the question name as the
// query spelled it over the lower-case one (same length on the wire), so
// names compressed against the question read as asked. It returns nil if
// the reply cannot be packed even as SERVFAIL.
func pack(m *dns.Msg, asked string) []byte {
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
	if len(m.Question) == 1 && len(out) > 12 {
		if _, err := dns.PackDomainName(asked, out, 12, nil, false); err != nil {
			return nil
		}
	}
	return out
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
// It is the general path; the server's UDP fast path produces the same bytes.
func (p *Provider) RespondWire(query []byte, src netip.Addr, tcp bool) []byte {
	out, _ := p.respondWire(p.view(), query, src, tcp)
	return out
}

// view is one consistent pair of zone state and answer hooks.
type view struct {
	st    *state
	hooks *hookTable
}

func (p *Provider) view() view { return view{st: p.load(), hooks: p.hooks.Load()} }

func (p *Provider) respondWire(v view, query []byte, src netip.Addr, tcp bool) ([]byte, bool) {
	if len(query) < 12 || query[2]&0x80 != 0 {
		return nil, false
	}
	req := new(dns.Msg)
	if err := req.Unpack(query); err != nil {
		m := new(dns.Msg)
		m.Id = uint16(query[0])<<8 | uint16(query[1])
		m.Response = true
		m.Opcode = int(query[2]>>3) & 0xF
		m.Rcode = dns.RcodeFormatError
		out, err := m.Pack()
		if err != nil {
			return nil, false
		}
		return out, false
	}
	m, asked, cacheable := p.respond(v, req, src, tcp)
	if m == nil {
		return nil, false
	}
	return pack(m, asked), cacheable
}
