package memory

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
	// DefaultMaxUDPSize is the default of Config.MaxUDPSize, the largest
	// UDP reply: 1232 bytes, DNS Flag Day 2020's size, which fits the IPv6
	// minimum MTU without fragments.
	DefaultMaxUDPSize = 1232
	// maxUDPSize is the largest Config.MaxUDPSize, the size of the DNS
	// server's UDP buffers.
	maxUDPSize = dnswire.MaxUDP
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
	m, asked, _ := p.respond(p.view(), r, src, tcp, nil)
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
//     chains inside the zone (at most 16 links, loops stopped); synthesises
//     answers from wildcards (RFC 4592: "*.x" answers names below x that do
//     not exist, unless an existing name or empty non-terminal is closer);
//     answers a name at or below a delegation point (NS records below the
//     apex) with a referral: AA clear, the NS records in the authority
//     section and their in-zone addresses (glue) in the additional section,
//     except DS at the delegation point itself, which the parent side
//     answers;
//   - answers ANY over UDP with one RRset (RFC 8482; every RRset over TCP,
//     or over UDP too with Config.FullANYOverUDP);
//   - adds the in-zone addresses of NS, MX and SRV targets to the
//     additional section (off with Config.NoAdditional);
//   - tells NXDOMAIN from NODATA (empty non-terminals are NODATA), with the
//     SOA in the authority section at TTL min(SOA TTL, minimum);
//   - echoes the question exactly as asked (resolvers randomise its case);
//     record names are lower case (on the wire, RespondWire and the server
//     compress them against the question, as most servers do);
//   - carries an OPT record whenever the query had one, errors included (RFC
//     6891 section 6.1.1): advertising Config.MaxUDPSize (default 1232),
//     copying the DO bit, echoing EDNS Client Subnet with scope 0, or when
//     an answer hook ran with the scope it reported, capped at the source
//     prefix length (RFC 7871 section 7.2.1, see AnswerFunc); over UDP the reply
//     is capped at min(the client's size, Config.MaxUDPSize) (512 without
//     EDNS): when it does not fit, the in-zone addresses in the additional
//     section go first, and if it still does not fit it carries no records
//     and TC is set, so the client retries over TCP.
func (p *Provider) Respond(req *dns.Msg, src netip.Addr, tcp bool) *dns.Msg {
	m, asked, _ := p.respond(p.view(), req, src, tcp, nil)
	if m != nil && len(m.Question) == 1 {
		m.Question[0].Name = asked
	}
	return m
}

// respond builds the reply with the question name in lower case; asked is
// the name as the query spelled it. cacheable says the reply depends only on
// the question, the zone, the EDNS shape and the transport (no answer hook
// consulted, no truncation or trimming), so the fast path may reuse its
// bytes (with an EDNS Client Subnet option, once the echoed option is cut).
//
// pre, when not nil, is the answer the first answer hook consulted gave
// already (the fast path's, see fasthook.go): used instead of asking again.
func (p *Provider) respond(v view, req *dns.Msg, src netip.Addr, tcp bool, pre *hookAnswer) (m *dns.Msg, asked string, cacheable bool) {
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
	o := answerOpts{minimalANY: !tcp && !p.cfg.FullANYOverUDP, additional: !p.cfg.NoAdditional, pre: pre, p: p}
	scope, consulted := v.answer(m, z, q, clientPrefix(ecs, src), o)
	signFailed := z.Signer != nil && !signReply(m, z, q, opt, ro, time.Now())
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
		if m.Len() > limit {
			referral := len(m.Answer) == 0 && len(m.Ns) > 0 && m.Ns[0].Header().Rrtype == dns.TypeNS
			if !referral && len(m.Extra) > 0 && m.Extra[0] != dns.RR(ro) {
				// Additional addresses are optional (RFC 2181 section 9);
				// glue in a referral is not (RFC 9471).
				m.Extra, trimmed = m.Extra[:0], true
				if ro != nil {
					m.Extra = append(m.Extra, ro)
				}
			}
			if m.Len() > limit {
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

// RespondWire answers one query in wire format, as a UDP or TCP server loop
// hands it over: it returns the packed reply, or nil when the message
// deserves none (shorter than a DNS header, or a response). A malformed
// message (a name or record cut short, section counts naming records that
// are not there, bytes after the last record, records that do not decode)
// gets FORMERR with the query's ID and opcode, its question when that is
// whole, and an OPT record when the query carried one.
// It is the general path; the server's UDP fast path produces the same bytes.
func (p *Provider) RespondWire(query []byte, src netip.Addr, tcp bool) []byte {
	out, _ := p.respondWire(p.view(), query, src, tcp, nil)
	return out
}

// view is one consistent pair of zone state and answer hooks.
type view struct {
	st    *state
	hooks *hookTable
}

func (p *Provider) view() view { return view{st: p.load(), hooks: p.hooks.Load()} }

func (p *Provider) respondWire(v view, query []byte, src netip.Addr, tcp bool, pre *hookAnswer) ([]byte, bool) {
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
