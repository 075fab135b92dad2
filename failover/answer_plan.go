package failover

import (
	"encoding/binary"
	"hash/maphash"
	"sync/atomic"
	"unsafe"

	"github.com/libdns/libdns"
)

// Answer plans. An answer function is handed the same records for a name
// query after query: the zone's, until health or configuration changes
// them. What a weighted or geo choice works out from those records (which
// positions are candidates, with what weight; which records each region
// answers) is the same every time, so it is worked out once, kept as a
// plan beside a copy of the records it was made from, and reused while the
// records handed in are the same ones (compared field by field: see
// sameRecord). A query then costs the comparison and the choice itself.
//
// Each answer function keeps up to planSlots plans, one per set of records
// it is handed for a name and type: a per-name hook has one (two with
// AAAA), a function chained after Geo (Chain) one per region, a zone-wide
// hook one per name. A set of records is planned the second time it misses
// within the last planRecent misses, so records that change on every
// query, or a name asked once, never cost a plan. While every slot is full
// a new plan replaces the least recently used one, at most once per
// planEvery misses: more sets than slots, interleaved, then answer mostly
// without a plan (as they would without this cache, allocation-free)
// instead of rebuilding a plan, which allocates, on every miss.

const (
	// planSlots is how many plans one answer function keeps.
	planSlots = 8
	// planRecent is how many recent misses a miss is looked up among.
	planRecent = 16
	// planEvery is how many misses apart two plans replace older ones.
	planEvery = 64
)

// planned is a plan and what it was made from.
type planned[P any] struct {
	name, qtype string
	recs        []libdns.Record // a copy of the records the plan was made from
	plan        P
	used        atomic.Uint64 // planCache.misses when it last answered
}

// planCache holds one answer function's plans.
type planCache[P any] struct {
	cur       [planSlots]atomic.Pointer[planned[P]]
	misses    atomic.Uint64             // queries answered without a plan; the clock of used
	recent    [planRecent]atomic.Uint64 // recordsHash of recent misses, by misses mod planRecent
	lastEvict atomic.Uint64             // misses when a plan last replaced another
	hint      atomic.Uint32             // the slot that answered last
}

// get returns the plan made from rrs for name and qtype: a kept one when
// rrs are the records it was made from, else a new one from build when
// rrs missed recently too (and can be compared, and a slot can be had),
// else nil (answer without a plan).
func (s *planCache[P]) get(name, qtype string, rrs []libdns.Record, build func([]libdns.Record) P) *P {
	// From the slot that answered last: a per-name hook finds its plan at
	// once, even beside the stale plans of records health has changed.
	h0 := s.hint.Load()
	for j := range uint32(planSlots) {
		i := (h0 + j) % planSlots
		if c := s.cur[i].Load(); c != nil && c.name == name && c.qtype == qtype && sameRecords(c.recs, rrs) {
			// Writes only when something moved: none while every
			// query finds the same plan.
			if j != 0 {
				s.hint.Store(i)
			}
			if m := s.misses.Load(); c.used.Load() != m {
				c.used.Store(m)
			}
			return &c.plan
		}
	}
	if !comparableRecords(rrs) {
		return nil
	}
	h := recordsHash(name, qtype, rrs)
	m := s.misses.Add(1)
	seen := false
	for i := range s.recent {
		if s.recent[i].Load() == h {
			seen = true
			break
		}
	}
	s.recent[m%planRecent].Store(h)
	if !seen {
		return nil
	}
	// An empty slot, else the least recently used plan if none replaced
	// another within the last planEvery misses.
	slot, oldest, empty := -1, uint64(0), false
	for i := range s.cur {
		o := s.cur[i].Load()
		if o == nil {
			slot, empty = i, true
			break
		}
		if u := o.used.Load(); slot < 0 || u < oldest {
			slot, oldest = i, u
		}
	}
	if !empty {
		last := s.lastEvict.Load()
		if m-last < planEvery || !s.lastEvict.CompareAndSwap(last, m) {
			return nil
		}
	}
	recs := append([]libdns.Record(nil), rrs...)
	c := &planned[P]{name: name, qtype: qtype, recs: recs, plan: build(recs)}
	c.used.Store(m)
	s.cur[slot].Store(c)
	return &c.plan
}

// planSeed seeds recordsHash.
var planSeed = maphash.MakeSeed()

// recordsHash digests what sameRecord compares (a collision only makes a
// plan that the next comparison turns down).
func recordsHash(name, qtype string, rrs []libdns.Record) uint64 {
	h := uint64(14695981039346656037)
	mix := func(v uint64) {
		h ^= v
		h *= 1099511628211
		h ^= h >> 29
	}
	mix(maphash.String(planSeed, name))
	mix(maphash.String(planSeed, qtype) ^ uint64(len(rrs)))
	for _, r := range rrs {
		switch r := r.(type) {
		case libdns.Address:
			a := r.IP.As16()
			mix(binary.LittleEndian.Uint64(a[:8]))
			mix(binary.LittleEndian.Uint64(a[8:]))
			mix(uint64(r.TTL) ^ uint64(len(r.Name))<<56)
		case libdns.RR:
			mix(uint64(r.TTL) ^ uint64(len(r.Name))<<56 ^ uint64(len(r.Data))<<40 ^ uint64(len(r.Type))<<32)
		}
	}
	return h
}

// sameRecords reports whether the remembered records m (see
// comparableRecords) are rrs, record by record: the same interface value
// (see sameBox), else equal field by field (sameRecord).
func sameRecords(m, rrs []libdns.Record) bool {
	if len(m) != len(rrs) {
		return false
	}
	for i, r := range rrs {
		if !sameBox(m[i], r) && !sameRecord(m[i], r) {
			return false
		}
	}
	return true
}

// sameBox reports whether a and b are one interface value: the same dynamic
// type and the same boxed copy. A box is never modified (an interface value
// holds its own copy of a struct, which no one can address), so for the
// struct types comparableRecords admits the same box means the same
// record; comparing the two words spares the field-by-field comparison the
// zone's records would otherwise cost on every query (it hands a name the
// same values each time).
func sameBox(a, b libdns.Record) bool {
	type iface struct{ tab, data unsafe.Pointer }
	x, y := (*iface)(unsafe.Pointer(&a)), (*iface)(unsafe.Pointer(&b))
	return x.tab == y.tab && x.data == y.data
}

// span is a plan's answer: rrs[first:end] of the records handed in when
// recs is nil (a subslice, so the caller can tell the records by
// identity), else recs (the chosen records, not adjacent among rrs).
type span struct {
	first, end int
	recs       []libdns.Record
}

// of returns the answer for the records rrs the plan was made from.
func (sp span) of(rrs []libdns.Record) []libdns.Record {
	if sp.recs != nil {
		return sp.recs
	}
	return rrs[sp.first:sp.end:sp.end]
}
