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
// replies in a table of fixed slots, allocated once per cache (on its
// first entry) and never grown: a slot holds one key and its reply of at
// most hotSlotBytes together, the key's hash choosing two adjacent slots
// it may take. A static answer is offered to the table one time in
// hotSample (a question asked often is offered soon; one asked rarely
// seldom costs the offer's lock and copy) and enters from its second
// offer on (the doorkeeper, fastadmit.go), replacing the entry of one of
// its slots that was not answered since it was written or last spared;
// when both were, both are spared and the offer refused (a second chance:
// an entry answered between two contenders stays). Nothing is allocated per entry, so the
// table's memory is its size whatever the load, and a uniform load over
// many names costs a missed slot (one hash, one comparison of a tag) before
// its static answer. A cache whose budget (cacheBudget) is smaller than the
// table has none, and neither has one whose map keeps the static answers
// (a small view: cachesStatic).
//
// The table's size follows the view (hotSlotsFor): a slot for every
// hotNamesPerSlot names, a power of two from hotSlotsMin to hotSlotsMax. A
// skewed load's head grows with the zone (Zipf-like, s = 1.1: the 1,024
// names asked most take some 85 % of the questions over 10,000 names but
// under 70 % over a million), and a question the table misses reads the
// zone's maps and nodes, lines a large zone's reply seldom finds in the
// CPU's cache. Fed bench/dns-vs-peers/scale.sh's Zipf-like queries in
// process, the table answered 60 % of them at 100,000 and at 1,000,000
// names with 1,024 slots against 73 % at 10,000; with 8,192 slots 68–74 %
// and 64–68 %. A larger table answered no more (65,536 slots: the same
// figures): a name past the first few thousand is asked too seldom to be
// admitted before the zone changes. So at most hotSlotsMax slots, some
// 1.8 MB a view (16 B a name at 100,000 names).
//
// Two slots a key (its hash's and the one beside it, the pair's tags in
// one cache line): two popular keys of one slot need not evict each other
// (1–2 points more of the questions above); a question reads one tag and,
// if it is not its own, the other.

const (
	hotSlotBytes    = 200
	hotSample       = 8
	hotSlotsMin     = 1024
	hotSlotsMax     = 8192
	hotNamesPerSlot = 16
)

// hotSlotsFor returns the hot table's slots for a view of names names (see
// above).
func hotSlotsFor(names int) int {
	n := hotSlotsMin
	for n < hotSlotsMax && n*hotNamesPerSlot < names {
		n *= 2
	}
	return n
}

// hotSlotSize is what a slot takes in the table: the slot, its tag and its
// used mark.
const hotSlotSize = int(unsafe.Sizeof(hotSlot{})) + 4 + 4

// hotTable is the hot table's slots, and beside them each slot's tag, the
// high 32 bits of its key's hash (written with the slot), and its used
// mark, set when it answers and cleared when a contender is refused. A
// question compares its tag first, and an offer reads the mark, from
// arrays a fortieth of the slots' size; a slot is read only when the tags
// agree. Under a spread load over a large zone, where most questions have
// no slot, reading the slot was a cache miss per query.
type hotTable struct {
	mask  uint64 // len(slots) - 1, a power of two less one
	tags  []uint32
	used  []atomic.Uint32
	slots []hotSlot
}

func newHotTable(slots int) *hotTable {
	return &hotTable{mask: uint64(slots - 1), tags: make([]uint32, slots), used: make([]atomic.Uint32, slots), slots: make([]hotSlot, slots)}
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
	i := h & t.mask
	c.mu.RLock() // tags are written under the lock, with their slots
	if t.tags[i] != uint32(h>>32) {
		i ^= 1 // the key's other way
	}
	s := &t.slots[i]
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
	if !ok || len(key)+k > hotSlotBytes || c.budget < c.hotSlots*hotSlotSize {
		return
	}
	t := c.hot.Load()
	if t != nil {
		i := h & t.mask
		if t.used[i].Load() != 0 && t.used[i^1].Load() != 0 {
			t.used[i].Store(0) // both spared once
			t.used[i^1].Store(0)
			return
		}
	}
	if !c.door.admitHash(h) {
		return
	}
	c.mu.Lock()
	if t = c.hot.Load(); t == nil {
		t = newHotTable(c.hotSlots)
		c.hot.Store(t)
	}
	i := h & t.mask
	if t.used[i].Load() != 0 || t.slots[i].kn != 0 && t.slots[i^1].kn == 0 {
		i ^= 1 // answered since written or spared, or the other is empty
	}
	s := &t.slots[i]
	t.tags[i] = uint32(h >> 32)
	s.kn, s.rn = uint8(len(key)), uint16(k)
	copy(s.b[:], key)
	storeReply(s.b[len(key):len(key)+k], out, key, fq)
	t.used[i].Store(0)
	c.mu.Unlock()
}
