package zonetransfer

import (
	"encoding/binary"
	"errors"
	"strings"

	"github.com/gslbkit/gslb/internal/dnswire"
	"github.com/miekg/dns"
)

// errXFRPack is a record that cannot be packed into a transfer message.
var errXFRPack = errors.New("zonetransfer: record does not fit a transfer message")

// xfrPacker writes an unsigned transfer's messages into one buffer it
// reuses, message after message, instead of building a dns.Msg per message
// (whose packing keeps a compression map of every name written). Names
// are compressed the way authoritative servers typically compress a
// transfer: an owner name equal to the previous record's points at it,
// and a name under the zone writes the labels above the zone and points
// at the zone's name (the question's, or where it was first written).
// The names in the data of the RFC 1035 types (NS, CNAME, PTR, MX, SOA)
// are compressed the same way; names are copied label by label (plainName)
// unless they hold an escape; A, AAAA and TXT data is copied directly; the
// data of other types is written as miekg/dns packs it, uncompressed. Records are read, never modified, so
// concurrent transfers may share them.
type xfrPacker struct {
	buf  []byte // the two-byte TCP length, then the message
	msg  []byte // buf[2:]
	off  int    // the end of the message so far, in msg
	zone string // the zone's name, as owner names spell it
	qEnd int    // the end of the question: where answers start
	// apex is where the zone's name is in the message (a pointer's
	// target), or -1; apexQ is its value once the question is written.
	apex, apexQ int
	prev        string // the previous record's owner name…
	prevOff     int    // …and where it is in the message, or -1
	count       int    // records in the message
	one         dns.Msg
	scratch     []byte
	sink        byte // what touch read
}

// newXFRPacker starts the messages answering req for zone (lower case,
// fully qualified): each the reply's header and question, then records.
func newXFRPacker(req *dns.Msg, zone string) (*xfrPacker, error) {
	p := &xfrPacker{buf: make([]byte, 2+dns.MaxMsgSize), zone: zone, apex: -1, prevOff: -1}
	p.msg = p.buf[2:]
	m := p.msg
	binary.BigEndian.PutUint16(m[0:], req.Id)
	m[2] = 0x80 | byte(req.Opcode&0xF)<<3 | 0x04 // QR, opcode, AA
	m[3] = 0
	binary.BigEndian.PutUint16(m[4:], 1) // one question, the answers counted at flush
	clear(m[6:12])
	q := req.Question[0]
	off, err := dns.PackDomainName(q.Name, m, 12, nil, false)
	if err != nil {
		return nil, err
	}
	binary.BigEndian.PutUint16(m[off:], q.Qtype)
	binary.BigEndian.PutUint16(m[off+2:], q.Qclass)
	p.off, p.qEnd = off+4, off+4
	if q.Name == zone {
		p.apex = 12
	}
	p.apexQ = p.apex
	p.one.Answer = make([]dns.RR, 1)
	return p, nil
}

// add packs rr after the message's records, and reports false (the
// message unchanged) when that would make the message longer than limit
// while it holds records already: flush it, then add rr again.
func (p *xfrPacker) add(rr dns.RR, limit int) (bool, error) {
	start, prev, prevOff, apex := p.off, p.prev, p.prevOff, p.apex
	err := p.pack(rr)
	if err == nil && (p.off <= limit || p.count == 0) {
		p.count++
		return true, nil
	}
	p.off, p.prev, p.prevOff, p.apex = start, prev, prevOff, apex
	if err != nil && p.count == 0 {
		return false, err
	}
	return false, nil
}

// frame returns the message, length-prefixed, and starts the next one.
func (p *xfrPacker) frame() []byte {
	binary.BigEndian.PutUint16(p.msg[6:], uint16(p.count))
	binary.BigEndian.PutUint16(p.buf, uint16(p.off))
	out := p.buf[:2+p.off]
	p.off, p.count, p.prev, p.prevOff, p.apex = p.qEnd, 0, "", -1, p.apexQ
	return out
}

func (p *xfrPacker) pack(rr dns.RR) error {
	h := rr.Header()
	start := p.off
	same := h.Name == p.prev && p.prevOff >= 0
	if err := p.name(h.Name); err != nil {
		return err
	}
	if !same { // a pointer to the previous name: point at that one still
		p.prev, p.prevOff = h.Name, -1
		if start < 0x4000 {
			p.prevOff = start
		}
	}
	m := p.msg
	if p.off+10 > len(m) {
		return errXFRPack
	}
	fixed := p.off
	binary.BigEndian.PutUint16(m[fixed:], h.Rrtype)
	binary.BigEndian.PutUint16(m[fixed+2:], h.Class)
	binary.BigEndian.PutUint32(m[fixed+4:], h.Ttl)
	p.off += 10
	var err error
	switch r := rr.(type) {
	case *dns.A:
		if ip := r.A.To4(); ip != nil && p.off+4 <= len(m) {
			p.off += copy(m[p.off:], ip)
		} else if len(r.A) != 0 {
			return p.other(rr, fixed)
		}
	case *dns.AAAA:
		if len(r.AAAA) != 16 || p.off+16 > len(m) {
			return p.other(rr, fixed)
		}
		p.off += copy(m[p.off:], r.AAAA)
	case *dns.NS:
		err = p.name(r.Ns)
	case *dns.CNAME:
		err = p.name(r.Target)
	case *dns.PTR:
		err = p.name(r.Ptr)
	case *dns.TXT:
		if !p.txt(r.Txt) {
			return p.other(rr, fixed)
		}
	case *dns.MX:
		if p.off+2 > len(m) {
			return errXFRPack
		}
		binary.BigEndian.PutUint16(m[p.off:], r.Preference)
		p.off += 2
		err = p.name(r.Mx)
	case *dns.SOA:
		if err = p.name(r.Ns); err == nil {
			err = p.name(r.Mbox)
		}
		if err == nil && p.off+20 > len(m) {
			err = errXFRPack
		}
		if err == nil {
			for _, v := range [5]uint32{r.Serial, r.Refresh, r.Retry, r.Expire, r.Minttl} {
				binary.BigEndian.PutUint32(m[p.off:], v)
				p.off += 4
			}
		}
	default:
		return p.other(rr, fixed)
	}
	if err != nil {
		return err
	}
	rdlen := p.off - fixed - 10
	if rdlen > 0xFFFF {
		return errXFRPack
	}
	binary.BigEndian.PutUint16(m[fixed+8:], uint16(rdlen))
	return nil
}

