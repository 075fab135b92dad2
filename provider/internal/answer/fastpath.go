package answer

import (
	"encoding/binary"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/gslbkit/gslb/provider/dnssec"
)

// The fast path. Answers in a GSLB zone change rarely, so the server
// keeps the packed replies the general path produced, keyed by what the
// reply depends on — the question name in lower case, the type, the EDNS
// shape (none, or version 0 with no options but COOKIE, PADDING and EDNS
// Client Subnet, DO clear or set) and the transport (UDP or TCP) — and
// answers the next query with the same key by copying those bytes and
// patching the ID, the RD and CD bits and the question name as asked.
// The cache belongs to one zone state and one set of answer hooks: any
// change (a write, a hook registered) starts a new, empty cache, so stale
// bytes are never served. Replies that depend on more than the key (an
// answer hook consulted, truncation, errors) are never cached, and queries
// the fast parser does not recognise take the general path.
//
// A reply that consulted no answer hook does not depend on the client, so a
// query with EDNS Client Subnet gets the cached reply with the option
// echoed at SCOPE PREFIX-LENGTH 0 (RFC 7871 section 7.2.1: the answer is
// good for every client); the cache stores such replies without the option
// and the fast path appends the query's option, which in the accepted form
// (scope 0, address cut to the source prefix, bits beyond it zero) is
// exactly the echo. FuzzFastPath checks both paths give the same bytes.
//
// What the cache keeps. staticReply (faststatic.go) answers the common
// questions of a zone without hooks straight from its records, with no
// allocation; a static answer costs about 1.9 × the instructions of a
// cache hit in process. Where it goes depends on whether the view's plain
// answers fit the cache (cachesStatic): for a view of a few thousand
// names or fewer, whose answers (fastAnswersPerName of fastPlainEntryBytes
// each a name) fit its budget, the cache is looked up first and keeps
// static answers like any other, so a small zone's questions are hits
// from their second sighting on. For a larger view staticReply goes
// first and its answers are not stored in the cache's map, so a zone's
// plain answers (addresses, CNAMEs into them, TXT, wildcards, referrals,
// NXDOMAIN and NODATA) take no memory per name: for a zone of many names
// a static answer is the only one a spread load gets anyway. There the
// plain answers asked most are kept in the hot table instead (fasthot.go:
// fixed slots, 1,024 or more as the view grows, looked up before staticReply), so a skewed load's
// head is answered as a hit at every size. The cache's map keeps the rest
// (hooked answers, DO set, other types, what does not fit staticReply's
// forms), and at either size each key enters from its second sighting on
// (fastadmit.go: a random name asked once, the bulk of a scan or a
// random-subdomain flood, never enters), within a budget that follows the
// view (cacheBudget).

// fastCacheBytes bounds the memory of one cache: the keys and replies it
// holds plus fastEntryOverhead per entry (the map's slot and the two
// allocations' rounding). A cache's own budget follows its view
// (cacheBudget): fastBytesPerName per name of its zones, at least
// fastCacheFloor, at most fastCacheBytes. A full cache takes no more
// entries until the zone or the hooks change (a flood of names asked
// twice cannot grow it past its budget); the questions it cannot hold
// take the general path each time. 32 MiB holds about 170,000 replies of a typical answer (an address
// or two). A variable for the tests.
var fastCacheBytes = 32 << 20

// fastBytesPerName and fastCacheFloor: see fastCacheBytes. A name's
// entries are few (the types asked, the EDNS shapes and transports the
// clients use), and since in a view of many names staticReply answers the
// common ones uncached, most names have none; 256 bytes a name is one
// plain entry, or a quarter of a hooked one, and no more than the zone's
// records take. The floor gives a small zone room for its plain answers
// (cachesStatic) or its hooked names (1,024 entries of fastHookedBytes).
const (
	fastBytesPerName = 256
	fastCacheFloor   = 1 << 20
)

// cacheBudget returns the bytes a cache of a view whose zones hold names
// names may take (see fastCacheBytes).
func cacheBudget(names int) int {
	return min(max(names*fastBytesPerName, fastCacheFloor), fastCacheBytes)
}

// fastAnswersPerName and fastPlainEntryBytes size a view's plain answers
// in the cache: a name is asked a type or two (A and AAAA, say), and a
// plain answer's entry is counted at about 210 bytes (a key of some 20
// bytes, a reply of an address or two with EDNS of some 90, and
// fastEntryOverhead).
const (
	fastAnswersPerName  = 2
	fastPlainEntryBytes = 210
)

// cachesStatic reports whether a cache of budget bytes for a view of
// names names keeps staticReply's answers (see the package doc): when
// they fit, fastAnswersPerName of fastPlainEntryBytes a name. With the
// default bounds that is up to 2,496 names (the floor's 1 MiB: a larger
// view's budget grows by fastBytesPerName a name, less than its answers
// take).
func cachesStatic(names, budget int) bool {
	return names*fastAnswersPerName*fastPlainEntryBytes <= budget
}

