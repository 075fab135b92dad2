package probe

import "github.com/gslbkit/gslb/internal/fielderr"

// Shard selects the part of the targets one Monitor probes when several
// controllers share the work. Every controller is given the same Count and
// its own Index; a target belongs to exactly one shard, chosen by a stable
// hash of its ID (jump consistent hashing over a 64-bit FNV-1a hash), so all
// controllers agree without talking to each other. Going from Count N to
// N+1 moves only about 1/(N+1) of the targets, all of them to the new shard.
//
// The zero value (Count 0) means "no sharding": the shard owns every target.
// Shard is a plain value, safe to copy and to use from any goroutine.
type Shard struct {
	// Index is this controller's shard, 0 ≤ Index < Count. Default 0.
	Index int `json:"index"`
	// Count is the number of shards, 0 to MaxShards; 0 and 1 both mean one
	// shard that owns every target. Default 0.
	Count int `json:"count"`
}

// MaxShards is the largest Shard.Count accepted.
const MaxShards = 1 << 16

// Validate reports a Count outside [0, MaxShards] or an Index outside
// [0, Count), as a *FieldError wrapping ErrMonitorConfig.
func (s Shard) Validate() error {
	if s.Count < 0 || s.Count > MaxShards {
		return fieldErr(ErrMonitorConfig, "count", s.Count, fielderr.Range(0, MaxShards))
	}
	n := max(s.Count, 1)
	if s.Index < 0 || s.Index >= n {
		return fieldErr(ErrMonitorConfig, "index", s.Index, fielderr.Range(0, n-1)+" (below count)")
	}
	return nil
}

// Owns reports whether the target with this ID belongs to shard s. With a
// Count of 0 or 1 every target belongs to it. An invalid shard owns nothing.
func (s Shard) Owns(id string) bool {
	if s.Count <= 1 {
		return s.Index == 0 && s.Count >= 0
	}
	if s.Index < 0 || s.Index >= s.Count || s.Count > MaxShards {
		return false
	}
	return ShardOf(id, s.Count) == s.Index
}

// ShardOf returns the shard, in [0, count), that owns the target with this
// ID; 0 when count ≤ 1. The result depends only on id and count, never on
// the process, so every controller computes the same answer.
func ShardOf(id string, count int) int {
	if count <= 1 {
		return 0
	}
	return shardJump(shardHash(id), count)
}

// shardHash is 64-bit FNV-1a followed by a finaliser that spreads IDs which
// differ only in their last characters (FNV alone leaves the high bits, which
// the jump hash reads, poorly mixed for short keys).
func shardHash(id string) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= prime
	}
	// splitmix64 finaliser
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// shardJump is Lamping and Veach's jump consistent hash: it walks the
// sequence of bucket counts at which key would jump to the new bucket and
// returns the last jump below n. A key moves only when the new last bucket
// claims it, which is what makes growth move about 1/(n+1) of the keys.
func shardJump(key uint64, n int) int {
	b, j := int64(-1), int64(0)
	for j < int64(n) {
		b = j
		key = key*2862933555777941757 + 1
		j = int64(float64(b+1) * (float64(int64(1)<<31) / float64((key>>33)+1)))
	}
	return int(b)
}
