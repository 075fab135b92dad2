package probe

import "time"

// monHeap is the Monitor's timer heap: a 4-ary min-heap of targets ordered
// by due time (ties broken by the order they were pushed, so targets due at
// the same instant are probed first come, first served). Each target records
// its own index, so removal and re-keying are O(log n) without a search.
// Each entry keeps its due time and tie-breaker beside the target pointer,
// so sifting compares entries of the array without reading the targets
// (scattered in memory, one cache miss each). Four children per node halve
// the levels a sift crosses (7 instead of 14 at 10,000 targets), and a sift
// moves a hole and writes the sifted entry once, so each level costs one
// entry move and one index update.
//
// The heap is not safe for concurrent use; the Monitor guards it with its
// mutex. It allocates only when its backing array grows.
type monHeap struct {
	items []monHeapItem
	seq   uint64    // push counter for stable ordering of equal due times
	base  time.Time // the first due time pushed: keys are offsets from it
}

// monHeapItem is one queued target: key is its due time as an offset from
// monHeap.base (time.Time.Sub, so the monotonic clock where both have it).
type monHeapItem struct {
	key int64
	seq uint64
	t   *monTarget
}

// monNotQueued is the index of a target that is not in the heap.
const monNotQueued = -1

// Len returns the number of queued targets.
func (h *monHeap) Len() int { return len(h.items) }

// peek returns the earliest target, or nil when the heap is empty.
func (h *monHeap) peek() *monTarget {
	if len(h.items) == 0 {
		return nil
	}
	return h.items[0].t
}

// push queues t at due. t must not be queued already.
func (h *monHeap) push(t *monTarget, due time.Time) {
	t.due = due
	if h.base.IsZero() {
		h.base = due
	}
	h.seq++
	t.idx = int32(len(h.items))
	h.items = append(h.items, monHeapItem{key: int64(due.Sub(h.base)), seq: h.seq, t: t})
	h.up(int(t.idx))
}

// pop removes and returns the earliest target; nil when empty.
func (h *monHeap) pop() *monTarget {
	n := len(h.items)
	if n == 0 {
		return nil
	}
	t := h.items[0].t
	h.swap(0, n-1)
	h.items[n-1] = monHeapItem{}
	h.items = h.items[:n-1]
	if n > 1 {
		h.down(0)
	}
	t.idx = monNotQueued
	return t
}

// remove takes t out of the heap if it is queued.
func (h *monHeap) remove(t *monTarget) {
	i := int(t.idx)
	if i < 0 || i >= len(h.items) || h.items[i].t != t {
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
	t.idx = monNotQueued
}

func (h *monHeap) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].t.idx = int32(i)
	h.items[j].t.idx = int32(j)
}

// before reports whether entry a sorts before entry b.
func before(a, b *monHeapItem) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	return a.seq < b.seq
}

// set places x at i and records the index in its target.
func (h *monHeap) set(i int, x monHeapItem) {
	h.items[i] = x
	x.t.idx = int32(i)
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
