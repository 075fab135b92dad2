package answer

import (
	"fmt"
	"testing"
)

// TestDoorkeeper: a key is admitted on its second sighting, not its
// first, and the set clears itself after doorBits/8 first sightings.
func TestDoorkeeper(t *testing.T) {
	d := newDoorkeeper()
	if d.admit([]byte("a")) {
		t.Fatal("admitted on the first sighting")
	}
	if !d.admit([]byte("a")) {
		t.Fatal("not admitted on the second sighting")
	}
	fp := 0
	for i := range doorBits/8 - 1 { // the last one clears the set
		if d.admit(fmt.Appendf(nil, "k%d", i)) {
			fp++
		}
	}
	if fp > doorBits/8/16 {
		t.Errorf("%d of %d new keys taken for second sightings", fp, doorBits/8)
	}
	for i := range 2 * doorBits / 8 {
		d.admit(fmt.Appendf(nil, "x%d", i))
	}
	set := 0
	for i := range d.bits {
		for w := d.bits[i].Load(); w != 0; w &= w - 1 {
			set++
		}
	}
	if set > doorBits/4 {
		t.Errorf("%d of %d bits set: the set was not cleared", set, doorBits)
	}
}

// TestCachesStatic: a view's static answers are cached up to the names
// whose answers fill the budget's floor (2,496 with the default bounds, as
// cachesStatic's doc says), never past it, and not under a ceiling too
// small for them.
func TestCachesStatic(t *testing.T) {
	last := fastCacheFloor / (fastAnswersPerName * fastPlainEntryBytes)
	if last != 2496 {
		t.Errorf("static answers cached up to %d names; cachesStatic's doc says 2,496", last)
	}
	for _, tc := range []struct {
		names int
		want  bool
	}{{0, true}, {1, true}, {100, true}, {last, true}, {last + 1, false}, {10000, false}, {1 << 20, false}} {
		if got := cachesStatic(tc.names, cacheBudget(tc.names)); got != tc.want {
			t.Errorf("%d names: cachesStatic %v, want %v", tc.names, got, tc.want)
		}
	}
	if cachesStatic(100, 2000) {
		t.Errorf("100 names' answers cached in a budget of 2,000 bytes")
	}
}

// TestHotTableTags: a reply stored in the hot table is served to its key,
// and not to another key of the same slot, whose tag differs; a slot's
// tag is its key's.
func TestHotTableTags(t *testing.T) {
	c := &fastCache{door: newDoorkeeper(), budget: fastCacheBytes, hotSlots: hotSlotsMin}
	key := []byte("\x01a\x07example\x04test\x00\x00\x01\x00\x01\x00")
	reply := append(make([]byte, 12), key[:len(key)-1]...) // header, question
	fq := fastQuery{nameEnd: 12 + len(key) - 5, limit: 512}
	h := c.door.hash(key)
	for range 1000 { // offered one time in hotSample, entered on its second offer
		c.hotStore(h, key, reply, fq)
		if tb := c.hot.Load(); tb != nil && tb.tags[h&tb.mask] == uint32(h>>32) {
			break
		}
	}
	tb := c.hot.Load()
	if tb == nil || tb.tags[h&tb.mask] != uint32(h>>32) {
		t.Fatal("the reply never entered the hot table")
	}
	query := append([]byte{0x12, 0x34, 1, 0}, reply[4:]...)
	if got := c.hotReply(h, key, query, make([]byte, 512), fq); got == nil || got[0] != 0x12 || got[1] != 0x34 {
		t.Fatalf("hotReply = %x, want the stored reply with the query's ID", got)
	}
	other := h ^ 1<<40 // the same slot, another tag
	if got := c.hotReply(other, key, query, make([]byte, 512), fq); got != nil {
		t.Errorf("a key of another tag got %x from the slot", got)
	}
}

