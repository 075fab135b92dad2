package record

import (
	"hash/maphash"
	"slices"
	"strings"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/internal/dnsname"
)

// Zone is the content of one zone as read from a provider: the input Plan
// compares the desired state against. Name is the zone ("example.com.");
// Records are as libdns's GetRecords returns them (names relative to the
// zone). Duplicates (an AXFR lists the SOA twice) and records of types the
// reconciler never manages (SOA, NS, ...) do no harm.
type Zone struct {
	// Name is the zone, e.g. "example.com.".
	Name string
	// Records are the zone's records as GetRecords returned them.
	Records []libdns.Record
}

// curSet is one RRset as found in a zone. Its values and its records
// exactly as read (so deletions match them) lie in the index's shared
// arrays from lo on; zoneIndex.rrset and zoneIndex.records return them.
// It holds no slices or strings of its own (its name is its node's, its
// type an index into the index's type names), which keeps it small and
// free of pointers for the garbage collector to scan: Plan builds one per
// RRset of every zone on each reconcile.
type curSet struct {
	// ttl is the smallest TTL of the set's records.
	ttl time.Duration
	// lo is the index of the set's first value and record; nrec and nval
	// count its records and its values (duplicates removed).
	lo, nrec, nval int32
	// next is the index of the next set at the same name (-1: none).
	next int32
	// node is the index of the set's node.
	node int32
	// typ is the index of the set's type in zoneIndex.typeNames.
	typ uint32
	// mixed is true when the records of the set disagree on the TTL.
	mixed bool
	// isMarker is true for the owner marker set of the node.
	isMarker bool
}

// node is a name of the zone: its sets (a chain through curSet.next) and,
// when the index knows the marker prefix, the TXT set of its owner marker.
type node struct {
	name          string
	first, marker int32
}

// zoneIndex is a zone's records grouped into sets and names. Plan runs over
// every RRset of a zone on each reconcile, so it is built with one hash
// lookup per run of a name's records and a few large allocations rather
// than several per set.
type zoneIndex struct {
	zone string
	// prefix is the owner marker label ("": markers are not filed apart).
	sets []curSet
	// typeNames are the types of the zone's sets, in the order first seen.
	typeNames []string
	typeBuf   [8]string // typeNames' first array, inside the index
	nodes     []node
	// names finds nodes by name: an open-addressing hash table whose slots
	// hold a node's index plus one (0: empty), probed linearly from the
	// name's hash. It has at least twice as many slots as there are
	// records, so it never fills, and it holds no pointers for the garbage
	// collector to scan.
	names []int32
	seed  maphash.Seed
	// vals and recs hold the values and records of the sets (see curSet).
	vals []string
	recs []libdns.Record
}

// rrset returns the set as an RRSet; its Values are shared with the index
// and must not be modified.
func (z *zoneIndex) rrset(cs *curSet) RRSet {
	return RRSet{Zone: z.zone, Name: z.setName(cs), Type: z.typeNames[cs.typ], TTL: cs.ttl, Values: z.values(cs)}
}

// values returns the set's values (sorted, unique); they are shared with
// the index and must not be modified.
func (z *zoneIndex) values(cs *curSet) []string {
	hi := cs.lo + cs.nval
	return z.vals[cs.lo:hi:hi]
}

// setName returns the relative name of the set: its node's, or for an
// owner marker that of its first record (found anew: markers are rarely
// asked for, and "_p" and "_p.@" are both the marker of the apex).
func (z *zoneIndex) setName(cs *curSet) string {
	if !cs.isMarker {
		return z.nodes[cs.node].name
	}
	var name string
	switch r := z.recs[cs.lo].(type) {
	case libdns.Address:
		name = r.Name
	default:
		name = r.RR().Name
	}
	return relName(name, z.zone)
}

// typeCode returns the index of typ in z.typeNames, adding it when add is
// true; ok is false when typ is absent and not added. A zone holds a
// handful of types, so a linear search is the quickest.
func (z *zoneIndex) typeCode(typ string, add bool) (code uint32, ok bool) {
	for i, t := range z.typeNames {
		if t == typ {
			return uint32(i), true
		}
	}
	if !add {
		return 0, false
	}
	z.typeNames = append(z.typeNames, typ)
	return uint32(len(z.typeNames) - 1), true
}

// records returns the records of the set exactly as read; they are shared
// with the index (and maybe the caller) and must not be modified.
func (z *zoneIndex) records(cs *curSet) []libdns.Record {
	hi := cs.lo + cs.nrec
	return z.recs[cs.lo:hi:hi]
}

