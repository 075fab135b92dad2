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
	c := &fastCache{door: newDoorkeeper(), budget: fastCacheBytes}
	key := []byte("\x01a\x07example\x04test\x00\x00\x01\x00\x01\x00")
	reply := append(make([]byte, 12), key[:len(key)-1]...) // header, question
	fq := fastQuery{nameEnd: 12 + len(key) - 5, limit: 512}
	h := c.door.hash(key)
	for range 1000 { // offered one time in hotSample, entered on its second offer
		c.hotStore(h, key, reply, fq)
		if c.hot.Load() != nil && c.hot.Load().tags[h%hotSlots] == uint32(h>>32) {
			break
		}
	}
	tb := c.hot.Load()
	if tb == nil || tb.tags[h%hotSlots] != uint32(h>>32) {
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