// other writes rr's type, class, TTL and data at fixed (after its owner
// name) as miekg/dns packs them, uncompressed: rr packed alone in a
// message of its own (which, unlike dns.PackRR, leaves rr as it is).
func (p *xfrPacker) other(rr dns.RR, fixed int) error {
	p.one.Answer[0] = rr
	out, err := p.one.PackBuffer(p.scratch)
	p.one.Answer[0] = nil
	if err != nil {
		return err
	}
	p.scratch = out[:cap(out)]
	end, ok := dnswire.SkipName(out, 12)
	if !ok || end+10 > len(out) {
		return errXFRPack
	}
	if fixed+len(out)-end > len(p.msg) {
		return errXFRPack
	}
	p.off = fixed + copy(p.msg[fixed:], out[end:])
	return nil
}

// name writes s at the end of the message, compressed against the
// previous owner name and the zone's name.
func (p *xfrPacker) name(s string) error {
	m := p.msg
	if s == p.prev && p.prevOff >= 0 {
		return p.pointer(p.prevOff)
	}
	z := p.zone
	if s == z {
		if p.apex >= 0 {
			return p.pointer(p.apex)
		}
		return p.full(s, true)
	}
	cut := len(s) - len(z)
	if cut < 2 || s[cut-1] != '.' || !strings.HasSuffix(s, z) || escaped(s, cut-1) {
		return p.full(s, false)
	}
	// The labels above the zone, their final zero byte replaced by the
	// zone's name: a pointer to it, or the name itself.
	off, err := packName(s[:cut], m, p.off)
	if err != nil {
		return err
	}
	p.off = off - 1
	if p.apex >= 0 {
		return p.pointer(p.apex)
	}
	return p.full(z, true)
}

// escaped reports whether s[i] is escaped: after an odd number of
// backslashes.
func escaped(s string, i int) bool {
	n := 0
	for i--; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// full writes s uncompressed; apex says it is the zone's name (then
// noted as a pointer's target when the message has none yet).
func (p *xfrPacker) full(s string, apex bool) error {
	start := p.off
	off, err := packName(s, p.msg, p.off)
	if err != nil {
		return err
	}
	p.off = off
	if apex && p.apex < 0 && start < 0x4000 {
		p.apex = start
	}
	return nil
}

// packName is dns.PackDomainName(s, m, off, nil, false): plainName's
// copy when s is plain, else miekg/dns's.
func packName(s string, m []byte, off int) (int, error) {
	if end, ok := plainName(s, m, off); ok {
		return end, nil
	}
	return dns.PackDomainName(s, m, off, nil, false)
}

// plainName writes s uncompressed at off in m as dns.PackDomainName
// writes it, when s is a fully qualified name other than the root with no
// backslash, its labels 1 to 63 bytes, that fits in m; false for any
// other (nothing past off is meaningful then). It copies the labels
// without PackDomainName's escape handling and checks.
func plainName(s string, m []byte, off int) (int, bool) {
	if len(s) < 2 || len(s) > 254 || s[len(s)-1] != '.' || off+len(s)+1 > len(m) {
		return 0, false
	}
	l := off // where the current label's length goes
	off++
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '.':
			n := off - l - 1
			if n == 0 || n > 63 {
				return 0, false
			}
			m[l] = byte(n)
			l = off
			off++
		case '\\':
			return 0, false
		default:
			m[off] = c
			off++
		}
	}
	m[l] = 0 // the root label: s ends in a dot
	return off, true
}

// txt writes a TXT record's strings, each its length and its bytes, when
// none holds a backslash (an escape miekg/dns reads when packing) or is
// longer than 255 bytes; false, nothing written, otherwise or when they
// do not fit.
func (p *xfrPacker) txt(ss []string) bool {
	m, off := p.msg, p.off
	for _, s := range ss {
		if len(s) > 255 || off+1+len(s) > len(m) || strings.IndexByte(s, '\\') >= 0 {
			return false
		}
		m[off] = byte(len(s))
		off += 1 + copy(m[off+1:], s)
	}
	p.off = off
	return true
}

func (p *xfrPacker) pointer(to int) error {
	if p.off+2 > len(p.msg) {
		return errXFRPack
	}
	binary.BigEndian.PutUint16(p.msg[p.off:], 0xC000|uint16(to))
	p.off += 2
	return nil
}

// xfrBatch is how many records a transfer touches before packing them.
const xfrBatch = 32

// touch reads a byte of each record's owner name and address, so that
// their cache misses overlap (the packer keeps what it read, so that the
// reads stay).
func (p *xfrPacker) touch(rrs []dns.RR) {
	var hs [xfrBatch]*dns.RR_Header
	for i, rr := range rrs {
		hs[i] = rr.Header()
	}
	var b byte
	for i, rr := range rrs {
		if h := hs[i]; len(h.Name) > 0 {
			b ^= h.Name[0]
		}
		if a, ok := rr.(*dns.A); ok && len(a.A) > 0 {
			b ^= a.A[len(a.A)-1]
		}
	}
	p.sink = b
}
