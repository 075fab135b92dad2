package probe

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestScheduleMatchesModel drives the schedule with random pushes, pops,
// peeks and removals and checks each pop against a sorted model: earliest due first, ties in push order. Due
// times fall around the last one popped, at bucket and ring edges, beyond
// the ring and before the current bucket, so every path between near, the
// ring and far is taken; after each step the schedule's invariants hold.
func TestScheduleMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var s monSchedule
		epoch := time.Unix(1000, 0)
		now := int64(0) // the due time of the last pop, in ns from epoch
		type item struct {
			t   *monTarget
			due time.Time
			seq int
		}
		var model []item
		seq := 0
		pool := make([]*monTarget, 60)
		for i := range pool {
			pool[i] = &monTarget{id: fmt.Sprint(i)}
		}
		sortModel := func() {
			slices.SortStableFunc(model, func(a, b item) int {
				if c := a.due.Compare(b.due); c != 0 {
					return c
				}
				return a.seq - b.seq
			})
		}
		const sec, bucket, ring = int64(time.Second), int64(monBucketNanos), int64(monRingBuckets * monBucketNanos)
		offset := rapid.OneOf(
			rapid.Int64Range(-2*sec, 3*sec), // near and the ring's first buckets
			rapid.Int64Range(0, 3*ring),     // the whole ring and far
			rapid.Map(rapid.Int64Range(-3, 3), func(k int64) int64 { return k*bucket - now%bucket }), // bucket edges
			rapid.Map(rapid.Int64Range(-2, 2), func(k int64) int64 { return ring + k }),              // the ring's end
		)
		for range rapid.IntRange(1, 300).Draw(t, "ops") {
			switch op := rapid.IntRange(0, 6).Draw(t, "op"); op {
			case 0, 1, 2: // push a target that is not queued
				tg := pool[rapid.IntRange(0, len(pool)-1).Draw(t, "target")]
				if s.queued(tg) {
					continue
				}
				var due time.Time
				if op == 2 && len(model) > 0 { // a tie
					due = model[rapid.IntRange(0, len(model)-1).Draw(t, "tie")].due
				} else {
					due = epoch.Add(time.Duration(now + offset.Draw(t, "due")))
				}
				s.push(tg, due)
				seq++
				model = append(model, item{tg, due, seq})
				sortModel()
				if got, want := s.first(tg), model[0].t == tg; got != want {
					t.Fatalf("first(%s) = %v after its push, want %v", tg.id, got, want)
				}
			case 3:
				sortModel()
				got := s.pop()
				if len(model) == 0 {
					if got != nil {
						t.Fatalf("pop from empty schedule returned %s", got.id)
					}
					continue
				}
				if got != model[0].t {
					t.Fatalf("pop: got %s due %v, want %s due %v", got.id, got.due, model[0].t.id, model[0].due)
				}
				if s.queued(got) {
					t.Fatalf("popped target %s still queued", got.id)
				}
				now = int64(got.due.Sub(epoch))
				model = model[1:]
			case 4:
				sortModel()
				got := s.peek()
				if len(model) == 0 && got != nil || len(model) > 0 && got != model[0].t {
					t.Fatalf("peek: got %v, want the model's first of %d", got, len(model))
				}
			case 5, 6:
				tg := pool[rapid.IntRange(0, len(pool)-1).Draw(t, "target")]
				s.remove(tg)
				model = slices.DeleteFunc(model, func(it item) bool { return it.t == tg })
				if s.queued(tg) {
					t.Fatalf("removed target %s still queued", tg.id)
				}
			}
			if s.Len() != len(model) {
				t.Fatalf("len %d, model %d", s.Len(), len(model))
			}
			for _, tg := range pool {
				inModel := slices.ContainsFunc(model, func(it item) bool { return it.t == tg })
				if s.queued(tg) != inModel {
					t.Fatalf("target %s: queued %v, in the model %v", tg.id, s.queued(tg), inModel)
				}
			}
			checkSchedule(t, &s)
		}
	})
}

