package probe

import (
	"math/bits"
	"time"
)

// monSchedule is the Monitor's schedule: its queued targets in the order of
// their due times, ties in the order they were pushed (targets due at the
// same instant are probed first come, first served). It is a calendar
// queue, so that its cost per check does not grow with the number of
// targets, in instructions nor in cache misses.
//
// A push files the target by due time in a bucket of monBucketNanos (about
// 34 ms, the order of the Monitor's dispatch grain, see monGrain) on a ring
// of monRingBuckets buckets (about 69 s ahead): an append to the bucket's
// array, O(1), whose tail is in the cache. Only the entries of buckets up to
// the current one, cur, are in exact order, in near, a 4-ary min-heap of
// the checks due within a bucket or so (some 340 entries, 11 KB, at 10,000
// checks a second: it stays in the L1 cache). When near runs empty, the
// next non-empty bucket (a bitmap of the ring says which) becomes cur and
// its array becomes near's, heapified in O(m). A target due before cur
// ends goes into near directly; one due beyond the ring waits in far, a
// second 4-ary heap, and moves to the ring (or near) once the ring reaches
// it: only targets whose interval is longer than the ring (69 s) pay for a
// sift in a large heap, as every check did when the schedule was one heap
// (a 3.2 MB array at 100,000 targets, larger than the L2 cache, whose sift
// touched two or three cache lines per level).
//
// Removal and re-keying are O(1) in the ring and O(log n) in the heaps,
// without a search: the schedule keeps each target's location (container
// and index) in a dense array by slot, a small number it gives each target
// at its first push (4 bytes a target). Entries keep their due time (an
// offset from the first one pushed), their tie-breaker, their target and
// its slot, so moving an entry updates its location without reading the
// target's record, which lies elsewhere in memory; taking the earliest
// target reads near's root entry only. A ring bucket is found from the
// target's due time, which is its entry's key.
//
// Arrays of buckets emptied are kept for the next bucket filled, so the
// schedule allocates only when a bucket holds more than ever before or more
// buckets are in use at once: not in a steady state.
//
// The schedule is not safe for concurrent use; the Monitor guards it with
// its mutex.
type monSchedule struct {
	n       int       // queued targets
	seq     uint64    // push counter for stable ordering of equal due times
	base    time.Time // the first due time pushed: keys are offsets from it
	started bool      // base is set

	near monSchedHeap // the entries of buckets up to cur, in exact order
	cur  int64        // the bucket near has reached

	// ring holds the entries of buckets cur+1 to cur+monRingBuckets-1, in
	// no order, bucket b at ring[b&monRingMask]; full has a bit set for
	// each non-empty position. spare holds emptied arrays for reuse.
	ring    [][]monSchedEntry
	full    [monRingBuckets / 64]uint64
	ringLen int
	spare   [][]monSchedEntry

	far monSchedHeap // the entries of buckets from cur+monRingBuckets on

	// loc holds, by slot (monTarget.slot - 1), the target's location, or
	// monSchedNone; free holds the slots released by untrack.
	loc  []monSchedLoc
	free []int32
}

// The schedule's calendar: buckets of 2^25 ns (33.6 ms), a ring of 2,048 of
// them (68.7 s).
const (
	monBucketShift = 25
	monBucketNanos = 1 << monBucketShift
	monRingBuckets = 2048
	monRingMask    = monRingBuckets - 1
)

// monSchedEntry is one queued target: key is its due time as an offset from
// monSchedule.base (time.Time.Sub, so the monotonic clock where both have
// it), seq its push number. The entry keeps its target's slot too, so that
// moving it writes its location without reading the target.
type monSchedEntry struct {
	key  int64
	seq  uint64
	t    *monTarget
	slot int32
}

// bucket returns the calendar bucket of e's due time.
func (e *monSchedEntry) bucket() int64 { return e.key >> monBucketShift }

// monSchedLoc is where a queued target's entry is: its container in the top
// two bits (monSchedNear, monSchedRing or monSchedFar), its index there in
// the others; monSchedNone for a target not queued.
type monSchedLoc uint32

const (
	monSchedNear  monSchedLoc = 0 << 30
	monSchedRing  monSchedLoc = 1 << 30
	monSchedFar   monSchedLoc = 2 << 30
	monSchedNone  monSchedLoc = 1<<32 - 1
	monSchedWhere monSchedLoc = 3 << 30 // the container's bits
)

// Len returns the number of queued targets.
func (s *monSchedule) Len() int { return s.n }

// queued reports whether t is in the schedule.
func (s *monSchedule) queued(t *monTarget) bool {
	_, _, ok := s.find(t)
	return ok
}

// first reports whether t is the earliest target queued.
func (s *monSchedule) first(t *monTarget) bool { return t != nil && s.peek() == t }

