package answer

import (
	"math/rand/v2"
	"sync/atomic"
	"unsafe"
)

// The hot table. In a view too large for the cache to keep its plain
// answers (cachesStatic), staticReply answers them without the cache (see
// fastpath.go), at under twice the instructions of a cache hit.
// The questions asked most (a skewed load's head) are kept as packed
// replies in a table of hotSlots fixed slots, allocated once per cache
// (on its first entry) and never grown: a slot holds one key and its
// reply of at most hotSlotBytes together, the key's hash choosing the
// slot. A static answer is offered to the table one time in hotSample (a
// question asked often is offered soon; one asked rarely seldom costs the
// offer's lock and copy) and enters from its second offer on (the
// doorkeeper, fastadmit.go), replacing the slot's entry unless that entry
// was answered since it was written or last spared (a second chance: an
// entry answered between two contenders stays). Nothing is allocated per
// entry, so the table's memory is its size whatever the load, and a
// uniform load over many names costs a missed slot (one hash, one
// comparison of a tag the CPU's cache holds) before its static answer. A cache whose budget
// (cacheBudget) is smaller than the table has none, and neither has one
// whose map keeps the static answers (a small view: cachesStatic).

const (
	hotSlots     = 1024
	hotSlotBytes = 200
	hotSample    = 8
)

// hotTable is the hot table's slots, and beside them each slot's tag, the
// high 32 bits of its key's hash (written with the slot), and its used
// mark, set when it answers and cleared when a contender is refused. A
// question compares its tag first, and an offer reads the mark, from 8 KiB
// that stay in the CPU's cache; a slot is read only when the tags agree.
// Under a spread load over a large zone, where most questions have no
// slot, reading the slot was a cache miss per query.
type hotTable struct {
	tags  [hotSlots]uint32
	used  [hotSlots]atomic.Uint32
	slots [hotSlots]hotSlot
}

// hotSlot is one slot: key b[:kn] and its reply b[kn:kn+rn] in the form
// the cache stores (see storedReply), written under the cache's lock.
type hotSlot struct {
	kn uint8
	rn uint16
	b  [hotSlotBytes]byte
}

// hotReply writes the reply to query (key of hash h; fq from parseFast)
// from the hot table into buf, or returns nil.
func (c *fastCache) hotReply(h uint64, key, query, buf []byte, fq fastQuery) []byte {
	t := c.hot.Load()
	if t == nil {
		return nil
	}
	i := h % hotSlots
	s := &t.slots[i]
	c.mu.RLock()
	if t.tags[i] != uint32(h>>32) || int(s.kn) != len(key) || string(s.b[:s.kn]) != string(key) || int(s.rn)+fq.ecsLen > fq.limit {
		c.mu.RUnlock()
		return nil
	}
	out := append(buf[:0], s.b[s.kn:int(s.kn)+int(s.rn)]...)
	c.mu.RUnlock()
	if t.used[i].Load() == 0 {
		t.used[i].Store(1)
	}
	return patchReply(out, query, fq)
}

// hotStore offers the static reply out to query (key of hash h) to the
// hot table (see above), one time in hotSample (at random).
func (c *fastCache) hotStore(h uint64, key, out []byte, fq fastQuery) {
	if rand.Uint32()%hotSample != 0 {
		return
	}
	k, ok := storedLen(out, fq)
	if !ok || len(key)+k > hotSlotBytes || c.budget < int(unsafe.Sizeof(hotTable{})) {
		return
	}
	t := c.hot.Load()
	i := h % hotSlots
	if t != nil && t.used[i].Load() != 0 {
		t.used[i].Store(0) // spared once
		return
	}
	if !c.door.admitHash(h) {
		return
	}
	c.mu.Lock()
	if t = c.hot.Load(); t == nil {
		t = new(hotTable)
		c.hot.Store(t)
	}
	s := &t.slots[i]
	t.tags[i] = uint32(h >> 32)
	s.kn, s.rn = uint8(len(key)), uint16(k)
	copy(s.b[:], key)
	storeReply(s.b[len(key):len(key)+k], out, key, fq)
	t.used[i].Store(0)
	c.mu.Unlock()
}
