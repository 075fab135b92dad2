package answer

import (
	"net/netip"
	"strings"
	"time"

	"github.com/gslbkit/gslb/internal/dnswire"
	"github.com/miekg/dns"
)

// Limits on answers.
const (
	// maxChain bounds how many CNAMEs one answer follows.
	maxChain = 16
	// DefaultMaxUDPSize is the default of Engine.MaxUDPSize: 1232 bytes,
	// DNS Flag Day 2020's size (memory.DefaultMaxUDPSize).
	DefaultMaxUDPSize = 1232
)

// respond builds the reply with the question name in lower case; asked is
// the name as the query spelled it. cacheable says the reply depends only on
// the question, the zone, the EDNS shape and the transport (no answer hook
// consulted, no truncation or trimming), so the fast path may reuse its
// bytes (with an EDNS Client Subnet option, once the echoed option is cut).
//
// pre, when not nil, is the answer the first answer hook consulted gave
// already (the fast path's, see fasthook.go): used instead of asking again.
func (p *Engine) respond(v view, req *dns.Msg, src netip.Addr, tcp bool, pre *hookAnswer) (m *dns.Msg, asked string, cacheable bool) {
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

	// EDNS: an OPT in the reply to any query that had one (RFC 6891 6.1.1).
	var opt, ro *dns.OPT
	optCount := 0
	for _, rr := range req.Extra {
		if o, ok := rr.(*dns.OPT); ok {
			optCount++
			opt = o
		}
	}
	if opt != nil {
		ro = &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
		ro.SetUDPSize(uint16(p.maxUDPSize()))
		if opt.Do() {
			ro.SetDo()
		}
	}
	finish := func(rcode int) (*dns.Msg, string, bool) {
		m.Rcode = rcode // BADVERS goes into the OPT's extended rcode
		if ro != nil {
			m.Extra = append(m.Extra, ro)
		}
		return m, asked, false
	}
	if req.Opcode != dns.OpcodeQuery {
		return finish(dns.RcodeNotImplemented)
	}
	m.RecursionDesired = req.RecursionDesired
	m.CheckingDisabled = req.CheckingDisabled
	if len(req.Question) != 1 || optCount > 1 || (opt != nil && opt.Hdr.Name != ".") {
		return finish(dns.RcodeFormatError)
	}
	var ecs *dns.EDNS0_SUBNET
	if opt != nil {
		if opt.Version() != 0 {
			return finish(dns.RcodeBadVers)
		}
		for _, o := range opt.Option {
			if s, ok := o.(*dns.EDNS0_SUBNET); ok && ecs == nil {
				ecs = s
			}
		}
		if ecs != nil {
			if !validECS(ecs) {
				return finish(dns.RcodeFormatError)
			}
			ro.Option = append(ro.Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: ecs.Family,
				SourceNetmask: ecs.SourceNetmask, SourceScope: 0, Address: ecs.Address})
		}
	}

	q := m.Question[0]
	if q.Qclass != dns.ClassINET {
		return finish(dns.RcodeRefused)
	}
	switch q.Qtype {
	case dns.TypeAXFR, dns.TypeIXFR:
		if q.Qtype == dns.TypeAXFR && !tcp {
			return finish(dns.RcodeNotImplemented) // no AXFR over UDP, as Knot
		}
		return finish(dns.RcodeRefused)
	}
	z := v.st.Closest(q.Name)
	if z == nil {
		if ro != nil { // Extended DNS Error 20, as Knot sends (RFC 8914)
			ro.Option = append(ro.Option, &dns.EDNS0_EDE{InfoCode: dns.ExtendedErrorCodeNotAuthoritative})
		}
		return finish(dns.RcodeRefused)
	}
	m.Authoritative = true
	if z.Signer != nil && q.Qtype == dns.TypeNXNAME {
		return finish(dns.RcodeFormatError) // RFC 9824 section 3.5
	}
	o := answerOpts{minimalANY: !tcp && !p.FullANYOverUDP, additional: !p.NoAdditional, pre: pre, p: p}
	scope, consulted := v.answer(m, z, q, clientPrefix(ecs, src), o)
	signFailed := false
	if z.Signer != nil {
		ok, complete := signReply(m, z, q, opt, ro, time.Now())
		signFailed = !ok || !complete
	}
	if consulted && ecs != nil {
		ro.Option[0].(*dns.EDNS0_SUBNET).SourceScope = uint8(min(max(scope, 0), int(ecs.SourceNetmask)))
	}
	if ro != nil {
		m.Extra = append(m.Extra, ro)
	}
	m.Compress = true // before Len, which then counts compressed bytes
	trimmed := false
	if !tcp {
		limit := dns.MinMsgSize
		if opt != nil {
			limit = min(max(int(opt.UDPSize()), dns.MinMsgSize), p.maxUDPSize())
		}
		// m.Len() can count more than Pack writes (12 bytes more for
		// the apex's six RRSIGs answering a query for type RRSIG): past
		// it, the packed size decides, as on the fast path.
		over := func() bool {
			if m.Len() <= limit {
				return false
			}
			b, err := m.Pack()
			return err != nil || len(b) > limit
		}
		if over() {
			referral := len(m.Answer) == 0 && len(m.Ns) > 0 && m.Ns[0].Header().Rrtype == dns.TypeNS
			if len(m.Extra) > 0 && m.Extra[0] != dns.RR(ro) {
				// Additional addresses are optional (RFC 2181 section 9),
				// signed ones with their RRSIGs (RFC 4035 section 3.1.1);
				// glue in a referral is not (RFC 9471).
				kept := m.Extra[:0]
				for _, rr := range m.Extra {
					if rr != dns.RR(ro) && referral && z.CutFor(rr.Header().Name) != "" {
						kept = append(kept, rr)
					}
				}
				if ro != nil {
					kept = append(kept, ro)
				}
				m.Extra, trimmed = kept, len(kept) < len(m.Extra)
			}
			if over() {
				m.Truncated = true
				m.Answer, m.Ns, m.Extra = nil, nil, nil
				if ro != nil {
					m.Extra = []dns.RR{ro}
				}
			}
		}
	}
	return m, asked, !consulted && !m.Truncated && !trimmed && !signFailed
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

func (p *Engine) respondWire(v view, query []byte, src netip.Addr, tcp bool, pre *hookAnswer) ([]byte, bool) {
	if len(query) < 12 || query[2]&0x80 != 0 {
		return nil, false
	}
	qEnd, opt, ok := dnswire.Scan(query)
	req := new(dns.Msg)
	if !ok || req.Unpack(query) != nil {
		return p.formErr(query, qEnd, opt), false
	}
	m, asked, cacheable := p.respond(v, req, src, tcp, pre)
	if m == nil {
		return nil, false
	}
	return pack(m, asked), cacheable
}