// find returns the container of t's entry (monSchedNear, monSchedRing or
// monSchedFar) and the entry's index there, or false when t is not queued.
func (s *monSchedule) find(t *monTarget) (monSchedLoc, int, bool) {
	if t.slot <= 0 || int(t.slot) > len(s.loc) {
		return 0, 0, false
	}
	l := s.loc[t.slot-1]
	if l == monSchedNone {
		return 0, 0, false
	}
	where, i := l&monSchedWhere, int(l&^monSchedWhere)
	var a []monSchedEntry
	switch where {
	case monSchedNear:
		a = s.near.items
	case monSchedFar:
		a = s.far.items
	default:
		a = s.ring[s.ringPos(t)]
	}
	if i >= len(a) || a[i].t != t {
		return 0, 0, false
	}
	return where, i, true
}

// ringPos returns the ring position of queued target t's bucket: its entry's
// key is its due time's offset from base.
func (s *monSchedule) ringPos(t *monTarget) int {
	return int((int64(t.due.Sub(s.base)) >> monBucketShift) & monRingMask)
}

// peek returns the earliest target, or nil when the schedule is empty.
func (s *monSchedule) peek() *monTarget {
	if len(s.near.items) == 0 && !s.advance() {
		return nil
	}
	return s.near.items[0].t
}

// pop removes and returns the earliest target; nil when empty.
func (s *monSchedule) pop() *monTarget {
	if len(s.near.items) == 0 && !s.advance() {
		return nil
	}
	e := s.near.pop(s.loc)
	s.loc[e.slot] = monSchedNone
	s.n--
	return e.t
}

// push queues t at due, giving t a slot first if it has none. t must not
// be queued already.
func (s *monSchedule) push(t *monTarget, due time.Time) {
	if t.slot <= 0 || int(t.slot) > len(s.loc) {
		s.track(t)
	}
	t.due = due
	if !s.started {
		// The ring starts half behind the first due time, half ahead.
		s.base, s.started = due, true
		s.cur = -monRingBuckets / 2
		s.far.where = monSchedFar
	}
	s.seq++
	s.n++
	s.file(monSchedEntry{key: int64(due.Sub(s.base)), seq: s.seq, t: t, slot: t.slot - 1})
}

// file puts e where its bucket belongs: near, the ring or far.
func (s *monSchedule) file(e monSchedEntry) {
	switch b := e.bucket(); {
	case b <= s.cur:
		s.near.push(s.loc, e)
	case b < s.cur+monRingBuckets:
		s.ringAppend(b, e)
	default:
		s.far.push(s.loc, e)
	}
}

// ringAppend appends e to bucket b of the ring.
func (s *monSchedule) ringAppend(b int64, e monSchedEntry) {
	if s.ring == nil {
		s.ring = make([][]monSchedEntry, monRingBuckets)
	}
	p := int(b & monRingMask)
	a := s.ring[p]
	if len(a) == 0 { // nil: an emptied bucket gives its array to spare
		if n := len(s.spare); n > 0 {
			a = s.spare[n-1]
			s.spare[n-1] = nil
			s.spare = s.spare[:n-1]
		}
		s.full[p/64] |= 1 << (p % 64)
	}
	s.loc[e.slot] = monSchedRing | monSchedLoc(len(a))
	s.ring[p] = append(a, e)
	s.ringLen++
}

// ringRemove removes the entry at index i of ring position p.
func (s *monSchedule) ringRemove(p, i int) {
	a := s.ring[p]
	n := len(a) - 1
	if i != n {
		a[i] = a[n]
		s.loc[a[i].slot] = monSchedRing | monSchedLoc(i)
	}
	a[n] = monSchedEntry{}
	s.ringLen--
	if n > 0 {
		s.ring[p] = a[:n]
		return
	}
	s.full[p/64] &^= 1 << (p % 64)
	s.ring[p] = nil
	s.spare = append(s.spare, a[:0])
}

// nextBucket returns the earliest non-empty bucket of the ring, which must
// have one.
func (s *monSchedule) nextBucket() int64 {
	start := int((s.cur + 1) & monRingMask)
	w := start / 64
	word := s.full[w] &^ (1<<(start%64) - 1)
	for word == 0 {
		w = (w + 1) % len(s.full)
		word = s.full[w]
	}
	p := w*64 + bits.TrailingZeros64(word)
	return s.cur + 1 + int64((p-start)&monRingMask)
}

