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
// the current one, cur, are in exact order, in near (some 340 entries at
// 10,000 checks a second, 8 KB: it stays in the L1 cache). When near runs
// empty, the next non-empty bucket (a bitmap of the ring says which)
// becomes cur and its array becomes near's, heapified in O(m). A target due
// before cur ends goes into near directly; one due beyond the ring waits in
// far, a second heap, and moves to the ring (or near) once the ring reaches
// it: only targets whose interval is longer than the ring (69 s) pay for a
// sift in a large heap, as every check did when the schedule was one heap
// (a 3.2 MB array at 100,000 targets, larger than the L2 cache, whose sift
// touched two or three cache lines per level and wrote the index of every
// entry it moved).
//
// Removal and re-keying are O(1) in the ring and O(log n) in the heaps,
// without a search. Where a queued target's entry is follows from its due
// time (its bucket against cur: near, the ring or far); its index there is
// the target's qpos, written when the entry is filed, while the target's
// record is in the cache anyway (push writes its due time beside it).
// Nothing else moves a ring entry but the removal of another from the same
// bucket, and nothing moves an entry of near's array: near orders the
// positions of its entries in a heap of its own (see monPosHeap), so that a
// sift moves 4-byte positions in the L1 cache and writes to no target's
// record. Far is ordered the same way; taking an entry out of it moves its
// last entry into the hole (one record written). An entry keeps its due time (an offset from the
// first one pushed), its tie-breaker and its target (24 bytes); taking the
// earliest target reads near's first entry only.
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

	near monPosHeap // the entries of buckets up to cur, in exact order
	cur  int64      // the bucket near has reached

	// ring holds the entries of buckets cur+1 to cur+monRingBuckets-1, in
	// no order, bucket b at ring[b&monRingMask] (nil when empty); full has
	// a bit set for each non-empty position. spare holds emptied arrays for
	// reuse.
	ring    [][]monSchedEntry
	full    [monRingBuckets / 64]uint64
	ringLen int
	spare   [][]monSchedEntry

	far monPosHeap // the entries of buckets from cur+monRingBuckets on, in exact order
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
// it), seq its push number. A nil t is a hole in near's array.
type monSchedEntry struct {
	key int64
	seq uint64
	t   *monTarget
}

// bucket returns the calendar bucket of e's due time.
func (e *monSchedEntry) bucket() int64 { return e.key >> monBucketShift }

// before reports whether entry a sorts before entry b.
func before(a, b *monSchedEntry) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	return a.seq < b.seq
}

// Len returns the number of queued targets.
func (s *monSchedule) Len() int { return s.n }

// queued reports whether t is in the schedule.
func (s *monSchedule) queued(t *monTarget) bool {
	a, i := s.find(t)
	return i < len(a) && a[i].t == t
}

// first reports whether t is the earliest target queued.
func (s *monSchedule) first(t *monTarget) bool { return t != nil && s.peek() == t }

// find returns the array that holds t's entry if t is queued, and the
// entry's index there (t.qpos): t is queued only if that index is in the
// array and its entry's target is t (qpos is stale once t is not queued).
func (s *monSchedule) find(t *monTarget) ([]monSchedEntry, int) {
	if !s.started {
		return nil, 0
	}
	i := int(t.qpos)
	switch b := s.bucketOf(t.due); {
	case b <= s.cur:
		return s.near.items, i
	case b < s.cur+monRingBuckets:
		return s.ring[b&monRingMask], i
	default:
		return s.far.items, i
	}
}

// bucketOf returns the bucket of due time due.
func (s *monSchedule) bucketOf(due time.Time) int64 {
	return int64(due.Sub(s.base)) >> monBucketShift
}

// peek returns the earliest target, or nil when the schedule is empty.
func (s *monSchedule) peek() *monTarget {
	if len(s.near.heap) == 0 && !s.advance() {
		return nil
	}
	return s.near.items[s.near.heap[0]].t
}

// pop removes and returns the earliest target; nil when empty.
func (s *monSchedule) pop() *monTarget {
	if len(s.near.heap) == 0 && !s.advance() {
		return nil
	}
	s.n--
	return s.near.remove(0)
}

// push queues t at due. t must not be queued already.
func (s *monSchedule) push(t *monTarget, due time.Time) {
	t.due = due
	if !s.started {
		// The ring starts half behind the first due time, half ahead.
		s.base, s.started = due, true
		s.cur = -monRingBuckets / 2
		if s.ring == nil {
			s.ring = make([][]monSchedEntry, monRingBuckets)
		}
	}
	s.seq++
	s.n++
	s.file(monSchedEntry{key: int64(due.Sub(s.base)), seq: s.seq, t: t})
}

// file puts e where its bucket belongs: near, the ring or far.
func (s *monSchedule) file(e monSchedEntry) {
	switch b := e.bucket(); {
	case b <= s.cur:
		s.near.push(e)
	case b < s.cur+monRingBuckets:
		s.ringAppend(int(b&monRingMask), e)
	default:
		s.far.push(e)
	}
}

// remove takes t out of the schedule if it is queued.
func (s *monSchedule) remove(t *monTarget) {
	a, i := s.find(t)
	if i >= len(a) || a[i].t != t {
		return
	}
	switch b := s.bucketOf(t.due); {
	case b <= s.cur:
		s.near.remove(int(s.near.at[i]))
	case b < s.cur+monRingBuckets:
		s.ringRemove(int(b&monRingMask), i)
	default:
		s.far.take(int(s.far.at[i]))
	}
	s.n--
}

