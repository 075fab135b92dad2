package memory

import (
	"net/netip"

	"github.com/gslbkit/gslb/internal/dnswire"
	"github.com/gslbkit/gslb/provider/internal/answer"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// Limits on answers.
const (
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
	m, asked := p.eng.Respond(r, src, tcp)
	if m == nil {
		return
	}
	if out := answer.Pack(m, asked); out != nil {
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
	m, asked := p.eng.Respond(req, src, tcp)
	if m != nil && len(m.Question) == 1 {
		m.Question[0].Name = asked
	}
	return m
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
	return p.eng.RespondWire(query, src, tcp)
}

// RespondUDP answers one UDP query like RespondWire(query, src, false),
// byte for byte, but from the fast cache when it can; the reply is written
// into buf when it fits (pass a buffer of 4096 bytes to avoid allocating).
// It is what dnsserver.Server's UDP loops call.
func (p *Provider) RespondUDP(query, buf []byte, src netip.Addr) []byte {
	return p.eng.RespondUDP(query, buf, src)
}

// RespondTCP answers one query received over TCP (the message without its
// two-byte length) like RespondWire(query, src, true), byte for byte, but
// from the fast cache when it can; the reply is written into buf when it
// fits. It is what dnsserver.Server's TCP loop calls for every message that is
// not a zone transfer.
func (p *Provider) RespondTCP(query, buf []byte, src netip.Addr) []byte {
	return p.eng.RespondTCP(query, buf, src)
}

// AnswerFunc chooses the answer for one query. client is the EDNS Client Subnet prefix
// when present, else the query's source address as a /32 or /128; name is the queried
// owner name, lower case, fully qualified; qtype is "A", "AAAA", ...; rrs are the records
// the zone holds at that name and type. It returns the records to answer with (a subset
// or reordering); a nil or empty return means "no opinion": answer with rrs.
// It must be safe for concurrent use and must not retain or modify rrs:
// the fast path hands the same rrs slice to every query for a name until
// the zone changes, so a hook that sorts or rotates rrs in place corrupts
// other queries' answers (return a new slice or a subslice instead).
//
// The records in rrs are the libdns structs for their type (libdns.Address
// for A and AAAA, libdns.TXT, ...), named relative to the zone as GetRecords
// returns them. A returned record is matched to the zone's records by type
// and data (keeping the zone's TTL); one the zone does not hold is answered
// as returned, with the TTL it carries; records of another type are dropped.
// The hook runs for the RRset that ends a query, including at the end of a
// CNAME chain (the name passed is then the chain's last owner), and never for
// ANY queries, for the SOA and NS records at the apex, or for referrals. For
// an answer synthesised from a wildcard (RFC 4592) name is the queried name
// and rrs are the wildcard's records (named "*.…"); the hook registered for
// the queried name is used, else the one for the wildcard's name, else the
// zone's.
//
// scope is how many leading bits of client the answer depends on (its "no
// opinion" included): every client whose prefix shares them would be
// answered alike. A query with an EDNS Client Subnet option is answered
// with SCOPE PREFIX-LENGTH = min(scope, SOURCE PREFIX-LENGTH), never wider
// than asked; RFC 7871 section 7.2.1 defines it as the leftmost bits of
// the address the response covers, and a caching resolver serves the
// answer to every client inside that network. So a hook that chooses by
// client must not report less than its decision needs (return the client
// prefix's length, its Bits, when unsure); 0 says the answer suits every
// client. A
// negative scope counts as 0.
type AnswerFunc func(client netip.Prefix, name, qtype string, rrs []libdns.Record) (answer []libdns.Record, scope int)

// HookPanics returns how many times an answer hook panicked, and the
// latest panic as text ("" when none did). A hook that panics is taken to
// have no opinion: the query is answered with every record the zone holds
// for it, so a bug in a hook degrades answers instead of stopping the
// server; watch this count to find such bugs.
func (p *Provider) HookPanics() (n uint64, last string) {
	return p.eng.HookPanics()
}

// SetAnswerFunc registers f as the answer hook for the owner name fqdn (any
// case, trailing dot optional); nil removes it. A per-name hook takes
// precedence over a zone-wide one. The name need not hold records yet.
// Queries already being answered may still use the previous hook.
func (p *Provider) SetAnswerFunc(fqdn string, f AnswerFunc) {
	p.eng.SetHook(zoneKey(fqdn), f, false)
}

// SetZoneAnswerFunc registers f as the answer hook for every name in the
// zone (and in zones below it that have no hook of their own) that has no
// per-name hook; nil removes it.
func (p *Provider) SetZoneAnswerFunc(zoneName string, f AnswerFunc) {
	p.eng.SetHook(zoneKey(zoneName), f, true)
}

// Signed reports whether the zone named zone (any case, trailing dot
// optional) is held and signed online (added with a ZoneConfig.Signer).
// zonetransfer refuses to transfer such a zone unless told otherwise: a
// secondary would serve it unsigned.
func (p *Provider) Signed(zone string) bool {
	z := p.load().Zones[zoneKey(zone)]
	return z != nil && z.Signer != nil
}
