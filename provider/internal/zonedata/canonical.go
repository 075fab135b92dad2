package zonedata

import (
	"cmp"
	"encoding/binary"
	"iter"
	"slices"
	"strings"
)

// CanonicalNodes yields z's nodes other than the apex's, their owner
// names in canonical order (SortedOwners' order, CanonicalCompare). It is
// what a zone transfer streams: a Knot secondary builds its zone from
// names that come in this order for about half the CPU it spends on the
// same names in a map's order (its tree is then filled and walked along
// its own order), so a primary sends them sorted.
//
// The first iteration of a version sorts, without a string per name: each
// name is keyed by the first 15 bytes of its labels below the zone,
// rightmost first and each followed by a zero byte, in two integers
// (keyNames); the keys are sorted by their first eight bytes a byte at a
// time (a radix sort, which unlike a comparison sort costs no call per
// comparison), and only names whose first eight bytes tie are compared,
// by the rest of their keys, then as strings. The sort holds 56 bytes per
// name while it runs; the order is then kept with z (8 bytes a name, for
// as long as z is kept), and later iterations of z read it without
// sorting again. z must not change once it has been iterated (a published
// version never does; a writer changes a Clone, which starts unsorted).
func CanonicalNodes(z *Zone) iter.Seq[*Node] {
	return func(yield func(*Node) bool) {
		order := z.canonical.Load()
		if order == nil {
			order = sortNodes(z)
			if !z.canonical.CompareAndSwap(nil, order) {
				order = z.canonical.Load() // another iteration's, the same
			}
		}
		for _, nd := range *order {
			if !yield(nd) {
				return
			}
		}
	}
}

// sortNodes is z's nodes but the apex's in CanonicalNodes' order.
func sortNodes(z *Zone) *[]*Node {
	ks, plain := keyNames(z)
	if plain {
		radixSortHi(ks)
	} else {
		slices.SortFunc(ks, compareKeyed)
	}
	nodes := make([]*Node, len(ks))
	for i := range ks {
		nodes[i] = ks[i].nd
	}
	return &nodes
}

// keyed is a node and its name's canonicalKey.
type keyed struct {
	hi, lo uint64 // lo's last byte: 1 for a name with no key
	nd     *Node
}

// compareKeyed orders keyed names as CanonicalCompare orders their
// owners: by key, then (keys tied, or a name with no key) as strings.
func compareKeyed(a, b keyed) int {
	switch {
	case (a.lo|b.lo)&1 != 0: // no key: as strings
	case a.hi != b.hi:
		if a.hi < b.hi {
			return -1
		}
		return 1
	case a.lo != b.lo:
		if a.lo < b.lo {
			return -1
		}
		return 1
	}
	return CanonicalCompare(a.nd.owner(), b.nd.owner())
}

// keyBatch is how many names keyNames reads before keying them.
const keyBatch = 32

// keyNames returns z's nodes but the apex's with their names' keys, in
// the map's order, and whether every name has a key. The names are
// collected keyBatch at a time and a byte of each read first, in a loop
// of nothing else: each name's bytes are a cache miss (a million names
// are far larger than the cache), and so the misses of a batch overlap
// instead of coming one after the other.
func keyNames(z *Zone) (ks []keyed, plain bool) {
	ks = make([]keyed, 0, len(z.Nodes))
	plain = true
	var names [keyBatch]string
	var nodes [keyBatch]*Node
	n := 0
	flush := func() {
		var touched byte
		for _, name := range names[:n] {
			touched |= name[len(name)-1]
		}
		if n > 0 && touched == 0 { // never for names ending in a dot; uses the reads
			plain = false
		}
		for i, name := range names[:n] {
			hi, lo := canonicalKey(name, z.Name)
			plain = plain && lo&1 == 0
			ks = append(ks, keyed{hi, lo, nodes[i]})
		}
		n = 0
	}
	for name, nd := range z.Nodes {
		if name == z.Name || name == "" {
			if name != z.Name {
				ks, plain = append(ks, keyed{0, 1, nd}), false
			}
			continue
		}
		names[n], nodes[n] = name, nd
		if n++; n == keyBatch {
			flush()
		}
	}
	flush()
	return ks, plain
}