// ringAppend appends e to the bucket at ring position p.
func (s *monSchedule) ringAppend(p int, e monSchedEntry) {
	a := s.ring[p]
	if len(a) == 0 { // nil: an emptied bucket gives its array to spare
		if n := len(s.spare); n > 0 {
			a = s.spare[n-1]
			s.spare[n-1] = nil
			s.spare = s.spare[:n-1]
		}
		s.full[p/64] |= 1 << (p % 64)
	}
	e.t.qpos = int32(len(a))
	s.ring[p] = append(a, e)
	s.ringLen++
}

// ringRemove removes the entry at index i of ring position p.
func (s *monSchedule) ringRemove(p, i int) {
	a := s.ring[p]
	n := len(a) - 1
	if i != n {
		a[i] = a[n]
		a[i].t.qpos = int32(i)
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
// array becomes near's, and the entries of far that the ring now reaches
// move to the ring (or near). It reports false when nothing is queued.
func (s *monSchedule) advance() bool {
	var b int64
	switch {
	case s.ringLen > 0:
		b = s.nextBucket()
	case len(s.far.heap) > 0:
		b = s.far.items[s.far.heap[0]].bucket()
	default:
		return false
	}
	s.cur = b
	if p := int(b & monRingMask); len(s.ring[p]) > 0 {
		a := s.ring[p]
		s.ring[p] = nil
		s.full[p/64] &^= 1 << (p % 64)
		s.ringLen -= len(a)
		if old := s.near.reset(a); cap(old) > 0 {
			s.spare = append(s.spare, old)
		}
	}
	for len(s.far.heap) > 0 && s.far.items[s.far.heap[0]].bucket() < b+monRingBuckets {
		s.file(s.far.take(0))
	}
	return true
}

// monPosHeap is a monSchedule's near or far: an array of entries, at the
// indexes their targets' qpos name, and a 4-ary min-heap of their positions
// by due time, then push order (four children per node halve the levels a
// sift crosses). A sift moves 4-byte positions, not entries: it writes
// neither the entries nor their targets' records. Entries removed by
// remove (near's) leave holes in items until the heap is empty; take
// (far's) fills the hole with the last entry instead.
type monPosHeap struct {
	items []monSchedEntry
	heap  []int32 // positions in items, a heap
	at    []int32 // by position: its index in heap
}

// reset makes a, whose entries' targets have their indexes in a as qpos,
// near's array, near being empty, and heapifies it. It returns near's old
// array, emptied.
func (h *monPosHeap) reset(a []monSchedEntry) []monSchedEntry {
	old := h.items[:0]
	h.items = a
	h.heap, h.at = h.heap[:0], h.at[:0]
	for i := range a {
		h.heap = append(h.heap, int32(i))
		h.at = append(h.at, int32(i))
	}
	for i := (len(a) - 2) / 4; i >= 0; i-- {
		h.down(i)
	}
	return old
}

// less reports whether the entry at position p sorts before the one at q.
func (h *monPosHeap) less(p, q int32) bool { return before(&h.items[p], &h.items[q]) }

// push adds e at the end of items.
func (h *monPosHeap) push(e monSchedEntry) {
	p := int32(len(h.items))
	e.t.qpos = p
	h.items = append(h.items, e)
	h.heap = append(h.heap, p)
	h.at = append(h.at, int32(len(h.heap)-1))
	h.up(len(h.heap) - 1)
}

// remove takes the entry whose position is at index i of heap out, leaving
// a hole, and returns its target. Once the heap is empty, so is items.
func (h *monPosHeap) remove(i int) *monTarget {
	p := h.heap[i]
	t := h.items[p].t
	h.items[p] = monSchedEntry{}
	n := len(h.heap) - 1
	if i != n {
		h.heap[i] = h.heap[n]
		h.at[h.heap[i]] = int32(i)
	}
	h.heap = h.heap[:n]
	if n == 0 {
		h.items, h.at = h.items[:0], h.at[:0]
	} else if i != n && !h.down(i) {
		h.up(i)
	}
	return t
}

// take removes the entry whose position is at index i of heap and returns
// it; the last entry of items moves to its position, so that items holds
// no holes.
func (h *monPosHeap) take(i int) monSchedEntry {
	p := h.heap[i]
	e := h.items[p]
	h.remove(i)
	if last := int32(len(h.items) - 1); last >= 0 {
		if p != last {
			h.items[p] = h.items[last]
			h.items[p].t.qpos = p
			k := h.at[last]
			h.heap[k], h.at[p] = p, k
		}
		h.items[last] = monSchedEntry{}
		h.items, h.at = h.items[:last], h.at[:last]
	}
	return e
}

// up sifts the position at index i of heap toward the root.
func (h *monPosHeap) up(i int) {
	x := h.heap[i]
	for i > 0 {
		p := (i - 1) / 4
		if !h.less(x, h.heap[p]) {
			break
		}
		h.heap[i] = h.heap[p]
		h.at[h.heap[i]] = int32(i)
		i = p
	}
	h.heap[i] = x
	h.at[x] = int32(i)
}

// down sifts the position at index i of heap toward the leaves and
// reports whether it moved.
func (h *monPosHeap) down(i int) bool {
	start := i
	n := len(h.heap)
	x := h.heap[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		// The smallest of up to four children.
		end := min(c+4, n)
		for k := c + 1; k < end; k++ {
			if h.less(h.heap[k], h.heap[c]) {
				c = k
			}
		}
		if !h.less(h.heap[c], x) {
			break
		}
		h.heap[i] = h.heap[c]
		h.at[h.heap[i]] = int32(i)
		i = c
	}
	h.heap[i] = x
	h.at[x] = int32(i)
	return i > start
}
