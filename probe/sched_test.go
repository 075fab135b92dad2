package probe

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestSchedHeapMatchesModel drives the heap with random pushes, pops,
// removals and untracks (slots released and reused) and checks each pop
// against a sorted model: earliest due first, ties in push order, slots and
// indexes always consistent.
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
		for range rapid.IntRange(1, 200).Draw(t, "ops") {
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0: // push a target that is not queued
				tg := pool[rapid.IntRange(0, len(pool)-1).Draw(t, "target")]
				if h.index(tg) != monNotQueued {
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
				if i := h.index(tg); i != monNotQueued {
					t.Fatalf("removed target still has index %d", i)
				}
			case 3: // the Monitor removes the target: its slot goes to the next new one
				tg := pool[rapid.IntRange(0, len(pool)-1).Draw(t, "target")]
				h.untrack(tg)
				model = slices.DeleteFunc(model, func(it item) bool { return it.t == tg })
				if tg.slot != 0 || h.index(tg) != monNotQueued {
					t.Fatalf("untracked target keeps slot %d, index %d", tg.slot, h.index(tg))
				}
			}
			if h.Len() != len(model) {
				t.Fatalf("len %d, model %d", h.Len(), len(model))
			}
			for i, it := range h.items {
				tg := it.t
				if int(tg.slot) != int(it.slot)+1 {
					t.Fatalf("item %s at %d: slot %d, its target's %d", tg.id, i, it.slot, tg.slot)
				}
				if got := h.index(tg); got != i {
					t.Fatalf("item %s at %d records index %d", tg.id, i, got)
				}
				if !tg.due.Equal(h.base.Add(time.Duration(it.key))) {
					t.Fatalf("item %s at %d: key %d for due %v (base %v)", tg.id, i, it.key, tg.due, h.base)
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
		h.push(&monTarget{}, base.Add(time.Duration(i)*time.Millisecond))
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		t := h.pop()
		h.push(t, t.due.Add(10*time.Second))
	}
}
