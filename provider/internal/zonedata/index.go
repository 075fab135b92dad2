package zonedata

import (
	"hash/maphash"
	"iter"
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"
)

// Index is a read-only name index of one zone version for the answer
// path's static answers: every owner name, empty non-terminal and
// delegation point of the zone in one open-addressing table of compact
// slots (a tag of the name's hash, what the name is, a reference to its
// node). Go's map of Nodes costs a lookup of a large zone three to four
// cache lines in different pages — the table of its directory, the
// group's control word and slot, the key's bytes, then the node — and a
// question makes one to three lookups (a CNAME's target, a wildcard's
// encloser, Cuts per label for a referral, ENTs for NXDOMAIN). Here a
// name the zone does not hold is rejected from the tags of the slot's
// cache line, and a hit reads that line and the node (whose first
// record holds the owner name, compared in place of a key: a node the
// builder packed holds the name's bytes too, see packedNode); a name's
// node, ENT and cut flags come from the one probe.
//
// BenchmarkScaleQueries in provider/memory (scale.sh's uniform mix),
// callgrind with this host's caches, a query, maps (and names in strings
// of their own) vs index (and names in their nodes): 100,000 names 10.6 vs
// 7.5 D1 read misses (8.0 with the index alone), 2,236 vs 2,280
// instructions; 1,000,000 names 12.1 vs 7.6 (8.1), 2,238 vs 2,291. In
// time (GOMAXPROCS=1, load under 1) 100,000 names 739–1,014 vs 550–764
// ns, 1,000,000 names 1,019–1,238 vs 906–1,126.
//
// The index costs 16 bytes a slot (indexSlot), 1.5 slots a name (some 20 bytes
// a record of scale.sh's zone), so a zone gets one only from
// indexMinNames names on (Zone.FastIndex). At 10,000 names the zone's
// lines stay in the last-level cache with or without it (callgrind: no
// LL misses either way; D1 read misses 8.2 vs 7.1 a query, time the same
// within the noise), and its 22 bytes a record would take the RSS per
// record near Knot's (scale.sh: 229–276 B a record against Knot's
// 262–278 in the runs of 2026-12-04).
type Index struct {
	seed   maphash.Seed
	chunks []*indexChunk // the table: slot i is chunks[i/indexChunkSlots][i%indexChunkSlots]
	n      int           // slots in the table
	count  int           // slots in use
	owned  []bool        // while updated makes it: the chunks this index copied
}

// indexChunk is a part of an Index's table. The table is in parts so that
// a version changed at a few names (CarryIndex) copies the parts it
// changes, not the table: copying the table whole and the garbage it left
// made a write at a million names some 1.2 times as costly (copying 24 MB
// each time). A lookup reads the list of chunks first: at 4,096 slots a
// chunk that list (3 KiB at a million names) cost 0.4 D1 misses a query
// more under callgrind, at 16,384 (92 chunks) none measurable.
type indexChunk [indexChunkSlots]indexSlot

const indexChunkSlots = 16384 // 256 KiB

// Kinds of name an Index entry is (bits of indexSlot.kind).
const (
	IndexNode = 1 << iota // an owner name: Find returns its node
	IndexENT              // an empty non-terminal (no node)
	IndexCut              // a delegation point below the apex (Zone.Cuts)
)

// indexSlot is one slot: tag is the high 32 bits of the name's hash, 0
// when the slot is empty (a hash whose high bits are 0 is tagged 1);
// ref is the *Node of an owner name whose first record's owner is the
// name (IndexNode, named false), else a *namedRef.
type indexSlot struct {
	tag   uint32
	kind  uint16
	named bool
	ref   unsafe.Pointer
}

// namedRef is an entry whose name its node does not hold: an empty
// non-terminal's (n nil), or an owner name's whose node holds no record
// (a zone's apex before its first) or whose first record is owned by
// another spelling (none a store writes).
type namedRef struct {
	name string
	n    *Node
}

const (
	// indexMinNames is the fewest owner names a zone gets an Index at.
	indexMinNames = 32768
)

// indexSize is the slots of a new table: 3 for 2 entries (a miss then
// scans some five slots, under two cache lines, on average). A table
// updated as its zone changes (CarryIndex) fills up to indexFullest
// percent of its slots.
func indexSize(entries int) int { return entries + entries/2 + 4 }

const indexFullest = 80