// radixSortHi sorts ks, every one with a key, into compareKeyed's order: a
// stable least-significant-digit radix sort on hi a byte at a time
// (skipping the bytes every key shares), then each run of equal hi sorted
// by compareKeyed.
func radixSortHi(ks []keyed) {
	if len(ks) < 2 {
		return
	}
	var counts [8][256]int
	for i := range ks {
		h := ks[i].hi
		for d := range counts {
			counts[d][byte(h>>(8*d))]++
		}
	}
	src, dst := ks, []keyed(nil)
	for d := range counts {
		c := &counts[d]
		if c[byte(ks[0].hi>>(8*d))] == len(ks) { // one value: no reordering
			continue
		}
		if dst == nil {
			dst = make([]keyed, len(ks))
		}
		sum := 0
		for v, k := range c {
			c[v] = sum
			sum += k
		}
		shift := 8 * d
		for i := range src {
			v := byte(src[i].hi >> shift)
			dst[c[v]] = src[i]
			c[v]++
		}
		src, dst = dst, src
	}
	if &src[0] != &ks[0] {
		copy(ks, src)
	}
	for i := 0; i < len(ks); {
		j := i + 1
		for j < len(ks) && ks[j].hi == ks[i].hi {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(ks[i:j], compareKeyed)
		}
		i = j
	}
}

// SortedNodes yields z's nodes, their owner names in canonical order
// (SortedOwners' order): what a snapshot writes. When an iteration of
// CanonicalNodes has kept z's order (an AXFR of this version), it reads
// that order; otherwise it sorts, holding 16 bytes a name until the
// iteration ends and keeping nothing (CanonicalNodes' sort is faster but
// holds 56 bytes a name, which would raise a save's peak): each node with
// the first 8 bytes of CanonicalNodes' key, names whose keys tie or that
// have none (the apex) compared as strings. SortedOwners' list is as large
// but each comparison reads both names (5 times the CPU for a million
// names); sorting the nodes alone (8 bytes a name) read each name through
// its node and record, which doubled the CPU of a save.
func SortedNodes(z *Zone) iter.Seq[*Node] {
	return func(yield func(*Node) bool) {
		if order := z.canonical.Load(); order != nil {
			apex, pending := z.Nodes[z.Name]
			for _, nd := range *order {
				if pending && CanonicalCompare(z.Name, nd.owner()) < 0 {
					if pending = false; !yield(apex) {
						return
					}
				}
				if !yield(nd) {
					return
				}
			}
			if pending {
				yield(apex)
			}
			return
		}
		type keyed struct {
			hi uint64 // 0: no key
			nd *Node
		}
		ks := make([]keyed, 0, len(z.Nodes))
		for name, nd := range z.Nodes {
			hi, _ := canonicalKey(name, z.Name) // a key's first byte is a label's: never 0
			ks = append(ks, keyed{hi, nd})
		}
		slices.SortFunc(ks, func(a, b keyed) int {
			if a.hi != b.hi && a.hi != 0 && b.hi != 0 {
				return cmp.Compare(a.hi, b.hi)
			}
			return CanonicalCompare(a.nd.owner(), b.nd.owner())
		})
		for i := range ks {
			if !yield(ks[i].nd) {
				return
			}
		}
	}
}

// owner is n's owner name, as its records spell it ("" for a node with no
// records, which only the apex may be).
func (n *Node) owner() string {
	if len(n.recs) == 0 {
		return ""
	}
	return n.recs[0].Wire.Header().Name
}

// canonicalKey is the first 15 bytes of name's canonical sort key below
// zone: its labels under zone from the rightmost, each followed by a zero
// byte (a presentation-format name holds no zero byte: it would be written
// \000), zero-padded, big-endian in two integers, the last byte zero. Keys
// compare as CanonicalCompare compares the names, as far as 15 bytes tell.
// A name that is not below zone label by label (an escaped dot where the
// zone's name would start) has no key: the last byte is 1, and it is
// compared as a string.
func canonicalKey(name, zone string) (hi, lo uint64) {
	var b [16]byte
	end := len(name) - len(zone) - 1 // the dot before the zone's name
	if zone == "." {
		end = len(name) - 1
	}
	if end < 1 || name[end] != '.' || escapedAt(name, end) || !strings.HasSuffix(name, zone) {
		return 0, 1
	}
	const keyLen = len(b) - 1
	n := 0
	for end > 0 && n < keyLen {
		start := labelStart(name, end)
		n += copy(b[n:keyLen], name[start:end])
		if n < keyLen {
			b[n] = 0
			n++
		}
		end = max(start-1, 0)
	}
	return binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
}
