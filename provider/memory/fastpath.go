package memory

import (
	"net/netip"
	"sync"
)

// The UDP fast path. Answers in a GSLB zone change rarely, so the server
// keeps the packed replies the general path produced, keyed by what the
// reply depends on — the question name in lower case, the type, and the
// EDNS shape (none, or version 0 with no options but COOKIE and PADDING,
// DO clear or set) — and
// answers the next query with the same key by copying those bytes and
// patching the ID, the RD and CD bits and the question name as asked.
// The cache belongs to one zone state and one set of answer hooks: any
// change (a write, a hook registered) starts a new, empty cache, so stale
// bytes are never served. Replies that depend on more than the key (an
// answer hook consulted, EDNS Client Subnet, truncation, errors) are never
// cached, and queries the fast parser does not recognise take the general
// path. FuzzFastPath checks both paths give the same bytes.

// fastCacheMax bounds the entries of one cache (a flood of random names
// cannot grow it further; those queries take the general path).
const fastCacheMax = 16384

// fastCache holds packed replies for one view.
type fastCache struct {
	v  view
	mu sync.RWMutex
	m  map[string][]byte // key → reply with ID 0, RD and CD clear, question in lower case
}

// cache returns the fast cache for the current view, starting a new one
// when the zone or the hooks changed.
func (p *Provider) cache() *fastCache {
	v := p.view()
	c := p.fc.Load()
	if c != nil && c.v == v {
		return c
	}
	nc := &fastCache{v: v, m: make(map[string][]byte)}
	p.fc.CompareAndSwap(c, nc)
	return nc
}

// fastQuery is what the fast parser learns from a query.
type fastQuery struct {
	nameEnd int // offset just past the question name
	limit   int // the UDP size the reply must fit
}

// parseFast recognises the common query shape: a QUERY with one question
// in uncompressed form, no answer or authority records, and either no
// additional record or one OPT of version 0 without options. It writes the
// cache key into key and returns its length; ok is false for any other
// shape.
func parseFast(q []byte, key *[300]byte, maxSize int) (fq fastQuery, n int, ok bool) {
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
		key[n] = byte(l)
		n++
		for _, c := range q[off+1 : off+1+l] {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			key[n] = c
			n++
		}
		off += 1 + l
	}
	key[n] = 0
	n++
	off++
	fq.nameEnd = off
	if off+4 > len(q) {
		return fq, 0, false
	}
	key[n], key[n+1], key[n+2], key[n+3] = q[off], q[off+1], q[off+2], q[off+3] // type, class
	n += 4
	off += 4
	if q[11] == 0 {
		if off != len(q) {
			return fq, 0, false
		}
		key[n] = 0
		fq.limit = 512
		return fq, n + 1, true
	}
	// OPT: root name, type 41, class = UDP size, TTL = ext-rcode, version,
	// flags; options only of kinds the reply does not depend on (COOKIE,
	// PADDING: the zone answers neither).
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
		if (code != 10 && code != 12) || o+4+olen > len(q) {
			return fq, 0, false
		}
		o += 4 + olen
	}
	size := int(q[off+3])<<8 | int(q[off+4])
	fq.limit = min(max(size, 512), maxSize)
	key[n] = 1 | q[off+7]&0x80 // EDNS, DO bit
	return fq, n + 1, true
}

// RespondUDP answers one UDP query like RespondWire(query, src, false),
// byte for byte, but from the fast cache when it can; the reply is written
// into buf when it fits (pass a buffer of 4096 bytes to avoid allocating).
// It is what the Server's UDP loop calls.
func (p *Provider) RespondUDP(query, buf []byte, src netip.Addr) []byte {
	var key [300]byte
	fq, n, ok := parseFast(query, &key, p.maxUDPSize())
	c := p.cache()
	if ok {
		c.mu.RLock()
		t := c.m[string(key[:n])]
		c.mu.RUnlock()
		if t != nil && len(t) <= fq.limit {
			out := append(buf[:0], t...)
			out[0], out[1] = query[0], query[1]
			out[2] |= query[2] & 0x01 // RD
			out[3] |= query[3] & 0x10 // CD
			copy(out[12:fq.nameEnd], query[12:fq.nameEnd])
			return out
		}
	}
	out, cacheable := p.respondWire(c.v, query, src, false)
	if ok && cacheable && out != nil && len(out) >= fq.nameEnd {
		t := make([]byte, len(out))
		copy(t, out)
		t[0], t[1] = 0, 0
		t[2] &^= 0x01
		t[3] &^= 0x10
		copy(t[12:fq.nameEnd], key[:fq.nameEnd-12])
		c.mu.Lock()
		if len(c.m) < fastCacheMax {
			c.m[string(key[:n])] = t
		}
		c.mu.Unlock()
	}
	return out
}