// advance makes the earliest non-empty bucket cur when near is empty: its
// entries become near's, and those of far that the ring now reaches move
// to the ring. It reports false when nothing is queued.
func (s *monSchedule) advance() bool {
	var b int64
	switch {
	case s.ringLen > 0:
		b = s.nextBucket()
	case len(s.far.items) > 0:
		b = s.far.items[0].bucket()
	default:
		return false
	}
	s.cur = b
	if s.ring != nil {
		s.drain(int(b & monRingMask))
	}
	for len(s.far.items) > 0 && s.far.items[0].bucket() < b+monRingBuckets {
		s.file(s.far.pop(s.loc))
	}
	return true
}

// drain makes the array of ring position p near's, which is empty, and
// heapifies it.
func (s *monSchedule) drain(p int) {
	a := s.ring[p]
	if len(a) == 0 {
		return
	}
	if old := s.near.items; cap(old) > 0 {
		s.spare = append(s.spare, old[:0])
	}
	s.ring[p] = nil
	s.full[p/64] &^= 1 << (p % 64)
	s.ringLen -= len(a)
	s.near.items = a
	for i := range a {
		s.loc[a[i].slot] = monSchedNear | monSchedLoc(i)
	}
	for i := (len(a) - 2) / 4; i >= 0; i-- {
		s.near.down(s.loc, i)
	}
}

// track gives t a slot.
func (s *monSchedule) track(t *monTarget) {
	var i int32
	if n := len(s.free); n > 0 {
		i = s.free[n-1]
		s.free = s.free[:n-1]
		s.loc[i] = monSchedNone
	} else {
		i = int32(len(s.loc))
		s.loc = append(s.loc, monSchedNone)
	}
	t.slot = i + 1
}

// untrack takes t out of the schedule if it is queued and releases its
// slot: the Monitor no longer has t. A later push gives it a new one.
func (s *monSchedule) untrack(t *monTarget) {
	if t.slot <= 0 || int(t.slot) > len(s.loc) {
		return
	}
	s.remove(t)
	s.free = append(s.free, t.slot-1)
	t.slot = 0
}

// remove takes t out of the schedule if it is queued.
func (s *monSchedule) remove(t *monTarget) {
	where, i, ok := s.find(t)
	if !ok {
		return
	}
	switch where {
	case monSchedNear:
		s.near.remove(s.loc, i)
	case monSchedFar:
		s.far.remove(s.loc, i)
	default:
		s.ringRemove(s.ringPos(t), i)
	}
	s.loc[t.slot-1] = monSchedNone
	s.n--
}

// monSchedHeap is a 4-ary min-heap of entries by due time, then push
// order: near or far of a monSchedule. Each method takes the schedule's
// locations and records in them the index of every entry it moves. Four
// children per node halve the levels a sift crosses, and a sift moves a
// hole and writes the sifted entry once.
type monSchedHeap struct {
	items []monSchedEntry
	where monSchedLoc // monSchedNear or monSchedFar
}

// before reports whether entry a sorts before entry b.
func before(a, b *monSchedEntry) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	return a.seq < b.seq
}

// set places x at i and records its location.
func (h *monSchedHeap) set(loc []monSchedLoc, i int, x monSchedEntry) {
	h.items[i] = x
	loc[x.slot] = h.where | monSchedLoc(i)
}

func (h *monSchedHeap) push(loc []monSchedLoc, e monSchedEntry) {
	h.items = append(h.items, e)
	h.up(loc, len(h.items)-1)
}

// pop removes and returns the root, leaving its location to the caller.
func (h *monSchedHeap) pop(loc []monSchedLoc) monSchedEntry {
	e := h.items[0]
	h.remove(loc, 0)
	return e
}

// remove removes the entry at i, leaving its location to the caller.
func (h *monSchedHeap) remove(loc []monSchedLoc, i int) {
	n := len(h.items) - 1
	if i != n {
		h.items[i] = h.items[n]
	}
	h.items[n] = monSchedEntry{}
	h.items = h.items[:n]
	if i != n && !h.down(loc, i) {
		h.up(loc, i)
	}
}

// up sifts the entry at i toward the root and records its location.
func (h *monSchedHeap) up(loc []monSchedLoc, i int) {
	x := h.items[i]
	for i > 0 {
		p := (i - 1) / 4
		if !before(&x, &h.items[p]) {
			break
		}
		h.set(loc, i, h.items[p])
		i = p
	}
	h.set(loc, i, x)
}

// down sifts the entry at i toward the leaves, records its location and
// reports whether it moved.
func (h *monSchedHeap) down(loc []monSchedLoc, i int) bool {
	start := i
	n := len(h.items)
	x := h.items[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		// The smallest of up to four children.
		end := min(c+4, n)
		for k := c + 1; k < end; k++ {
			if before(&h.items[k], &h.items[c]) {
				c = k
			}
		}
		if !before(&h.items[c], &x) {
			break
		}
		h.set(loc, i, h.items[c])
		i = c
	}
	h.set(loc, i, x)
	return i > start
}
