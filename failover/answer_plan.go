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
// A few plans are kept per answer function (planSlots), one per name and
// type: a function chained after another (Chain) is handed one set of
// records per region, a zone-wide hook one per name. A plan is made when
// the same records miss twice in a row, so a function handed ever-changing
// records (more sets than slots, interleaved) answers without a plan, as it
// would without this cache, instead of building one per query.

// planSlots is how many plans one answer function keeps.
const planSlots = 4

// planned is a plan and what it was made from.
type planned[P any] struct {
	name, qtype string
	recs        []libdns.Record // a copy of the records the plan was made from
	plan        P
}

// planSlot holds one answer function's plans.
type planSlot[P any] struct {
	cur      [planSlots]atomic.Pointer[planned[P]]
	next     atomic.Uint32 // the slot a new name and type take
	lastMiss atomic.Uint64 // recordsHash of the last miss
}

// get returns the plan made from rrs for name and qtype: a kept one when
// rrs are the records it was made from, else a new one from build when the
// previous miss was for the same records (and they can be compared), else
// nil (answer without a plan).
func (s *planSlot[P]) get(name, qtype string, rrs []libdns.Record, build func([]libdns.Record) P) *P {
	for i := range s.cur {
		if c := s.cur[i].Load(); c != nil && c.name == name && c.qtype == qtype && sameRecords(c.recs, rrs) {
			return &c.plan
		}
	}
	if !comparableRecords(rrs) {
		return nil
	}
	if h := recordsHash(name, qtype, rrs); s.lastMiss.Swap(h) != h {
		return nil
	}
	recs := append([]libdns.Record(nil), rrs...)
	c := &planned[P]{name: name, qtype: qtype, recs: recs, plan: build(recs)}
	// The slot of an older plan for the same name and type, else the next.
	slot := -1
	for i := range s.cur {
		if o := s.cur[i].Load(); o != nil && o.name == name && o.qtype == qtype {
			slot = i
			break
		}
	}
	if slot < 0 {
		slot = int(s.next.Add(1) % planSlots)
	}
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
