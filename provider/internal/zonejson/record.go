package zonejson

import (
	"net/netip"
	"strconv"

	"github.com/gslbkit/gslb/internal/zoneops"
	"github.com/gslbkit/gslb/internal/zonerecord"
	"github.com/gslbkit/gslb/provider/internal/zonedata"
	"github.com/miekg/dns"
)

// Encoder writes records as the JSON of memory's ZoneRecord straight from
// their wire form, with no string in between: building the ZoneRecord
// (its name, its data derived from the wire record, a TXT record's
// strings) left some 40 MB of garbage per walk of a million records, which
// a process holding the zone has to find room for. It reuses its scratch
// space for TXT records. The zero Encoder is ready; it is not safe for
// concurrent use.
type Encoder struct {
	text []byte // a TXT record's strings, unescaped, one after the other
	ends []int  // where each string ends in text
}

// AppendRecord appends r, a record of zone, to dst as json.Marshal writes
// memory's ZoneRecord of it: name relative to zone, type, TTL, data in
// libdns form (a TXT record's text, and its strings when they are not
// that text cut into 255-byte strings).
func (e *Encoder) AppendRecord(dst []byte, zone string, r zonedata.Rec) []byte {
	h := r.Wire.Header()
	dst = append(dst, `{"name":`...)
	dst = appendJSONString(dst, zonerecord.Rel(h.Name, zone))
	dst = append(dst, `,"type":`...)
	dst = appendJSONString(dst, dns.TypeToString[h.Rrtype])
	dst = append(dst, `,"ttl":`...)
	dst = strconv.AppendUint(dst, uint64(h.Ttl), 10)
	dst = append(dst, `,"data":`...)
	switch w := r.Wire.(type) { // the types Rec.Data formats itself
	case *dns.A:
		a, _ := netip.AddrFromSlice(w.A)
		dst = appendAddr(dst, a.Unmap())
	case *dns.AAAA:
		a, _ := netip.AddrFromSlice(w.AAAA)
		dst = appendAddr(dst, a)
	case *dns.CNAME:
		dst = appendJSONString(dst, w.Target)
	case *dns.NS:
		dst = appendJSONString(dst, w.Ns)
	case *dns.PTR:
		dst = appendJSONString(dst, w.Ptr)
	case *dns.TXT:
		dst = e.appendTXT(dst, w)
	default: // rarer types: from their presentation form
		dst = appendJSONString(dst, r.Data())
	}
	return append(dst, '}')
}

// appendAddr appends a as zonedata.Rec.Data writes it (String), quoted.
func appendAddr(dst []byte, a netip.Addr) []byte {
	if !a.IsValid() {
		return appendJSONString(dst, a.String())
	}
	dst = append(dst, '"')
	dst = a.AppendTo(dst) // digits, hex digits, dots and colons: nothing to escape
	return append(dst, '"')
}

// appendTXT appends t's data (its strings unescaped and joined) and, when
// they are not that text cut by zoneops.SplitTXT, its strings.
func (e *Encoder) appendTXT(dst []byte, t *dns.TXT) []byte {
	e.text, e.ends = e.text[:0], e.ends[:0]
	for _, s := range t.Txt {
		e.text = zoneops.AppendUnescapedTXT(e.text, s)
		e.ends = append(e.ends, len(e.text))
	}
	dst = appendJSONString(dst, e.text)
	if len(e.ends) == 0 || splitText(e.ends) {
		return dst
	}
	dst = append(dst, `,"strings":[`...)
	start := 0
	for i, end := range e.ends {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, e.text[start:end])
		start = end
	}
	return append(dst, ']')
}

// splitText reports whether strings ending at ends (in their joined text)
// are that text as zoneops.SplitTXT cuts it: zoneops.TXTData's plain.
func splitText(ends []int) bool {
	total := ends[len(ends)-1]
	if total == 0 {
		return len(ends) == 1 // SplitTXT("") is one empty string
	}
	if len(ends) != (total+zoneops.MaxTXTString-1)/zoneops.MaxTXTString {
		return false
	}
	for i, end := range ends[:len(ends)-1] {
		if end != (i+1)*zoneops.MaxTXTString {
			return false
		}
	}
	return true
}