// NewIndex returns the index of z's names, ENTs and cuts. At a million
// names it takes some 0.4 s, mostly cache misses: each name's bytes, its
// node and its slot are read in turn (gathering the names in a list first
// and making each of those steps a pass of its own, so that the CPU
// overlaps the misses, gained nothing measurable).
//
// A zone loaded whole (Builder.Flush) gets its index from the builder's
// list of names instead, in the order they came, its nodes and names
// read as a walk through memory: BenchmarkScaleLoad at a million names,
// the machine otherwise idle, 1.28–1.40 s a load without an index,
// 1.91–2.27 with one built here, 1.58–1.98 from the list.
func NewIndex(z *Zone) *Index {
	x := newIndexTable(len(z.Nodes) + len(z.ENTs))
	for name, n := range z.Nodes {
		x.place(maphash.String(x.seed, name), x.entry(z, name, n, false))
	}
	x.placeENTs(z)
	return x
}

// newIndexTable returns an empty index for entries names.
func newIndexTable(entries int) *Index {
	size := indexSize(entries)
	x := &Index{seed: maphash.MakeSeed(), n: size, chunks: make([]*indexChunk, (size+indexChunkSlots-1)/indexChunkSlots)}
	for c := range x.chunks {
		x.chunks[c] = new(indexChunk)
	}
	return x
}

// placeENTs places z's empty non-terminals.
func (x *Index) placeENTs(z *Zone) {
	for name := range z.ENTs {
		if z.Nodes[name] == nil { // a name is one or the other; the node wins
			x.place(maphash.String(x.seed, name), x.entry(z, name, nil, true))
		}
	}
}

// entry returns the slot of name in z (tag aside), its node n (nil for
// none), an empty non-terminal when ent; kind 0 when z holds neither.
func (x *Index) entry(z *Zone, name string, n *Node, ent bool) indexSlot {
	switch {
	case n != nil:
		return nodeEntry(name, n, z.Cuts[name])
	case ent:
		return indexSlot{kind: IndexENT, named: true, ref: unsafe.Pointer(&namedRef{name: name})}
	}
	return indexSlot{}
}

// nodeEntry returns the slot (tag aside) of owner name holding node n, a
// delegation point when cut.
func nodeEntry(name string, n *Node, cut bool) indexSlot {
	kind := uint16(IndexNode)
	if cut {
		kind |= IndexCut
	}
	if len(n.recs) > 0 && sameString(n.recs[0].Wire.Header().Name, name) {
		return indexSlot{kind: kind, ref: unsafe.Pointer(n)}
	}
	return indexSlot{kind: kind, named: true, ref: unsafe.Pointer(&namedRef{name: name, n: n})}
}