// TestHotTableTwoWays: two keys whose hashes choose the same pair of slots
// both enter the table and are both served, and a third is refused while
// both entries are answered between its offers, then takes the slot of
// the entry not answered since.
func TestHotTableTwoWays(t *testing.T) {
	c := &fastCache{door: newDoorkeeper(), budget: fastCacheBytes, hotSlots: hotSlotsMin}
	type entry struct {
		key, reply []byte
		fq         fastQuery
		h          uint64
	}
	mk := func(label string, h uint64) entry {
		key := []byte("\x01" + label + "\x07example\x04test\x00\x00\x01\x00\x01\x00")
		reply := append(make([]byte, 12), key[:len(key)-1]...)
		return entry{key, reply, fastQuery{nameEnd: 12 + len(key) - 5, limit: 512}, h}
	}
	// Hashes chosen, not computed: the same slot (6, paired with 7), three
	// tags; a and x on its pair's other slot too.
	a, b, x := mk("a", 1<<32|6), mk("b", 2<<32|6), mk("x", 3<<32|7)
	served := func(e entry) bool {
		return c.hotReply(e.h, e.key, append([]byte{0x12, 0x34, 1, 0}, e.reply[4:]...), make([]byte, 512), e.fq) != nil
	}
	enter := func(e entry) {
		t.Helper()
		for range 2000 {
			if c.hotStore(e.h, e.key, e.reply, e.fq); served(e) {
				return
			}
		}
		t.Fatalf("%q never entered the table", e.key)
	}
	enter(a)
	enter(b)
	if !served(a) || !served(b) {
		t.Fatal("two keys of one pair of slots: one evicted the other")
	}
	// Both answered: x's offers spare them, one offer each time; answered
	// again between offers, neither is replaced.
	for range 200 {
		c.hotStore(x.h, x.key, x.reply, x.fq)
		if served(x) {
			t.Fatal("x replaced an entry answered since it was last spared")
		}
		if !served(a) || !served(b) {
			t.Fatal("an answered entry was replaced")
		}
	}
	// Only b answered from now on: x takes a's slot.
	for range 2000 {
		c.hotStore(x.h, x.key, x.reply, x.fq)
		if served(x) {
			break
		}
		served(b)
	}
	if !served(x) || !served(b) || served(a) {
		t.Errorf("served x %v, b %v, a %v; want x and b, not a", served(x), served(b), served(a))
	}
}

// TestHotSlotsFor: the hot table follows the view's size from 1,024 slots
// up to 8,192.
func TestHotSlotsFor(t *testing.T) {
	for _, tc := range []struct{ names, want int }{
		{0, 1024}, {10000, 1024}, {16384, 1024}, {16385, 2048}, {100000, 8192}, {1000000, 8192},
	} {
		if got := hotSlotsFor(tc.names); got != tc.want {
			t.Errorf("hotSlotsFor(%d) = %d, want %d", tc.names, got, tc.want)
		}
	}
}

// TestHotTableConcurrent: offers and lookups of keys of one pair of slots
// from two goroutines (under -race: every read of a tag or slot a writer
// may change holds the cache's lock), and a reply served is always its
// key's.
func TestHotTableConcurrent(t *testing.T) {
	c := &fastCache{door: newDoorkeeper(), budget: fastCacheBytes, hotSlots: hotSlotsMin}
	type entry struct {
		key, reply []byte
		fq         fastQuery
		h          uint64
	}
	var es []entry
	for k, label := range []string{"a", "b", "x"} {
		key := []byte("\x01" + label + "\x07example\x04test\x00\x00\x01\x00\x01\x00")
		reply := append(make([]byte, 12), key[:len(key)-1]...)
		es = append(es, entry{key, reply, fastQuery{nameEnd: 12 + len(key) - 5, limit: 512}, uint64(k+1)<<32 | 6})
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 20000 {
			e := es[i%len(es)]
			c.hotStore(e.h, e.key, e.reply, e.fq)
		}
	}()
	buf := make([]byte, 512)
	for i := 0; ; i++ {
		select {
		case <-done:
			return
		default:
		}
		e := es[i%len(es)]
		query := append([]byte{0x12, 0x34, 1, 0}, e.reply[4:]...)
		if got := c.hotReply(e.h, e.key, query, buf, e.fq); got != nil && string(got[12:]) != string(e.reply[12:]) {
			t.Fatalf("key %q served %x", e.key, got)
		}
	}
}
