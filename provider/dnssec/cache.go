package dnssec

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// The signature cache. An entry is keyed by the exact RRset: the owner in
// lower case, type, class, TTL and the records' data in wire form, sorted
// and without duplicates (the order of the records in an answer does not
// change its signature, RFC 4034 section 6.3). It holds the RRSIGs, the
// key generation they were made with, and when they are due for refresh
// and when they expire. The cache is bounded by entries and by estimated
// bytes; when a new entry would cross a bound, arbitrary entries (Go's map
// order) are dropped until the cache is at 7/8 of both bounds.

type sigEntry struct {
	sigs    []*dns.RRSIG
	gen     uint64
	refresh int64 // Unix seconds: make a new signature from then
	expire  int64 // Unix seconds: the signatures' expiration
	bytes   int
}

type sigCache struct {
	mu      sync.RWMutex
	m       map[string]*sigEntry
	bytes   int
	evicted uint64

	bmu    sync.Mutex // the budget's token bucket
	tokens float64
	last   time.Time
}

func (c *sigCache) init(cfg Config) {
	c.m = make(map[string]*sigEntry)
	c.tokens = float64(cfg.SignaturesPerSecond)
}

func (c *sigCache) get(key []byte) *sigEntry {
	c.mu.RLock()
	e := c.m[string(key)]
	c.mu.RUnlock()
	return e
}

func (c *sigCache) clear() {
	c.mu.Lock()
	c.m = make(map[string]*sigEntry)
	c.bytes = 0
	c.mu.Unlock()
}

func (c *sigCache) size() (entries, bytes int, evicted uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m), c.bytes, c.evicted
}

// entryOverhead estimates what one entry costs beyond its key and
// signatures' text: the map slot, the entry and the RRSIG structs.
const entryOverhead = 160

func (c *sigCache) put(key string, e *sigEntry, cfg Config) {
	e.bytes = len(key) + entryOverhead
	for _, s := range e.sigs {
		e.bytes += len(s.Signature) + len(s.SignerName) + len(s.Hdr.Name) + 96
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.m[key]; old != nil {
		c.bytes -= old.bytes
		delete(c.m, key)
	}
	if len(c.m)+1 > cfg.CacheEntries || c.bytes+e.bytes > cfg.CacheBytes {
		maxN, maxB := cfg.CacheEntries-cfg.CacheEntries/8, cfg.CacheBytes-cfg.CacheBytes/8
		for k, v := range c.m {
			if len(c.m) < maxN && c.bytes+e.bytes <= maxB {
				break
			}
			delete(c.m, k)
			c.bytes -= v.bytes
			c.evicted++
		}
	}
	if e.bytes > cfg.CacheBytes {
		return // larger than the whole cache: not kept
	}
	c.m[key] = e
	c.bytes += e.bytes
}

// take spends one signature of the budget (a token bucket of rate tokens a
// second and as many at most), reporting whether there was one.
func (c *sigCache) take(now time.Time, rate int) bool {
	c.bmu.Lock()
	defer c.bmu.Unlock()
	if !c.last.IsZero() {
		if d := now.Sub(c.last); d > 0 {
			c.tokens = min(float64(rate), c.tokens+d.Seconds()*float64(rate))
		}
	}
	if now.After(c.last) || c.last.IsZero() {
		c.last = now
	}
	if c.tokens < 1 {
		return false
	}
	c.tokens--
	return true
}

// cacheKey returns the cache key of rrset (appended to buf) and the RRset
// to sign: rrset without duplicate records. Every record must have the
// first one's owner (any case), type and class.
func cacheKey(rrset []dns.RR, buf []byte) ([]byte, []dns.RR, error) {
	h0 := rrset[0].Header()
	owner := strings.ToLower(h0.Name)
	type item struct {
		data []byte
		rr   dns.RR
	}
	items := make([]item, 0, len(rrset))
	var tmp [1024]byte
	for _, rr := range rrset {
		h := rr.Header()
		if h.Rrtype != h0.Rrtype || h.Class != h0.Class || !strings.EqualFold(h.Name, h0.Name) {
			return nil, nil, fmt.Errorf("dnssec: not one RRset: %s %s and %s %s", h0.Name, dns.TypeToString[h0.Rrtype], h.Name, dns.TypeToString[h.Rrtype])
		}
		b := tmp[:]
		off, err := dns.PackRR(rr, b, 0, nil, false)
		if err != nil {
			// Larger than tmp: pack into a buffer of its own.
			b = make([]byte, dns.MaxMsgSize)
			if off, err = dns.PackRR(rr, b, 0, nil, false); err != nil {
				return nil, nil, fmt.Errorf("dnssec: %w", err)
			}
		}
		_, n, err := dns.UnpackDomainName(b[:off], 0)
		if err != nil || n+10 > off {
			return nil, nil, fmt.Errorf("dnssec: packing %s: %v", h.Name, err)
		}
		items = append(items, item{data: slices.Clone(b[n+10 : off]), rr: rr})
	}
	slices.SortFunc(items, func(a, b item) int { return bytes.Compare(a.data, b.data) })
	items = slices.CompactFunc(items, func(a, b item) bool { return bytes.Equal(a.data, b.data) })
	buf = append(buf, owner...)
	buf = append(buf, 0, byte(h0.Rrtype>>8), byte(h0.Rrtype), byte(h0.Class>>8), byte(h0.Class),
		byte(h0.Ttl>>24), byte(h0.Ttl>>16), byte(h0.Ttl>>8), byte(h0.Ttl))
	set := rrset
	if len(items) != len(rrset) {
		set = make([]dns.RR, len(items))
	}
	for i, it := range items {
		buf = append(buf, byte(len(it.data)>>8), byte(len(it.data)))
		buf = append(buf, it.data...)
		if len(items) != len(rrset) {
			set[i] = it.rr
		}
	}
	return buf, set, nil
}