// indexZone groups recs. prefix is the owner marker label ("" to skip
// markers): a TXT set at "<prefix>.<name>" is filed as the marker of name
// rather than as a name of its own.
func indexZone(zone string, recs []libdns.Record, prefix string) *zoneIndex {
	idx := &zoneIndex{
		zone:  zone,
		sets:  make([]curSet, 0, len(recs)),
		nodes: make([]node, 0, len(recs)/2+1),
		seed:  maphash.MakeSeed(),
	}
	slots := 2
	for slots < 2*len(recs) {
		slots <<= 1
	}
	idx.names = make([]int32, slots)
	idx.typeNames = idx.typeBuf[:0]
	// Pass 1: the key and value of each record, and the set it belongs to.
	of := make([]int32, len(recs))
	vals := make([]string, len(recs))
	// Address texts go into one buffer, which becomes one string at the end
	// (addrEnd marks the records whose value is a span of it by the span's
	// end; it starts where the previous address ends).
	var txt strings.Builder
	var addrEnd []int32
	lastOwner, lastNode := "", int32(-1)
	lastRaw, lastRel := "", relName("", zone)
	// contiguous stays true while every set's records come in one run (as
	// most providers list them); the values and records can then stay
	// where they are instead of being laid out again.
	contiguous, prev := true, int32(-1)
	lastTyp, lastCode := "", uint32(0)
	for i, rec := range recs {
		of[i] = -1
		if rec == nil {
			contiguous = false
			continue
		}
		var name, typ, val string
		var ttl time.Duration
		switch r := rec.(type) {
		case libdns.Address:
			name, ttl, typ = r.Name, r.TTL, "A"
			if r.IP.Is6() {
				typ = "AAAA"
			}
			if r.IP.IsValid() {
				if addrEnd == nil {
					addrEnd = make([]int32, len(recs))
					txt.Grow(16 * len(recs))
				}
				var buf [48]byte
				if r.IP.Is4() {
					txt.Write(appendIPv4(buf[:0], r.IP.As4()))
				} else {
					txt.Write(r.IP.AppendTo(buf[:0]))
				}
				addrEnd[i] = int32(txt.Len())
			}
		case libdns.TXT: // as its RR gives it, without building the RR
			name, ttl, typ, val = r.Name, r.TTL, "TXT", r.Text
		default:
			rr := rec.RR()
			typ = strings.ToUpper(rr.Type)
			name, ttl, val = rr.Name, rr.TTL, canonValue(typ, rr.Data)
		}
		// A name's records come together: make it relative once.
		if name == lastRaw {
			name = lastRel
		} else {
			lastRaw = name
			name = relName(name, zone)
			lastRel = name
		}
		ttl = ttl.Truncate(time.Second)
		owner, isMarker := name, false
		if prefix != "" && typ == "TXT" {
			if name == prefix {
				owner, isMarker = "@", true
			} else if len(name) > len(prefix) && name[len(prefix)] == '.' && strings.HasPrefix(name, prefix) {
				owner, isMarker = name[len(prefix)+1:], true
			}
		}
		// Providers list a name's records together: look the name up once.
		ni := lastNode
		if owner != lastOwner || lastNode < 0 {
			var slot int
			if slot, ni = idx.find(owner); ni < 0 {
				ni = int32(len(idx.nodes))
				idx.nodes = append(idx.nodes, node{name: owner, first: -1, marker: -1})
				idx.names[slot] = ni + 1
			}
			lastOwner, lastNode = owner, ni
		}
		code := lastCode
		if typ != lastTyp || len(idx.typeNames) == 0 {
			code, _ = idx.typeCode(typ, true)
			lastTyp, lastCode = typ, code
		}
		nd := &idx.nodes[ni]
		si := int32(-1)
		if isMarker {
			si = nd.marker
		} else {
			for c := nd.first; c >= 0; c = idx.sets[c].next {
				if idx.sets[c].typ == code {
					si = c
					break
				}
			}
		}
		if si < 0 {
			si = int32(len(idx.sets))
			idx.sets = append(idx.sets, curSet{typ: code, ttl: ttl, lo: int32(i), next: -1, node: ni, isMarker: isMarker})
			if isMarker {
				nd.marker = si
			} else {
				idx.sets[si].next, nd.first = nd.first, si
			}
		} else if cs := &idx.sets[si]; ttl != cs.ttl {
			cs.mixed = true
			cs.ttl = min(cs.ttl, ttl)
		}
		cs := &idx.sets[si]
		if si != prev && cs.nrec > 0 {
			contiguous = false
		}
		prev = si
		of[i], vals[i] = si, val
		cs.nrec++
	}
	if addrEnd != nil {
		all, lo := txt.String(), int32(0)
		for i, hi := range addrEnd {
			if hi > 0 {
				vals[i], lo = all[lo:hi], hi
			}
		}
	}
	if contiguous {
		idx.vals, idx.recs = vals, recs // recs read only
		idx.sortValues()
		return idx
	}
	// Pass 2: lay values and records out set by set in two shared arrays.
	fill := make([]int32, len(idx.sets))
	var n int32
	for si := range idx.sets {
		cs := &idx.sets[si]
		cs.lo, fill[si] = n, n
		n += cs.nrec
	}
	idx.vals = make([]string, n)
	idx.recs = make([]libdns.Record, n)
	for i, si := range of {
		if si < 0 {
			continue
		}
		idx.vals[fill[si]], idx.recs[fill[si]] = vals[i], recs[i]
		fill[si]++
	}
	idx.sortValues()
	return idx
}

