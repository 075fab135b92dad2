package answer

import (
	"hash/maphash"
	"sync/atomic"
)

// Admission to the fast path's cache. Most questions a server sees twice
// it sees many times; most it sees once it never sees again (a name that
// does not exist, a random label under a wildcard or a delegation: a scan,
// a cache-busting client, a random-subdomain flood). An entry for a
// question seen once takes the cache's memory and buys nothing, so a key
// enters the cache on its second sighting only: the first one is noted in
// a doorkeeper, a bit set of doorBits bits (8 KiB) per cache in which a
// key sets two bits (from one 64-bit hash), and a key whose two bits are
// both already set is admitted. After doorBits/8 first sightings the set
// is cleared, so at most one bit in four is set and a key seen once is
// taken for a second sighting less than one time in sixteen (two bits,
// each set with a probability of at most 1/4). A key seen twice within doorBits/8 other
// new keys is admitted; one whose sightings are further apart may wait for
// a third. The bits are set with atomic operations, without the cache's
// lock; a clear racing a sighting only loses that sighting.

// doorBits is the doorkeeper's size in bits.
const doorBits = 1 << 16

// doorkeeper remembers, approximately, the keys seen once since its last
// clear (see above). Its zero value is not ready: newDoorkeeper.
type doorkeeper struct {
	seed  maphash.Seed
	added atomic.Int64 // first sightings since the last clear
	bits  [doorBits / 64]atomic.Uint64
}

func newDoorkeeper() *doorkeeper { return &doorkeeper{seed: maphash.MakeSeed()} }

// hash returns key's hash for admit (and the hot table's slot).
func (d *doorkeeper) hash(key []byte) uint64 { return maphash.Bytes(d.seed, key) }

// admit records a sighting of key and reports whether it was seen before
// (since the last clear, or a false positive: see above).
func (d *doorkeeper) admit(key []byte) bool { return d.admitHash(d.hash(key)) }

// admitHash is admit for a key of hash h.
func (d *doorkeeper) admitHash(h uint64) bool {
	i, j := h%doorBits, h>>32%doorBits
	mi, mj := uint64(1)<<(i%64), uint64(1)<<(j%64)
	oi := d.bits[i/64].Or(mi)
	oj := d.bits[j/64].Or(mj)
	if oi&mi != 0 && oj&mj != 0 {
		return true
	}
	if d.added.Add(1) >= doorBits/8 {
		d.added.Store(0)
		for k := range d.bits {
			d.bits[k].Store(0)
		}
	}
	return false
}
