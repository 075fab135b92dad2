package probe

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"
)

// TestShardEachTargetInExactlyOneShard checks, for N = 1…16, that every ID
// is owned by exactly one shard and that growing to N+1 shards moves at most
// 1.5 × 1/(N+1) of the IDs, every one of them to the new shard.
func TestShardEachTargetInExactlyOneShard(t *testing.T) {
	const ids = 20000
	owner := func(id string, n int) int {
		found := -1
		for i := range n {
			if (Shard{Index: i, Count: n}).Owns(id) {
				if found != -1 {
					t.Fatalf("id %s owned by shards %d and %d of %d", id, found, i, n)
				}
				found = i
			}
		}
		if found == -1 {
			t.Fatalf("id %s owned by no shard of %d", id, n)
		}
		return found
	}
	prev := make([]int, ids)
	for n := 1; n <= 17; n++ {
		moved := 0
		counts := make([]int, n)
		for k := range ids {
			id := fmt.Sprintf("10.%d.%d.%d:443", k>>16, (k>>8)&255, k&255)
			o := owner(id, n)
			if s := ShardOf(id, n); s != o {
				t.Fatalf("ShardOf(%s, %d) = %d, Owns says %d", id, n, s, o)
			}
			counts[o]++
			if n > 1 && o != prev[k] {
				moved++
				if o != n-1 {
					t.Fatalf("id %s moved from %d to an old shard %d", id, prev[k], o)
				}
			}
			prev[k] = o
		}
		if n > 1 {
			ideal := float64(ids) / float64(n)
			assert.LessOrEqual(t, float64(moved), 1.5*ideal, "N=%d→%d moved %d of %d", n-1, n, moved, ids)
			assert.GreaterOrEqual(t, float64(moved), ideal/1.5, "N=%d→%d moved %d of %d", n-1, n, moved, ids)
			for i, c := range counts {
				assert.InDelta(t, ideal, float64(c), ideal*0.15, "N=%d shard %d holds %d", n, i, c)
			}
		}
	}
}

func TestShardZeroValueOwnsEverything(t *testing.T) {
	cases := []struct {
		name  string
		shard Shard
		owns  bool
	}{
		{"zero value", Shard{}, true},
		{"one shard", Shard{Index: 0, Count: 1}, true},
		{"bad index", Shard{Index: 1, Count: 1}, false},
		{"negative count", Shard{Index: 0, Count: -2}, false},
		{"index beyond count", Shard{Index: 5, Count: 4}, false},
		{"count too big", Shard{Index: 0, Count: MaxShards + 1}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.owns, c.shard.Owns("anything"))
			assert.Equal(t, c.owns, c.shard.Validate() == nil)
		})
	}
}

// TestShardProperties: for any ID and count, exactly one index owns it and
// ShardOf is in range.
func TestShardProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		id := rapid.String().Draw(t, "id")
		n := rapid.IntRange(1, 300).Draw(t, "n")
		s := ShardOf(id, n)
		if s < 0 || s >= n {
			t.Fatalf("ShardOf(%q, %d) = %d", id, n, s)
		}
		idx := rapid.IntRange(0, n-1).Draw(t, "index")
		if (Shard{Index: idx, Count: n}).Owns(id) != (idx == s) {
			t.Fatalf("Owns disagrees with ShardOf for %q, %d/%d", id, idx, n)
		}
	})
}

func BenchmarkShardOwns(b *testing.B) {
	s := Shard{Index: 3, Count: 16}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.Owns("eu-west-1/10.0.0.7:443")
	}
}
