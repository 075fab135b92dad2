package dnsserver

import "github.com/gslbkit/gslb/internal/dnswire"

// Replies are never fragmented. On Linux the server's UDP socket sets
// IP_MTU_DISCOVER (and IPV6_MTU_DISCOVER) to PMTUDISC_PROBE: IPv4 replies
// carry DF, no reply is cut into fragments by this host, and path MTU
// figures learned from ICMP "fragmentation needed" or "packet too big"
// messages, which anyone can forge, are not used. A reply larger than the
// outgoing interface's MTU (possible only with memory.Config.MaxUDPSize above the
// link's MTU less 28 or 48 bytes of headers) is refused by the kernel and
// goes out truncated instead (truncateToTC), so the client retries over
// TCP. This is what RFC 9715 asks of UDP responders: DF on IPv4, no
// fragments, TC rather than a reply that does not fit. Forged fragments
// are a known way to poison a resolver's cache (the second fragment of a
// reply carries no DNS ID or port to guess). A side effect: with DF set the
// kernel leaves the IPv4 ID at zero (RFC 6864 allows it for datagrams that
// cannot be fragmented) instead of hashing a fresh one per reply.

// truncateToTC cuts a reply, in place, to what a client needs to retry over
// TCP: the header with TC set, the first question and the OPT record if
// the reply has one (RFC 6891 section 7: a query with OPT gets a reply with
// OPT). It returns nil if reply is not a well-formed message with a
// question.
func truncateToTC(reply []byte) []byte {
	qEnd, opt, ok := dnswire.Scan(reply)
	if !ok || qEnd == 0 {
		return nil
	}
	n := 0
	if opt >= 0 {
		// Root name (1 byte), type, class, TTL (8), RDLENGTH (2), RDATA.
		end := opt + 11 + (int(reply[opt+9])<<8 | int(reply[opt+10]))
		n = copy(reply[qEnd:], reply[opt:end])
	}
	reply[2] |= 0x02 // TC
	reply[4], reply[5] = 0, 1
	clear(reply[6:12])
	if n > 0 {
		reply[11] = 1
	}
	return reply[:qEnd+n]
}

// truncateTooBig is what a UDP loop does with a reply the kernel refused as
// larger than the interface's MTU (EMSGSIZE): it returns the reply cut by
// truncateToTC, counted in ServerStats.UDPTooBig, or nil when it cannot be
// cut shorter (then the loop skips it).
func (s *Server) truncateTooBig(reply []byte) []byte {
	tc := truncateToTC(reply)
	if len(tc) == 0 || len(tc) >= len(reply) {
		return nil
	}
	s.stats.udpTooBig.Add(1)
	return tc
}
