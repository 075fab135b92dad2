package probe

import "time"

// monHeap is the Monitor's timer heap: a 4-ary min-heap of targets ordered
// by due time (ties broken by the order they were pushed, so targets due at
// the same instant are probed first come, first served). Removal and
// re-keying are O(log n) without a search: the heap keeps each target's
// index. Four children per node halve the levels a sift crosses (7 instead
// of 14 at 10,000 targets), and a sift moves a hole and writes the sifted
// entry once, so each level costs one entry move and one index update.
//
// A sift never reads or writes the targets' records, which lie scattered
// in memory, one cache miss each once there are more of them than the
// cache holds (100,000 records are some 40 MB): each entry keeps its due
// time, its tie-breaker, its target and the target's slot, a small number
// the heap gives each target at its first push, and the indexes are kept
// in a dense array by slot (4 bytes a target), so the index update of each
// level a sift crosses is a store to that array, not to a record. Taking
// the earliest target reads the root entry only, which is always in the
// cache.
//
// The heap is not safe for concurrent use; the Monitor guards it with its
// mutex. It allocates only when its arrays grow.
type monHeap struct {
	items []monHeapItem
	seq   uint64    // push counter for stable ordering of equal due times
	base  time.Time // the first due time pushed: keys are offsets from it

	// pos holds, by slot (monTarget.slot - 1), the target's index in items
	// or monNotQueued; free holds the slots released by untrack.
	pos  []int32
	free []int32
}

// monHeapItem is one queued target: key is its due time as an offset from
// monHeap.base (time.Time.Sub, so the monotonic clock where both have it).
// The entry keeps its target's slot too, so that moving it writes its
// index without reading the target.
type monHeapItem struct {
	key  int64
	seq  uint64
	t    *monTarget
	slot int32
}

// monNotQueued is the index of a target that is not in the heap.
const monNotQueued = -1

// Len returns the number of queued targets.
func (h *monHeap) Len() int { return len(h.items) }

// index returns t's index in the heap (0 for the earliest), or
// monNotQueued.
func (h *monHeap) index(t *monTarget) int {
	if t.slot <= 0 || int(t.slot) > len(h.pos) {
		return monNotQueued
	}
	i := int(h.pos[t.slot-1])
	if i < 0 || i >= len(h.items) || h.items[i].t != t {
		return monNotQueued
	}
	return i
}

// peek returns the earliest target, or nil when the heap is empty.
func (h *monHeap) peek() *monTarget {
	if len(h.items) == 0 {
		return nil
	}
	return h.items[0].t
}

// push queues t at due, giving t a slot first if it has none. t must not
// be queued already.
func (h *monHeap) push(t *monTarget, due time.Time) {
	if t.slot <= 0 || int(t.slot) > len(h.pos) {
		h.track(t)
	}
	t.due = due
	if h.base.IsZero() {
		h.base = due
	}
	h.seq++
	s := t.slot - 1
	i := len(h.items)
	h.pos[s] = int32(i)
	h.items = append(h.items, monHeapItem{key: int64(due.Sub(h.base)), seq: h.seq, t: t, slot: s})
	h.up(i)
}

// track gives t a slot.
func (h *monHeap) track(t *monTarget) {
	var s int32
	if n := len(h.free); n > 0 {
		s = h.free[n-1]
		h.free = h.free[:n-1]
		h.pos[s] = monNotQueued
	} else {
		s = int32(len(h.pos))
		h.pos = append(h.pos, monNotQueued)
	}
	t.slot = s + 1
}

// untrack takes t out of the heap if it is queued and releases its slot:
// the Monitor no longer has t. A later push gives it a new one.
func (h *monHeap) untrack(t *monTarget) {
	if t.slot <= 0 || int(t.slot) > len(h.pos) {
		return
	}
	h.remove(t)
	h.free = append(h.free, t.slot-1)
	t.slot = 0
}

// pop removes and returns the earliest target; nil when empty.
func (h *monHeap) pop() *monTarget {
	n := len(h.items)
	if n == 0 {
		return nil
	}
	t, s := h.items[0].t, h.items[0].slot
	h.swap(0, n-1)
	h.items[n-1] = monHeapItem{}
	h.items = h.items[:n-1]
	if n > 1 {
		h.down(0)
	}
	h.pos[s] = monNotQueued
	return t
}

// remove takes t out of the heap if it is queued.
func (h *monHeap) remove(t *monTarget) {
	i := h.index(t)
	if i < 0 || i >= len(h.items) {
		return
	}
	n := len(h.items) - 1
	if i != n {
		h.swap(i, n)
	}
	h.items[n] = monHeapItem{}
	h.items = h.items[:n]
	if i != n {
		if !h.down(i) {
			h.up(i)
		}
	}
	h.pos[t.slot-1] = monNotQueued
}

func (h *monHeap) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.pos[h.items[i].slot] = int32(i)
	h.pos[h.items[j].slot] = int32(j)
}

// before reports whether entry a sorts before entry b.
func before(a, b *monHeapItem) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	return a.seq < b.seq
}

// set places x at i and records the index for its slot.
func (h *monHeap) set(i int, x monHeapItem) {
	h.items[i] = x
	h.pos[x.slot] = int32(i)
}

func (h *monHeap) up(i int) {
	x := h.items[i]
	start := i
	for i > 0 {
		p := (i - 1) / 4
		if !before(&x, &h.items[p]) {
			break
		}
		h.set(i, h.items[p])
		i = p
	}
	if i != start {
		h.set(i, x)
	}
}

// down sifts i toward the leaves and reports whether it moved.
func (h *monHeap) down(i int) bool {
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
		h.set(i, h.items[c])
		i = c
	}
	if i != start {
		h.set(i, x)
	}
	return i > start
}