// fastEntryOverhead is what fastCacheBytes counts for an entry beyond its
// key and reply bytes; a hooked entry counts fastHookedBytes in all, or
// more when its parts are larger (hookedEntry.size).
const (
	fastEntryOverhead = 96
	fastHookedBytes   = 1024
)

// fastCache holds packed replies for one view.
type fastCache struct {
	v      view
	mu     sync.RWMutex
	m      map[string]fastEntry
	bytes  int // counted as fastCacheBytes says, under mu
	budget int // the most bytes may be (cacheBudget)
	// door admits a key on its second sighting (see fastadmit.go).
	door *doorkeeper
	// hot holds the static answers asked most (fasthot.go), or nil; it
	// has hotSlots slots (hotSlotsFor the view's names) once made.
	hot      atomic.Pointer[hotTable]
	hotSlots int
	// static: the view's plain answers fit the budget (cachesStatic), so
	// the cache is looked up before staticReply and keeps its answers;
	// else staticReply goes first and the hot table keeps its answers.
	static bool
	// zones lists the view's zones for staticReply when they are few
	// (zonesOK; see staticZones).
	zones   []staticZone
	zonesOK bool
	// wsigs holds, per wildcard RRset a hook chooses from, the packed
	// RRSIGs of its subsets, shared by the names it synthesises (under mu;
	// as many as the zone has hooked wildcards and types).
	wsigs map[wildKey]*dnssec.Subsets
}

// full reports whether the cache has no room for an entry of n bytes.
func (c *fastCache) full(n int) bool {
	c.mu.RLock()
	f := c.bytes+n > c.budget
	c.mu.RUnlock()
	return f
}

// fastEntry is one key's entry: a packed reply, or for a question whose
// answer a hook chooses, the parts of one (see fasthook.go).
type fastEntry struct {
	reply []byte       // ID 0, RD and CD clear, question in lower case
	h     *hookedEntry // or this; or with reply, for a signed zone's reply, its mark (signed.go)
}

// cache returns the fast cache for the current view, starting a new one
// when the zone or the hooks changed.
func (p *Engine) cache() *fastCache {
	v := p.view()
	c := p.fc.Load()
	if c != nil && c.v == v {
		return c
	}
	nc := &fastCache{v: v, m: make(map[string]fastEntry), door: newDoorkeeper()}
	nc.zones, nc.zonesOK = staticZones(v.st, v.hooks)
	names := 0
	if v.st != nil {
		for _, z := range v.st.Zones {
			names += len(z.Nodes)
		}
	}
	nc.budget = cacheBudget(names)
	nc.hotSlots = hotSlotsFor(names)
	nc.static = cachesStatic(names, nc.budget)
	p.fc.CompareAndSwap(c, nc)
	return nc
}

// fastQuery is what the fast parser learns from a query.
type fastQuery struct {
	nameEnd int // offset just past the question name
	limit   int // the UDP size the reply must fit
	ecs     int // offset of the EDNS Client Subnet option in the query, or 0
	ecsLen  int // its length, code and length fields included
}

