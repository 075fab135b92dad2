package memory

import (
	"github.com/miekg/dns"
)

// scanQuery walks the sections of a message as its header counts them,
// without decoding records. It returns the offset just past the first
// question (0 when that is not whole), the offset of an OPT record in the
// additional section seen whole (-1 when none), and whether the message is
// well formed: every counted question and record present and whole, and
// nothing after the last one (RFC 1035 section 4.1).
func scanQuery(b []byte) (qEnd, opt int, ok bool) {
	opt = -1
	if len(b) < 12 {
		return 0, opt, false
	}
	count := func(i int) int { return int(b[i])<<8 | int(b[i+1]) }
	qd, an, ns, ar := count(4), count(6), count(8), count(10)
	off := 12
	for i := range qd {
		e, good := skipName(b, off)
		if !good || e+4 > len(b) {
			return qEnd, opt, false
		}
		off = e + 4
		if i == 0 {
			qEnd = off
		}
	}
	for i := range an + ns + ar {
		e, good := skipName(b, off)
		if !good || e+10 > len(b) {
			return qEnd, opt, false
		}
		end := e + 10 + (int(b[e+8])<<8 | int(b[e+9]))
		if end > len(b) {
			return qEnd, opt, false
		}
		if i >= an+ns && e == off+1 && b[e] == 0 && b[e+1] == byte(dns.TypeOPT) && opt < 0 {
			opt = off
		}
		off = end
	}
	return qEnd, opt, off == len(b)
}

// skipName returns the offset just past the domain name at off: labels of at
// most 63 bytes ending in the root label or a compression pointer.
func skipName(b []byte, off int) (int, bool) {
	for n := 0; ; {
		if off >= len(b) {
			return 0, false
		}
		c := int(b[off])
		switch c & 0xC0 {
		case 0x00:
			if c == 0 {
				return off + 1, true
			}
			n += c + 1
			if n > 255 {
				return 0, false
			}
			off += 1 + c
		case 0xC0:
			if off+2 > len(b) {
				return 0, false
			}
			return off + 2, true
		default:
			return 0, false
		}
	}
}

// formErr is the FORMERR reply to a malformed query: the query's ID, opcode
// and RD bit, its first question when that was whole and decodes, and an
// OPT record when the query carried one whole (RFC 6891 section 6.1.1).
func (p *Provider) formErr(query []byte, qEnd, opt int) []byte {
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
