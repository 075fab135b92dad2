package record_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/record"
)

// zoneState is the zone's content, as comparable text.
func zoneState(t *rapid.T, p record.ZoneEditor) []string {
	recs, err := p.GetRecords(context.Background(), "example.com.")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		if rr := r.RR(); rr.Type != "SOA" {
			out = append(out, fmt.Sprintf("%s %s %s", rr.Name, rr.Type, rr.Data))
		}
	}
	slices.Sort(out)
	return out
}

// For any interleaving of two writers' applies with tokens t1 < t2 —
// any write of writer 1 may be delayed past writer 2's applies, as a
// frozen leader's is — once writer 2 has applied once, no change of
// writer 1 is visible afterwards: every later apply of writer 1 is
// refused (ErrFenced) and leaves the zone exactly as writer 2 left it.
// Writer 2's applies always succeed.
func TestFenceProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ctx := context.Background()
		z := &pausing{Provider: newZoneRapid(t)}
		t1 := rapid.Uint64Range(1, 1<<62).Draw(t, "t1")
		t2 := rapid.Uint64Range(t1+1, 1<<63).Draw(t, "t2")
		mk := func(tok uint64) *record.Reconciler {
			r, err := record.New(z, record.LocalConfig("deploy"), record.Options{FenceToken: tok})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		w1, w2 := mk(t1), mk(t2)
		desired := func(w int, label string) record.Desired {
			var d record.Desired
			names := rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"app", "www", "api"}), 1, 3, rapid.ID).Draw(t, label+"names")
			for _, n := range names {
				v := rapid.IntRange(1, 3).Draw(t, label+n)
				d.Sets = append(d.Sets, record.RRSet{Zone: "example.com.", Name: n, Type: "A", TTL: time.Minute,
					Values: []string{fmt.Sprintf("10.%d.0.%d", w, v)}})
			}
			var rest []string
			for _, n := range []string{"app", "www", "api"} {
				if !slices.Contains(names, n) {
					rest = append(rest, n)
				}
			}
			if len(rest) > 0 && rapid.Bool().Draw(t, label+"withdraw") {
				d.Withdraw = append(d.Withdraw, record.Key{Zone: "example.com.", Name: rapid.SampledFrom(rest).Draw(t, label+"gone")})
			}
			return d
		}
		applied2 := false
		apply2 := func(label string) {
			if _, err := w2.Apply(ctx, desired(2, label)); err != nil {
				t.Fatalf("writer 2: %v", err)
			}
			applied2 = true
		}
		steps := rapid.IntRange(1, 8).Draw(t, "steps")
		for i := range steps {
			label := fmt.Sprint(i, ":")
			if rapid.Bool().Draw(t, label+"writer2") {
				apply2(label)
				continue
			}
			// Writer 1, maybe frozen before its write while writer 2
			// applies some times.
			late := rapid.IntRange(0, 2).Draw(t, label+"late")
			var after []string
			if late > 0 {
				// Frozen before its first, second or third write.
				z.skip = rapid.IntRange(0, 2).Draw(t, label+"at")
				z.pause = func() {
					for j := range late {
						apply2(fmt.Sprint(label, "late", j, ":"))
					}
					after = zoneState(t, z)
				}
			}
			before, was2 := zoneState(t, z), applied2
			_, err := w1.Apply(ctx, desired(1, label))
			z.pause, z.skip = nil, 0
			switch {
			case was2:
				// Writer 2 applied before writer 1 read: fenced off.
				if !errors.Is(err, record.ErrFenced) {
					t.Fatalf("writer 1 after writer 2: err %v, want ErrFenced", err)
				}
				if now := zoneState(t, z); !slices.Equal(now, before) {
					t.Fatalf("writer 1 changed the zone after writer 2 applied:\nbefore %q\nafter  %q", before, now)
				}
			case after != nil:
				// Writer 2 applied while writer 1 was frozen: the late
				// write is refused and the zone is as writer 2 left it.
				if !errors.Is(err, record.ErrFenced) {
					t.Fatalf("late writer 1: err %v, want ErrFenced", err)
				}
				if now := zoneState(t, z); !slices.Equal(now, after) {
					t.Fatalf("late writer 1 visible:\nwriter 2 left %q\nzone holds    %q", after, now)
				}
			}
		}
	})
}

func newZoneRapid(t *rapid.T) *memory.Provider {
	p := &memory.Provider{}
	if err := p.AddZone("example.com."); err != nil {
		t.Fatal(err)
	}
	return p
}