// parseFast recognises the common query shape: a QUERY with one question
// in uncompressed form, no answer or authority records, and either no
// additional record or one OPT of version 0 with no options but COOKIE,
// PADDING and one well-formed EDNS Client Subnet. It writes the cache key
// into key and returns its length; ok is false for any other shape. tcp
// selects the TCP entries (no size limit, every RRset for ANY).
func parseFast(q []byte, key *[300]byte, maxSize int, tcp bool) (fq fastQuery, n int, ok bool) {
	if len(q) < 17 || q[2]&0xF8 != 0 || // QR, opcode
		q[4] != 0 || q[5] != 1 || q[6] != 0 || q[7] != 0 || q[8] != 0 || q[9] != 0 || q[10] != 0 || q[11] > 1 {
		return fq, 0, false
	}
	off := 12
	for {
		if off >= len(q) {
			return fq, 0, false
		}
		l := int(q[off])
		if l == 0 {
			break
		}
		if l > 63 || off+1+l >= len(q) || off-12+1+l > 254 {
			return fq, 0, false
		}
		off += 1 + l
	}
	off++
	n = lowerName(key, q[12:off])
	fq.nameEnd = off
	if off+4 > len(q) {
		return fq, 0, false
	}
	key[n], key[n+1], key[n+2], key[n+3] = q[off], q[off+1], q[off+2], q[off+3] // type, class
	n += 4
	off += 4
	var tcpBit byte
	if tcp {
		tcpBit = 2
	}
	if q[11] == 0 {
		if off != len(q) {
			return fq, 0, false
		}
		key[n] = tcpBit
		fq.limit = 512
		if tcp {
			fq.limit = 0xFFFF
		}
		return fq, n + 1, true
	}
	// OPT: root name, type 41, class = UDP size, TTL = ext-rcode, version,
	// flags; options only of kinds the reply does not depend on (COOKIE,
	// PADDING: the zone answers neither), and at most one ECS, echoed.
	if off+11 > len(q) || q[off] != 0 || q[off+1] != 0 || q[off+2] != 41 || q[off+5] != 0 || q[off+6] != 0 {
		return fq, 0, false
	}
	rdlen := int(q[off+9])<<8 | int(q[off+10])
	if off+11+rdlen != len(q) {
		return fq, 0, false
	}
	for o := off + 11; o < len(q); {
		if o+4 > len(q) {
			return fq, 0, false
		}
		code, olen := int(q[o])<<8|int(q[o+1]), int(q[o+2])<<8|int(q[o+3])
		if o+4+olen > len(q) {
			return fq, 0, false
		}
		switch code {
		case 10, 12:
		case 8:
			if fq.ecs != 0 || !echoableECS(q[o+4:o+4+olen]) {
				return fq, 0, false
			}
			fq.ecs, fq.ecsLen = o, 4+olen
		default:
			return fq, 0, false
		}
		o += 4 + olen
	}
	size := int(q[off+3])<<8 | int(q[off+4])
	fq.limit = min(max(size, 512), maxSize)
	if tcp {
		fq.limit = 0xFFFF
	}
	key[n] = 1 | tcpBit | q[off+7]&0xC0 // EDNS, transport, DO and CO bits
	return fq, n + 1, true
}

// lowerName copies the wire-form name (at most 255 bytes) into key, lower
// case, and returns its length. Its length bytes (at most 63) are below
// 'A', so the name is lowered as a whole, eight bytes at a time: of each
// byte without the high bit, 'A' to 'Z' gain 0x20 (the bytes key holds
// past the name change too; the caller overwrites them).
func lowerName(key *[300]byte, name []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	copy(key[:], name)
	for i := 0; i < len(name) && i <= len(key)-8; i += 8 {
		w := binary.LittleEndian.Uint64(key[i:])
		h := w &^ highs
		upper := (h + (0x80-'A')*ones) &^ (h + (0x80-'Z'-1)*ones) &^ w & highs
		binary.LittleEndian.PutUint64(key[i:], w|upper>>2)
	}
	return len(name)
}

// echoableECS reports whether an EDNS Client Subnet option's data is in the
// form the general path echoes unchanged: family 1 or 2, a source prefix
// length the family allows, SCOPE PREFIX-LENGTH 0, exactly the address
// bytes the prefix needs, and no bits set beyond the prefix (RFC 7871
// section 6). Any other option takes the general path.
func echoableECS(d []byte) bool {
	if len(d) < 4 || d[0] != 0 || d[3] != 0 {
		return false
	}
	src := int(d[2])
	switch d[1] {
	case 1:
		if src > 32 {
			return false
		}
	case 2:
		if src > 128 {
			return false
		}
	default:
		return false
	}
	need := (src + 7) / 8
	if len(d) != 4+need {
		return false
	}
	if r := src % 8; r != 0 && d[4+need-1]&(0xFF>>r) != 0 {
		return false
	}
	return true
}

// fastTCPMax is the largest TCP reply the cache keeps (larger ones, rare in
// a GSLB zone, take the general path each time).
const fastTCPMax = 4096

// RespondUDP answers one UDP query like RespondWire(query, src, false),
// byte for byte, but from the packed-reply cache when it can (see the
// package doc); the reply is written into buf when it fits.
func (p *Engine) RespondUDP(query, buf []byte, src netip.Addr) []byte {
	return p.respondFast(query, buf, src, false)
}

// RespondTCP is RespondUDP for a query received over TCP (no size limit,
// the cache's TCP entries).
func (p *Engine) RespondTCP(query, buf []byte, src netip.Addr) []byte {
	return p.respondFast(query, buf, src, true)
}

