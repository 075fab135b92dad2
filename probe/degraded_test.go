package probe

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestLocalWindowProperty: after any sequence of results, local failures
// or not, at times that never go back, monLocal's Degraded is whether a
// local failure falls in the window's slices, and add and refresh report
// exactly the changes of it.
func TestLocalWindowProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		base := time.Unix(1_000_000, 0)
		window := time.Duration(rapid.IntRange(16, 16_000).Draw(t, "window"))
		w := monNewLocal(base, window)
		width := w.width
		slice := func(at time.Time) int64 { return int64(at.Sub(base) / width) }
		var locals []int64 // the slices of the local failures so far
		want := func(at time.Time) bool {
			k := slice(at)
			for _, l := range locals {
				if l > k-monLocalBuckets && l <= k {
					return true
				}
			}
			return false
		}
		now, was := base, false
		for i := range rapid.IntRange(1, 200).Draw(t, "steps") {
			now = now.Add(time.Duration(rapid.Int64Range(0, int64(window)).Draw(t, "step")))
			var changed bool
			if rapid.IntRange(0, 9).Draw(t, "refresh") == 0 {
				changed = w.refresh(now)
			} else {
				local := rapid.IntRange(0, 4).Draw(t, "local") == 0
				if local {
					locals = append(locals, slice(now))
				}
				changed = w.add(now, local, "detail")
			}
			is := want(now)
			if w.degraded != is {
				t.Fatalf("step %d at %v: degraded %v, want %v", i, now.Sub(base), w.degraded, is)
			}
			if changed != (is != was) {
				t.Fatalf("step %d at %v: reported a change %v, degraded went %v -> %v", i, now.Sub(base), changed, was, is)
			}
			was = is
		}
	})
}