// sortValues sorts the values of each set and removes duplicates.
func (z *zoneIndex) sortValues() {
	for si := range z.sets {
		cs := &z.sets[si]
		v := z.vals[cs.lo : cs.lo+cs.nrec]
		switch len(v) {
		case 1:
		case 2: // the usual pair, without the general sort
			if v[1] < v[0] {
				v[0], v[1] = v[1], v[0]
			} else if v[1] == v[0] {
				v = v[:1]
			}
		default:
			slices.Sort(v)
			v = slices.Compact(v)
		}
		cs.nval = int32(len(v))
	}
}

// infrastructure reports whether an RRset belongs to the zone itself rather
// than to the name's owner: the apex SOA and NS (and DNSSEC keys), and
// DNSSEC signatures and denial records anywhere. They never make a name
// occupied, never conflict with a CNAME and are never deleted.
func infrastructure(name, typ string) bool {
	switch typ {
	case "RRSIG", "NSEC", "NSEC3":
		return true
	case "SOA", "NS", "DNSKEY", "CDS", "CDNSKEY", "NSEC3PARAM":
		return name == "@"
	}
	return false
}

// find returns the slot of name in z.names and its node, or the empty slot
// where it belongs and -1.
func (z *zoneIndex) find(name string) (slot int, ni int32) {
	mask := len(z.names) - 1
	slot = int(maphash.String(z.seed, name)) & mask
	for {
		ni = z.names[slot] - 1
		if ni < 0 || z.nodes[ni].name == name {
			return slot, ni
		}
		slot = (slot + 1) & mask
	}
}

// lookupAfter returns the node of name, or -1, trying node prev+1 before
// hashing: providers list a zone's records sorted by name, as Plan visits
// the names, so the nodes of the names it looks up one after the other
// usually follow each other too.
func (z *zoneIndex) lookupAfter(name string, prev int32) int32 {
	if next := int(prev) + 1; next < len(z.nodes) && z.nodes[next].name == name {
		return int32(next)
	}
	return z.lookup(name)
}

// lookup returns the node of name, or -1.
func (z *zoneIndex) lookup(name string) int32 {
	if len(z.names) == 0 {
		return -1
	}
	_, ni := z.find(name)
	return ni
}

// get returns the set of a type at node ni, or nil.
func (z *zoneIndex) get(ni int32, typ string) *curSet {
	if ni < 0 {
		return nil
	}
	code, ok := z.typeCode(typ, false)
	if !ok {
		return nil
	}
	for c := z.nodes[ni].first; c >= 0; c = z.sets[c].next {
		if z.sets[c].typ == code {
			return &z.sets[c]
		}
	}
	return nil
}

// types appends the types at node ni, infrastructure excepted, sorted.
func (z *zoneIndex) types(ni int32, buf []string) []string {
	if ni < 0 {
		return buf
	}
	for c := z.nodes[ni].first; c >= 0; c = z.sets[c].next {
		if typ := z.typeNames[z.sets[c].typ]; !infrastructure(z.nodes[ni].name, typ) {
			buf = append(buf, typ)
		}
	}
	slices.Sort(buf)
	return buf
}

// marker returns the marker set of node ni, or nil.
func (z *zoneIndex) marker(ni int32) *curSet {
	if ni < 0 || z.nodes[ni].marker < 0 {
		return nil
	}
	return &z.sets[z.nodes[ni].marker]
}

// ownership is what the marker of a name says.
type ownership uint8

const (
	// free: no records and no marker at the name.
	free ownership = iota
	// owned: the marker holds our owner id.
	owned
	// unmarked: records but no marker.
	unmarked
	// foreign: a marker without our owner id.
	foreign
)

// markerName returns the relative name of the owner marker of name.
func markerName(prefix, name string) string {
	if name == "@" {
		return prefix
	}
	return prefix + "." + name
}

// owner reports who owns node ni, and the owner ids found in its marker.
func (z *zoneIndex) owner(id string, ni int32) (ownership, []string) {
	if m := z.marker(ni); m != nil && m.nval > 0 {
		vals := z.values(m)
		if slices.Contains(vals, id) {
			return owned, nil
		}
		return foreign, vals
	}
	var buf [4]string
	if len(z.types(ni, buf[:0])) > 0 {
		return unmarked, nil
	}
	return free, nil
}

// isMarker reports whether a relative name is an owner marker's name.
func isMarker(prefix, name string) bool {
	return name == prefix || (len(name) > len(prefix) && name[len(prefix)] == '.' && strings.HasPrefix(name, prefix))
}

// zoneOf returns the normalised zone name.
func zoneOf(z string) string { return dnsname.Fqdn(z) }