func (p *Engine) respondFast(query, buf []byte, src netip.Addr, tcp bool) []byte {
	var key [300]byte
	fq, n, ok := parseFast(query, &key, p.maxUDPSize(), tcp)
	c := p.cache()
	if ok && !c.static {
		h := c.door.hash(key[:n])
		if out := c.hotReply(h, key[:n], query, buf, fq); out != nil {
			return out
		}
		if out := p.staticReply(c, query, buf, fq, key[:fq.nameEnd-12], key[n-1]); out != nil {
			c.hotStore(h, key[:n], out, fq)
			return out
		}
	}
	if ok {
		c.mu.RLock()
		e := c.m[string(key[:n])]
		c.mu.RUnlock()
		if e.h != nil && e.h.mark == nil {
			out, got, scope, ok := e.h.respond(query, buf, fq, src)
			if ok {
				return out
			}
			pre := hookAnswer{got, scope} // allocated only here, on the general path
			out, _ = p.respondWire(c.v, query, src, tcp, &pre)
			if e.h.proof != nil && !e.h.proof.mark.fresh() && out != nil && len(out) >= fq.nameEnd {
				// A wildcard's proof past its reuse time: renew the entry
				// from this reply (same key).
				if h := newHookedEntry(p, c, key[:n], fq.nameEnd-12, fq, out); h != nil {
					c.mu.Lock()
					if old := c.m[string(key[:n])].h; old == e.h {
						c.m[string(key[:n])] = fastEntry{h: h}
						c.bytes += h.size() - old.size()
					}
					c.mu.Unlock()
				}
			}
			return out
		}
		if t := e.reply; t != nil && len(t)+fq.ecsLen <= fq.limit && (e.h == nil || e.h.mark.fresh()) {
			return patchReply(append(buf[:0], t...), query, fq)
		}
	}
	var out []byte
	cacheable := false
	if ok && c.static {
		out = p.staticReply(c, query, buf, fq, key[:fq.nameEnd-12], key[n-1])
		cacheable = out != nil
	}
	if out == nil {
		out, cacheable = p.respondWire(c.v, query, src, tcp, nil)
	}
	if !ok || out == nil || len(out) < fq.nameEnd || (tcp && len(out) > fastTCPMax) {
		return out
	}
	if !cacheable {
		if out[2]&0x02 != 0 {
			return out // truncated: nothing to assemble
		}
		// Perhaps a hooked answer the fast path can assemble next time.
		if c.full(fastHookedBytes) || !c.door.admit(key[:n]) {
			return out
		}
		if h := newHookedEntry(p, c, key[:n], fq.nameEnd-12, fq, out); h != nil {
			c.mu.Lock()
			if size := h.size(); c.bytes+size <= c.budget {
				c.m[string(key[:n])] = fastEntry{h: h}
				c.bytes += size
			}
			c.mu.Unlock()
		}
		return out
	}
	k, storable := storedLen(out, fq)
	if !storable {
		return out
	}
	size := n + k + fastEntryOverhead
	if c.full(size) || !c.door.admit(key[:n]) {
		return out
	}
	t := make([]byte, k)
	storeReply(t, out, key[:n], fq)
	c.mu.Lock()
	if c.bytes+size <= c.budget {
		if _, dup := c.m[string(key[:n])]; !dup {
			c.bytes += size
		}
		c.m[string(key[:n])] = fastEntry{reply: t, h: c.v.markFor(key[:n], fq.nameEnd-12)}
	}
	c.mu.Unlock()
	return out
}

// patchReply makes out, a copy of a stored reply (ID 0, RD and CD clear,
// question in lower case, no EDNS Client Subnet option), the reply to
// query: its ID, RD and CD bits and question name as asked, and the query's
// option echoed.
func patchReply(out, query []byte, fq fastQuery) []byte {
	out[0], out[1] = query[0], query[1]
	out[2] |= query[2] & 0x01 // RD
	out[3] |= query[3] & 0x10 // CD
	copy(out[12:fq.nameEnd], query[12:fq.nameEnd])
	if fq.ecsLen > 0 {
		// The OPT record ends the reply with no options: its RDLENGTH
		// is the last two bytes; the echoed option follows them.
		out[len(out)-2], out[len(out)-1] = byte(fq.ecsLen>>8), byte(fq.ecsLen)
		out = append(out, query[fq.ecs:fq.ecs+fq.ecsLen]...)
	}
	return out
}

// storedLen returns the length of reply out in the form the cache stores
// (see patchReply): without the echoed EDNS Client Subnet option; ok is
// false for a reply not of that shape, which is not stored.
func storedLen(out []byte, fq fastQuery) (k int, ok bool) {
	k = len(out)
	if fq.ecsLen > 0 {
		k -= fq.ecsLen
		if k < fq.nameEnd+11 || out[k-11] != 0 || out[k-10] != 0 || out[k-9] != 41 ||
			int(out[k-2])<<8|int(out[k-1]) != fq.ecsLen {
			return 0, false
		}
	}
	return k, true
}

// storeReply writes reply out to a query of key (fq from parseFast) into
// t, of out's storedLen, in the form the cache stores.
func storeReply(t, out, key []byte, fq fastQuery) {
	k := len(t)
	copy(t, out[:k])
	t[0], t[1] = 0, 0
	t[2] &^= 0x01
	t[3] &^= 0x10
	copy(t[12:fq.nameEnd], key[:fq.nameEnd-12])
	if fq.ecsLen > 0 {
		t[k-2], t[k-1] = 0, 0
	}
}
