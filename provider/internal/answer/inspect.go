package answer

// What provider/memory's tests and benchmarks look at inside the fast path.

// ParseFast reports whether the fast path's parser accepts query (the
// shapes the cache keys; maxSize is the UDP size cap).
func ParseFast(query []byte, maxSize int, tcp bool) bool {
	var key [300]byte
	_, _, ok := parseFast(query, &key, maxSize, tcp)
	return ok
}

// StaticReply answers query as the fast path does past its cache:
// written straight from the zone's records when the answer is of the
// static kind (see faststatic.go), else nil. It never uses the cache.
func (p *Engine) StaticReply(query, buf []byte, tcp bool) []byte {
	var key [300]byte
	fq, n, ok := parseFast(query, &key, p.maxUDPSize(), tcp)
	if !ok {
		return nil
	}
	return p.staticReply(p.cache(), query, buf, fq, key[:fq.nameEnd-12], key[n-1])
}

// CacheStats returns the number of entries in the current cache (hooked
// ones among them) and the bytes counted against CacheBudget.
func (p *Engine) CacheStats() (entries, hooked, bytes int) {
	c := p.cache()
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, e := range c.m {
		if e.h != nil && e.h.mark == nil {
			hooked++
		}
	}
	return len(c.m), hooked, c.bytes
}

// CacheBudget returns the bytes one cache may hold; SetCacheBudget sets
// them (for tests: not safe while queries are answered) and returns the
// old budget.
func CacheBudget() int { return fastCacheBytes }

// SetCacheBudget: see CacheBudget.
func SetCacheBudget(n int) (old int) {
	old, fastCacheBytes = fastCacheBytes, n
	return old
}

// DropCache drops the cache, so that the next query starts an empty one.
func (p *Engine) DropCache() { p.fc.Store(nil) }

// CacheLimit returns the bytes the current cache may hold: its budget,
// which follows the view's size (see fastCacheBytes).
func (p *Engine) CacheLimit() int { return p.cache().budget }

// HotEntries returns the number of static answers in the current cache's
// hot table (fasthot.go).
func (p *Engine) HotEntries() int {
	c := p.cache()
	t := c.hot.Load()
	if t == nil {
		return 0
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := 0
	for i := range t.slots {
		if t.slots[i].kn != 0 {
			n++
		}
	}
	return n
}
