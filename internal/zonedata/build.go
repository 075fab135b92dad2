package zonedata

// Builder builds a zone from records in GetRecords order (as a snapshot
// holds them; any order is accepted). Records arrive grouped by RRset:
// each run of one RRset is gathered and stored once (storing after every
// record copied the set each time, quadratic in the size of an RRset). An
// RRset whose records come in several runs is gathered in late and stored
// by Flush. Z is the zone being built: set it (Name, SOA, an empty Nodes)
// before the first Add.
type Builder struct {
	Z      *Zone
	run    SetBuilder
	runKey setKey
	late   map[setKey]*SetBuilder
}

type setKey struct {
	name string
	typ  uint16
}

// Add adds r, owned by name (fully qualified, lower case), dropping a
// duplicate of a record of its RRset.
func (zb *Builder) Add(name string, r Rec) {
	if k := (setKey{name, r.Wire.Header().Rrtype}); k != zb.runKey {
		zb.flush()
		zb.runKey = k
	}
	zb.run.Add(r)
}

// Flush stores every RRset gathered so far; call it after the last Add.
func (zb *Builder) Flush() {
	zb.flush()
	for k, b := range zb.late {
		zb.put(k, b.Recs)
	}
	zb.late = nil
}

// SetBuilder gathers an RRset's records in order, dropping duplicates (same
// data) in constant time per record: a linear scan while the set is small,
// a map beyond.
type SetBuilder struct {
	Recs []Rec // the RRset so far
	seen map[string]bool
}

// Add adds r unless the set holds a record with its data.
func (b *SetBuilder) Add(r Rec) {
	const small = 16
	switch {
	case b.seen != nil:
		if b.seen[r.Data()] {
			return
		}
		b.seen[r.Data()] = true
	case len(b.Recs) < small:
		if containsData(b.Recs, r) {
			return
		}
	default:
		b.seen = make(map[string]bool, 2*len(b.Recs))
		for _, o := range b.Recs {
			b.seen[o.Data()] = true
		}
		if b.seen[r.Data()] {
			return
		}
		b.seen[r.Data()] = true
	}
	b.Recs = append(b.Recs, r)
}

func containsData(set []Rec, r Rec) bool {
	for _, o := range set {
		if o.SameData(r) {
			return true
		}
	}
	return false
}

func (zb *Builder) flush() {
	if len(zb.run.Recs) == 0 {
		return
	}
	k := zb.runKey
	n := zb.Z.Nodes[k.name] // one lookup per run: most runs make a node
	switch existing := n.Get(k.typ); {
	case len(existing) > 0:
		if zb.late == nil {
			zb.late = map[setKey]*SetBuilder{}
		}
		b := zb.late[k]
		if b == nil {
			b = &SetBuilder{}
			for _, r := range existing {
				b.Add(r)
			}
			zb.late[k] = b
		}
		for _, r := range zb.run.Recs {
			b.Add(r)
		}
	case n == nil:
		zb.Z.Nodes[k.name] = NewNode(k.typ, zb.run.Recs)
		if len(zb.run.Recs) > 1 { // the node keeps the slice
			zb.run = SetBuilder{}
			return
		}
	default:
		n.Put(k.typ, zb.run.Recs)
	}
	// The node copied the run's records: its slice serves the next run.
	zb.run = SetBuilder{Recs: zb.run.Recs[:0]}
}

func (zb *Builder) put(k setKey, rs []Rec) {
	if n := zb.Z.Nodes[k.name]; n != nil {
		n.Put(k.typ, rs)
	} else {
		zb.Z.Nodes[k.name] = NewNode(k.typ, rs)
	}
}
