package probe

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestSchedHeapMatchesModel drives the heap with random pushes, pops and
// removals and checks each pop against a sorted model: earliest due first,
// ties in push order, indexes always consistent.
func TestSchedHeapMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var h monHeap
		base := time.Unix(0, 0)
		type item struct {
			t   *monTarget
			due time.Time
			seq int
		}
		var model []item
		seq := 0
		pool := make([]*monTarget, 40)
		for i := range pool {
			pool[i] = &monTarget{id: fmt.Sprint(i), idx: monNotQueued}
		}
		sortModel := func() {
			slices.SortStableFunc(model, func(a, b item) int {
				if c := a.due.Compare(b.due); c != 0 {
					return c
				}
				return a.seq - b.seq
			})
		}
		for range rapid.IntRange(1, 200).Draw(t, "ops") {
			switch rapid.IntRange(0, 2).Draw(t, "op") {
			case 0: // push a target that is not queued
				tg := pool[rapid.IntRange(0, len(pool)-1).Draw(t, "target")]
				if tg.idx != monNotQueued {
					continue
				}
				due := base.Add(time.Duration(rapid.IntRange(0, 20).Draw(t, "due")) * time.Second)
				h.push(tg, due)
				seq++
				model = append(model, item{tg, due, seq})
			case 1:
				sortModel()
				got := h.pop()
				if len(model) == 0 {
					if got != nil {
						t.Fatalf("pop from empty heap returned %s", got.id)
					}
					continue
				}
				if got != model[0].t {
					t.Fatalf("pop: got %s due %v, want %s due %v", got.id, got.due, model[0].t.id, model[0].due)
				}
				model = model[1:]
			case 2:
				tg := pool[rapid.IntRange(0, len(pool)-1).Draw(t, "target")]
				h.remove(tg)
				model = slices.DeleteFunc(model, func(it item) bool { return it.t == tg })
				if tg.idx != monNotQueued {
					t.Fatalf("removed target still has index %d", tg.idx)
				}
			}
			if h.Len() != len(model) {
				t.Fatalf("len %d, model %d", h.Len(), len(model))
			}
			for i, it := range h.items {
				if int(it.t.idx) != i {
					t.Fatalf("item %s at %d records index %d", it.t.id, i, it.t.idx)
				}
				if !it.t.due.Equal(h.base.Add(time.Duration(it.key))) {
					t.Fatalf("item %s at %d: key %d for due %v (base %v)", it.t.id, i, it.key, it.t.due, h.base)
				}
			}
		}
	})
}

// BenchmarkSchedHeap measures one pop and one push of a 10,000-target heap:
// the scheduler's cost per probe.
func BenchmarkSchedHeap(b *testing.B) {
	var h monHeap
	base := time.Now()
	for i := range 10000 {
		h.push(&monTarget{idx: monNotQueued}, base.Add(time.Duration(i)*time.Millisecond))
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		t := h.pop()
		h.push(t, t.due.Add(10*time.Second))
	}
}
