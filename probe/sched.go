package probe

import "time"

// monHeap is the Monitor's timer heap: a binary min-heap of targets ordered
// by due time (ties broken by the order they were pushed, so targets due at
// the same instant are probed first come, first served). Each target records
// its own index, so removal and re-keying are O(log n) without a search.
//
// The heap is not safe for concurrent use; the Monitor guards it with its
// mutex. It allocates only when its backing array grows.
type monHeap struct {
	items []*monTarget
	seq   uint64 // push counter for stable ordering of equal due times
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
	return h.items[0]
}

// push queues t at due. t must not be queued already.
func (h *monHeap) push(t *monTarget, due time.Time) {
	t.due = due
	h.seq++
	t.seq = h.seq
	t.idx = int32(len(h.items))
	h.items = append(h.items, t)
	h.up(int(t.idx))
}

// pop removes and returns the earliest target; nil when empty.
func (h *monHeap) pop() *monTarget {
	n := len(h.items)
	if n == 0 {
		return nil
	}
	t := h.items[0]
	h.swap(0, n-1)
	h.items[n-1] = nil
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
	if i < 0 || i >= len(h.items) || h.items[i] != t {
		return
	}
	n := len(h.items) - 1
	if i != n {
		h.swap(i, n)
	}
	h.items[n] = nil
	h.items = h.items[:n]
	if i != n {
		if !h.down(i) {
			h.up(i)
		}
	}
	t.idx = monNotQueued
}

func (h *monHeap) less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	if !a.due.Equal(b.due) {
		return a.due.Before(b.due)
	}
	return a.seq < b.seq
}

func (h *monHeap) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].idx = int32(i)
	h.items[j].idx = int32(j)
}

func (h *monHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

// down sifts i toward the leaves and reports whether it moved.
func (h *monHeap) down(i int) bool {
	start := i
	n := len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && h.less(r, l) {
			c = r
		}
		if !h.less(c, i) {
			break
		}
		h.swap(i, c)
		i = c
	}
	return i > start
}
