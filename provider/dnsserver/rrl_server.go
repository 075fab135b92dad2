package dnsserver

import (
	"encoding/binary"
	"net/netip"
	"time"

	"github.com/gslbkit/gslb/internal/dnswire"
)

// limitUDP passes one UDP reply through the rate limiter: it returns the
// reply to send, the reply cut to its header and question with TC set (a
// slip), or nil (dropped). The class, the query type and the name are read
// from the reply itself, so the fast path and the general path are limited
// alike. With RRL off it returns reply.
func (s *Server) limitUDP(now time.Time, src netip.Addr, reply []byte) []byte {
	if s.rrl == nil || len(reply) < 12 {
		return reply
	}
	rcode := int(reply[3] & 0x0F)
	answers := int(binary.BigEndian.Uint16(reply[6:8]))
	qend, qtype := 12, uint16(0)
	if binary.BigEndian.Uint16(reply[4:6]) >= 1 {
		if end, ok := dnswire.NameEnd(reply, 12); ok && end+4 <= len(reply) {
			qend = end
			qtype = binary.BigEndian.Uint16(reply[end : end+2])
		}
	}
	class := ClassifyResponse(rcode, qtype, answers, len(reply), false)
	name := reply[12:qend]
	if class == RRLNXDomain || class == RRLError || class == RRLWildcard {
		// Knot's rule: random names below one zone share the zone's bucket.
		name = s.enclosingZone(name)
	}
	switch s.rrl.Check(now, src, class, name) {
	case RRLDrop:
		return nil
	case RRLSlip:
		if qend > 12 {
			qend += 4 // type and class
		}
		out := reply[:qend]
		out[2] |= 0x02 // TC
		// One question (if any) and nothing else.
		out[4], out[5] = 0, 0
		if qend > 12 {
			out[5] = 1
		}
		clear(out[6:12])
		return out
	}
	return reply
}

// enclosingZone returns the suffix of the wire name that names the closest
// zone the provider holds, or an empty name when none encloses it.
func (s *Server) enclosingZone(name []byte) []byte {
	if s.zones == nil {
		return name[len(name):]
	}
	var buf [256]byte
	for off := 0; off < len(name); off += 1 + int(name[off]) {
		// Present name[off:] as the zones map's key: lower case, dotted.
		n := 0
		for i := off; i < len(name) && name[i] != 0 && n < len(buf)-64; i += 1 + int(name[i]) {
			l := int(name[i])
			if i+1+l > len(name) {
				return nil
			}
			for _, c := range name[i+1 : i+1+l] {
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				buf[n] = c
				n++
			}
			buf[n] = '.'
			n++
		}
		if n == 0 {
			buf[0] = '.'
			n = 1
		}
		if s.zones.HoldsZone(buf[:n]) {
			return name[off:]
		}
		if name[off] == 0 {
			break
		}
	}
	return name[len(name):]
}