// sameString is a == b, at once when they share their bytes (a load's
// records and keys mostly do).
func sameString(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

// place puts e (its tag aside) in the first free slot of the probe of
// hash h.
func (x *Index) place(h uint64, e indexSlot) {
	e.tag = indexTag(h)
	for i := x.home(h); ; i = x.next(i) {
		if x.slot(i).tag == 0 {
			*x.slot(i) = e
			x.count++
			return
		}
	}
}

// name returns the name slot s holds.
func (s *indexSlot) name() string {
	if s.named {
		return (*namedRef)(s.ref).name
	}
	return (*Node)(s.ref).recs[0].Wire.Header().Name
}

// updated returns a copy of x with the names given (and the names between
// each and the apex, whose ENT flags they decide) as z holds them, or nil
// when the copy would be fuller than indexFullest percent (a zone grown
// by a fifth since its index was built: then it gets a new one, see
// FastIndex).
func (x *Index) updated(z *Zone, names iter.Seq[string]) *Index {
	y := &Index{seed: x.seed, chunks: slices.Clone(x.chunks), n: x.n, count: x.count, owned: make([]bool, len(x.chunks))}
	defer func() { y.owned = nil }()
	for name := range names {
		for n := name; ; {
			if y.count >= y.n*indexFullest/100 {
				return nil // checked before each insertion: a probe always ends
			}
			y.set(n, y.entry(z, n, z.Nodes[n], z.ENTs[n]))
			i := strings.IndexByte(n, '.')
			if n == z.Name || i < 0 || i == len(n)-1 || len(n) <= len(z.Name) {
				break
			}
			n = n[i+1:]
		}
	}
	return y
}

// set makes name's slot e (kind 0: no slot).
func (x *Index) set(name string, e indexSlot) {
	h := maphash.String(x.seed, name)
	e.tag = indexTag(h)
	i := x.home(h)
	for ; x.slot(i).tag != 0; i = x.next(i) {
		if x.slot(i).tag == e.tag && x.slot(i).name() == name {
			break
		}
	}
	switch {
	case x.slot(i).tag == 0 && e.kind != 0:
		*x.mut(i) = e
		x.count++
	case x.slot(i).tag != 0 && e.kind != 0:
		*x.mut(i) = e
	case x.slot(i).tag != 0:
		x.remove(i)
	}
}

// remove empties slot i, moving back the entries after it that their
// probes then reach (linear probing's deletion without tombstones).
func (x *Index) remove(i int) {
	*x.mut(i) = indexSlot{}
	x.count--
	for j := x.next(i); x.slot(j).tag != 0; j = x.next(j) {
		k := x.home(maphash.String(x.seed, x.slot(j).name()))
		// The entry at j stays when its home k lies cyclically in (i, j].
		if i <= j && i < k && k <= j || j < i && (i < k || k <= j) {
			continue
		}
		*x.mut(i), *x.mut(j) = *x.slot(j), indexSlot{}
		i = j
	}
}

func indexTag(h uint64) uint32 { return max(uint32(h>>32), 1) }

// home returns the first slot of hash h (its low 32 bits scaled to the
// table: no power-of-two size needed).
func (x *Index) home(h uint64) int {
	return int(uint64(uint32(h)) * uint64(x.n) >> 32)
}

// slot returns slot i, to read.
func (x *Index) slot(i int) *indexSlot {
	u := uint(i) // never negative: unsigned, the division and remainder are a shift and a mask
	return &x.chunks[u/indexChunkSlots][u%indexChunkSlots]
}

// mut returns slot i to write, in a chunk of x's own: updated copies a
// chunk it shares with the index it copies at its first write.
func (x *Index) mut(i int) *indexSlot {
	c := i / indexChunkSlots
	if x.owned != nil && !x.owned[c] {
		cp := *x.chunks[c]
		x.chunks[c], x.owned[c] = &cp, true
	}
	return x.slot(i)
}

func (x *Index) next(i int) int {
	if i++; i == x.n {
		return 0
	}
	return i
}

// Find returns the node of name (lower case, fully qualified, in text
// form) and what the name is (IndexNode, IndexENT, IndexCut bits), or
// nil and 0 when the zone holds no such name. It allocates nothing.
func (x *Index) Find(name []byte) (*Node, uint16) {
	h := maphash.Bytes(x.seed, name)
	tag := indexTag(h)
	for i := x.home(h); ; i = x.next(i) {
		s := x.slot(i)
		if s.tag == tag {
			if !s.named {
				n := (*Node)(s.ref)
				if n.recs[0].Wire.Header().Name == string(name) {
					return n, s.kind
				}
			} else if r := (*namedRef)(s.ref); r.name == string(name) {
				return r.n, s.kind
			}
		} else if s.tag == 0 {
			return nil, 0
		}
	}
}

// indexBuilding is set while a background build of some zone's index
// runs: one at a time, so a burst of writes builds for the zones asked
// after it, not for every version.
var indexBuilding atomic.Bool

// FastIndex returns z's name index, or nil when z has fewer than
// indexMinNames names or its index is not built yet: the first call on a
// large zone without one starts building it in the background (unless
// another build runs; a later call starts it then), and callers use the
// Nodes, ENTs and Cuts maps meanwhile.
func (z *Zone) FastIndex() *Index {
	x := z.index.Load()
	if x == nil && len(z.Nodes) >= indexMinNames {
		z.startIndex()
	}
	return x
}

// startIndex starts building z's index in the background unless a build
// runs (FastIndex).
func (z *Zone) startIndex() {
	if indexBuilding.CompareAndSwap(false, true) {
		go func() {
			defer indexBuilding.Store(false)
			if z.index.Load() == nil {
				z.index.Store(NewIndex(z))
			}
		}()
	}
}

// CarryIndex gives z, a version made from old by changing the owner names
// given and nothing else (their records, whether they exist), old's name
// index updated for those names when old has one: a copy of its list of
// chunks, of the chunks it changes and a few probes, where building one
// anew reads every name and node (some 0.4 s at a million names, more
// than the write's Clone of the Nodes). old's index stays as it was.
// Call it before z is published.
func (z *Zone) CarryIndex(old *Zone, names iter.Seq[string]) {
	x := old.index.Load()
	if x == nil || z.index.Load() != nil {
		return
	}
	if y := x.updated(z, names); y != nil {
		z.index.Store(y)
	}
}

// IndexAnySize builds z's name index now whatever z's size, unless it has
// one: for tests of the answer path over a small zone.
func (z *Zone) IndexAnySize() {
	if z.index.Load() == nil {
		z.index.Store(NewIndex(z))
	}
}
