package answer

import (
	"github.com/miekg/dns"
)

// formErr is the FORMERR reply to a malformed query: the query's ID, opcode
// and RD bit, its first question when that was whole and decodes, and an
// OPT record when the query carried one whole (RFC 6891 section 6.1.1).
func (p *Engine) formErr(query []byte, qEnd, opt int) []byte {
	m := new(dns.Msg)
	m.Id = uint16(query[0])<<8 | uint16(query[1])
	m.Response = true
	m.Opcode = int(query[2]>>3) & 0xF
	m.RecursionDesired = query[2]&0x01 != 0
	m.Rcode = dns.RcodeFormatError
	asked := ""
	if qEnd > 0 {
		if name, e, err := dns.UnpackDomainName(query, 12); err == nil && e+4 == qEnd {
			asked = name
			m.Question = []dns.Question{{Name: name, Qtype: uint16(query[e])<<8 | uint16(query[e+1]), Qclass: uint16(query[e+2])<<8 | uint16(query[e+3])}}
		}
	}
	if opt >= 0 {
		ro := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
		ro.SetUDPSize(uint16(p.maxUDPSize()))
		if query[opt+7]&0x80 != 0 {
			ro.SetDo()
		}
		m.Extra = []dns.RR{ro}
	}
	return pack(m, asked)
}