// checkSchedule fails t unless s keeps its invariants: near's and far's
// positions are heaps (far's array has no holes), near holds the buckets up to cur, the ring the next
// ones at their positions (with its bitmap and count), far the rest; every
// entry's key is its target's due time and its index its target's qpos.
func checkSchedule(t interface{ Fatalf(string, ...any) }, s *monSchedule) {
	queued := 0
	check := func(name string, e *monSchedEntry, i int) {
		queued++
		if int(e.t.qpos) != i {
			t.Fatalf("%s[%d] (%s): its target's qpos is %d", name, i, e.t.id, e.t.qpos)
		}
		if !e.t.due.Equal(s.base.Add(time.Duration(e.key))) {
			t.Fatalf("%s[%d] (%s): key %d for due %v (base %v)", name, i, e.t.id, e.key, e.t.due, s.base)
		}
		if !s.queued(e.t) {
			t.Fatalf("%s[%d] (%s): not queued", name, i, e.t.id)
		}
	}
	// heap checks near or far: its positions, the heap order, each entry,
	// its bucket (inBuckets) and the holes in its array (none in far's).
	heap := func(name string, h *monPosHeap, inBuckets func(int64) bool, holesOK bool) {
		holes := 0
		for _, e := range h.items {
			if e.t == nil {
				holes++
			}
		}
		if len(h.items)-holes != len(h.heap) || len(h.at) != len(h.items) || holes > 0 && (!holesOK || len(h.heap) == 0) {
			t.Fatalf("%s: %d positions in the heap, %d entries, %d holes, %d indexes", name, len(h.heap), len(h.items), holes, len(h.at))
		}
		for i, p := range h.heap {
			e := &h.items[p]
			if e.t == nil || h.at[p] != int32(i) {
				t.Fatalf("%s heap[%d]: position %d, a hole %v, its index %d", name, i, p, e.t == nil, h.at[p])
			}
			check(name, e, int(p))
			if i > 0 && h.less(p, h.heap[(i-1)/4]) {
				t.Fatalf("%s heap[%d] sorts before its parent", name, i)
			}
			if b := e.bucket(); !inBuckets(b) {
				t.Fatalf("%s[%d]: bucket %d, current %d", name, p, b, s.cur)
			}
		}
	}
	heap("near", &s.near, func(b int64) bool { return b <= s.cur }, true)
	heap("far", &s.far, func(b int64) bool { return b >= s.cur+monRingBuckets }, false)
	inRing := 0
	for p, a := range s.ring {
		if full := s.full[p/64]&(1<<(p%64)) != 0; full != (len(a) > 0) || a != nil && len(a) == 0 {
			t.Fatalf("ring position %d: %d entries (nil %v), bit %v", p, len(a), a == nil, full)
		}
		for i := range a {
			check(fmt.Sprint("ring ", p), &a[i], i)
			if b := a[i].bucket(); b <= s.cur || b >= s.cur+monRingBuckets || int(b&monRingMask) != p {
				t.Fatalf("ring position %d: entry of bucket %d, current %d", p, b, s.cur)
			}
		}
		inRing += len(a)
	}
	if inRing != s.ringLen || queued != s.n {
		t.Fatalf("ring holds %d (count %d), all %d (count %d)", inRing, s.ringLen, queued, s.n)
	}
}

// TestScheduleLongIntervals: targets due further ahead than the ring
// reaches wait in far and still come out in order, with gaps between them
// longer than the ring.
func TestScheduleLongIntervals(t *testing.T) {
	var s monSchedule
	base := time.Unix(0, 0)
	ring := time.Duration(monRingBuckets * monBucketNanos)
	ts := make([]*monTarget, 50)
	for i := range ts {
		ts[i] = &monTarget{id: fmt.Sprint(i)}
		// Pushed latest first: due i × 1.5 rings after base.
		s.push(ts[i], base.Add(time.Duration(len(ts)-i)*3*ring/2))
	}
	checkSchedule(t, &s)
	for i := range ts {
		got := s.pop()
		checkSchedule(t, &s)
		if want := ts[len(ts)-1-i]; got != want {
			t.Fatalf("pop %d: got %s, want %s", i, got.id, want.id)
		}
	}
	if s.pop() != nil || s.Len() != 0 {
		t.Fatalf("schedule not empty")
	}
}

// TestScheduleSteadyStateAllocatesNothing: once every bucket array has
// reached the size it needs, a check (a pop and a push 10 s ± 10 % later)
// allocates nothing.
func TestScheduleSteadyStateAllocatesNothing(t *testing.T) {
	var s monSchedule
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Unix(0, 0)
	const n, interval = 10000, 10 * time.Second
	for i := range n {
		s.push(&monTarget{}, base.Add(time.Duration(i)*interval/n))
	}
	check := func() {
		t := s.pop()
		s.push(t, t.due.Add(interval+time.Duration(rng.Int64N(int64(interval/5)))-interval/10))
	}
	for range 20 * n {
		check()
	}
	if a := testing.AllocsPerRun(n, check); a != 0 {
		t.Errorf("%v allocations per check", a)
	}
	checkSchedule(t, &s)
}

// BenchmarkSchedule measures one pop and one push of the schedule at
// 10,000 checks a second, its cost per check: N targets due every N/10 ms,
// each pushed back one interval after its due time (jitter=0) or within
// ±10 % of it.
func BenchmarkSchedule(b *testing.B) {
	for _, jitter := range []int64{0, 10} {
		for _, n := range []int{10000, 100000} {
			b.Run(fmt.Sprintf("jitter=%d%%/N=%d", jitter, n), func(b *testing.B) {
				var s monSchedule
				rng := rand.New(rand.NewPCG(1, 2))
				base := time.Now()
				interval := time.Duration(n/10) * time.Millisecond
				spread := int64(interval) * jitter / 100
				for i := range n {
					s.push(&monTarget{}, base.Add(time.Duration(i)*interval/time.Duration(n)))
				}
				check := func() {
					t := s.pop()
					d := interval
					if spread > 0 {
						d += time.Duration(rng.Int64N(2*spread+1) - spread)
					}
					s.push(t, t.due.Add(d))
				}
				for range 2 * n {
					check()
				}
				b.ReportAllocs()
				for b.Loop() {
					check()
				}
			})
		}
	}
}
