package failover

import (
	"math/rand/v2"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/libdns/libdns"
)

// AnswerFunc chooses the answer for one query in the embedded zone. client
// is the EDNS Client Subnet prefix when present, else the query's source
// address as a /32 or /128; name is the queried owner name, lower case,
// fully qualified; qtype is "A", "AAAA", ...; rrs are the records the zone
// holds at that name and type. It returns the records to answer with (a
// subset or reordering of rrs); nil or empty means "no opinion": answer
// with rrs. It must be safe for concurrent use and must not retain or
// modify rrs.
//
// scope is how many leading bits of client the answer depends on, the
// answer's "no opinion" included: every client whose prefix shares them
// would be answered alike. The server echoes it (capped at the client
// prefix's Bits()) as the EDNS Client Subnet SCOPE PREFIX-LENGTH, which RFC 7871 section
// 7.2.1 defines as the leftmost bits of the address that the response
// covers: a caching resolver serves the answer to every client inside that
// network, so a scope wider than the decision hands one client's answer to
// others. 0 says the answer suits every client (as an answer drawn at
// random does: a resolver then caches one draw for all its clients, as it
// would without ECS); the client prefix's Bits() says it suits only this
// client's network. Geo and RegionFilter report the Locator's scope (see
// LocateScope), RoundRobin and WeightedRandom 0, Chain the longest of its
// steps'.
//
// The type has the same underlying type as the memory zone's answer hook,
// so values convert both ways: memory.AnswerFunc(f).
type AnswerFunc func(client netip.Prefix, name, qtype string, rrs []libdns.Record) (answer []libdns.Record, scope int)

// addrOf returns the address of an A or AAAA record.
func addrOf(r libdns.Record) (netip.Addr, bool) {
	if a, ok := r.(libdns.Address); ok {
		return a.IP.Unmap(), a.IP.IsValid()
	}
	rr := r.RR()
	if rr.Type != "A" && rr.Type != "AAAA" {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(rr.Data)
	return a.Unmap(), err == nil
}

// RoundRobin returns an AnswerFunc that rotates rrs by one position per
// query (an atomic counter shared by every name), so successive clients
// see a different first address. Fewer than two records: no opinion. It
// does not look at the client: scope 0, so behind a caching resolver every
// client sees the rotation the resolver cached.
func RoundRobin() AnswerFunc {
	var n atomic.Uint64
	return func(_ netip.Prefix, _, _ string, rrs []libdns.Record) ([]libdns.Record, int) {
		if len(rrs) < 2 {
			return nil, 0
		}
		k := int((n.Add(1) - 1) % uint64(len(rrs)))
		out := make([]libdns.Record, 0, len(rrs))
		out = append(out, rrs[k:]...)
		return append(out, rrs[:k]...), 0
	}
}

// WeightedRandom returns an AnswerFunc that answers one address record
// chosen at random with probability proportional to its weight in weights.
// Addresses of weight 0 (or absent from weights) are chosen only when no
// address of positive weight is among rrs, and then uniformly. Without an
// address record: no opinion. src is the random source (seed it in tests,
// e.g. rand.NewPCG(1, 2)); access is serialised with a mutex. nil means
// the global generator of math/rand/v2. weights is copied. The answer is
// a one-record subslice of rrs (no allocation per query): read it, do not
// modify it. The candidates and their weights are worked out once per set
// of records a name is handed (a plan, kept while the same records come
// in), so a query costs comparing the records and one draw. It does not
// look at the client: scope 0, so a caching resolver serves the one draw
// it cached to all its clients until the TTL ends, as without ECS.
func WeightedRandom(weights map[netip.Addr]int, src rand.Source) AnswerFunc {
	wm := make(map[netip.Addr]int, len(weights))
	for a, n := range weights {
		if n > 0 {
			wm[a.Unmap()] = n
		}
	}
	w := newAddrTable(wm)
	var mu sync.Mutex
	var rng *rand.Rand
	if src != nil {
		rng = rand.New(src)
	}
	intN := func(n int) int {
		if rng == nil {
			return rand.IntN(n)
		}
		mu.Lock()
		defer mu.Unlock()
		return rng.IntN(n)
	}
	// The answer is a one-record subslice of rrs: no allocation per query.
	// The candidates and their cumulative weights are planned once per set
	// of records (see planCache).
	var plans planCache[weightPlan]
	build := func(rrs []libdns.Record) weightPlan {
		var pl weightPlan
		for i, r := range rrs {
			if a, ok := addrOf(r); ok {
				if n := w.get(a); n > 0 {
					pl.total += n
					pl.pos = append(pl.pos, i)
					pl.cum = append(pl.cum, pl.total)
				}
				pl.addrs = append(pl.addrs, i)
			}
		}
		return pl
	}
	return func(_ netip.Prefix, name, qtype string, rrs []libdns.Record) ([]libdns.Record, int) {
		if pl := plans.get(name, qtype, rrs, build); pl != nil {
			var i int
			switch {
			case pl.total > 0:
				k := intN(pl.total)
				j := 0
				for pl.cum[j] <= k {
					j++
				}
				i = pl.pos[j]
			case len(pl.addrs) > 0:
				i = pl.addrs[intN(len(pl.addrs))]
			default:
				return nil, 0
			}
			return rrs[i : i+1 : i+1], 0
		}
		total, addrs := 0, 0
		for _, r := range rrs {
			if a, ok := addrOf(r); ok {
				addrs++
				total += w.get(a)
			}
		}
		if addrs == 0 {
			return nil, 0
		}
		if total == 0 {
			k := intN(addrs)
			for i, r := range rrs {
				if _, ok := addrOf(r); ok {
					if k == 0 {
						return rrs[i : i+1 : i+1], 0
					}
					k--
				}
			}
		}
		k := intN(total)
		for i, r := range rrs {
			if a, ok := addrOf(r); ok {
				n := w.get(a)
				if k < n {
					return rrs[i : i+1 : i+1], 0
				}
				k -= n
			}
		}
		return nil, 0 // unreachable: k < total
	}
}

// weightPlan is WeightedRandom's plan for one set of records: the
// positions of the address records of positive weight with their
// cumulative weights, and the positions of every address record (chosen
// uniformly when no weight is positive).
type weightPlan struct {
	pos, cum []int
	total    int
	addrs    []int
}

// Chain returns an AnswerFunc that applies fs in order, each to the
// previous one's answer (or to rrs while no one had an opinion); nil
// entries are skipped. E.g. Chain(geo, RoundRobin()) rotates the nearest
// region's addresses. Its scope is the longest of its steps' (each step
// asked counts, with or without an opinion): the answer depends on every
// decision taken on the way.
func Chain(fs ...AnswerFunc) AnswerFunc {
	return func(client netip.Prefix, name, qtype string, rrs []libdns.Record) ([]libdns.Record, int) {
		var out []libdns.Record
		scope := 0
		for _, f := range fs {
			if f == nil {
				continue
			}
			in := rrs
			if len(out) > 0 {
				in = out
			}
			got, s := f(client, name, qtype, in)
			if len(got) > 0 {
				out = got
			}
			scope = max(scope, s)
		}
		return out, scope
	}
}

// Geo returns an AnswerFunc that answers with the addresses of the nearest
// region that has any among rrs: the client's region by the locator, then
// the regions in its preference list, in order. tags gives each address's
// region tags (Record.Tags); an address matches a region when tagged with
// it. A client the locator does not place, or no match: no opinion. The
// answer is a subslice of rrs when the region's records are adjacent, else
// a slice remembered per region and rebuilt only when those records change
// (no allocation per query): read it, do not modify it. The answer for
// each client region is worked out once per set of records a name is
// handed (a plan, as WeightedRandom's), so a query costs placing the client
// and comparing the records.
//
// Its scope is the locator's (LocateScope), with or without an opinion: the
// network around the client inside which every client is placed alike, so
// a caching resolver that keeps the answer for that network (RFC 7871
// section 7.2.1) hands no client another region's answer. An unplaced
// client's "no opinion" (every address) is scoped to the widest network
// around it that no map prefix reaches, not to every client.
func Geo(loc *Locator, tags map[netip.Addr][]string) AnswerFunc {
	return geo(loc, tags, true)
}

// RegionFilter returns an AnswerFunc that answers only the addresses tagged
// with the client's region (by the locator): the record service's
// region-filtered view, per query. No match: no opinion. Its answer is
// shared as Geo's is, and scoped as Geo's is.
func RegionFilter(loc *Locator, tags map[netip.Addr][]string) AnswerFunc {
	return geo(loc, tags, false)
}

func geo(loc *Locator, tags map[netip.Addr][]string, prefs bool) AnswerFunc {
	tm := make(map[netip.Addr][]string, len(tags))
	for a, rs := range tags {
		tm[a.Unmap()] = append([]string(nil), rs...)
	}
	return geoTagged(loc, tm, false, prefs)
}

// geoTagged is Geo (prefs) or RegionFilter over tm (addresses unmapped,
// owned); with open, an address absent from tm is tagged with every
// region (see NetFence).
func geoTagged(loc *Locator, tm map[netip.Addr][]string, open bool, prefs bool) AnswerFunc {
	t := newAddrTable(tm)
	tagged := func(r libdns.Record, region string) bool {
		a, ok := addrOf(r)
		if !ok {
			return false
		}
		rs := t.get(a)
		if open && rs == nil {
			return true
		}
		for _, x := range rs {
			if x == region {
				return true
			}
		}
		return false
	}
	// One remembered answer per region, built when the answer changes
	// (health or configuration), not per query: see pick.
	memo := make(map[string]*atomic.Pointer[[]libdns.Record])
	for _, r := range loc.names {
		memo[r] = new(atomic.Pointer[[]libdns.Record])
	}
	for _, rs := range tm {
		for _, r := range rs {
			if memo[r] == nil {
				memo[r] = new(atomic.Pointer[[]libdns.Record])
			}
		}
	}
	// The answer for each client region, planned once per set of records
	// (see planCache): a query then costs the locator and the comparison.
	var plans planCache[[]span]
	build := func(rrs []libdns.Record) []span {
		pl := make([]span, loc.regionCount())
		for ri := range pl {
			pl[ri] = span{first: -1}
			for _, reg := range loc.orderOf(ri, prefs) {
				first, last, n := -1, -1, 0
				for i, r := range rrs {
					if tagged(r, loc.names[reg]) {
						if first < 0 {
							first = i
						}
						last, n = i, n+1
					}
				}
				if n == 0 {
					continue
				}
				if last-first+1 == n {
					pl[ri] = span{first: first, end: last + 1}
				} else {
					pl[ri] = span{recs: pickTagged(rrs, loc.names[reg], tagged, nil)}
				}
				break
			}
		}
		return pl
	}
	return func(client netip.Prefix, name, qtype string, rrs []libdns.Record) ([]libdns.Record, int) {
		ri, scope := loc.locate(client)
		if ri < 0 {
			return nil, scope
		}
		if pl := plans.get(name, qtype, rrs, build); pl != nil {
			if sp := (*pl)[ri]; sp.first >= 0 || sp.recs != nil {
				return sp.of(rrs), scope
			}
			return nil, scope
		}
		for _, reg := range loc.orderOf(ri, prefs) {
			region := loc.names[reg]
			if out := pickTagged(rrs, region, tagged, memo[region]); len(out) > 0 {
				return out, scope
			}
		}
		return nil, scope
	}
}

// pickTagged returns the records of rrs tagged with region, in order,
// without allocating when it can: a contiguous run is a subslice of rrs,
// and otherwise the answer remembered in memo is reused while it holds the
// same records (only a changed set of records builds a new slice).
func pickTagged(rrs []libdns.Record, region string, tagged func(libdns.Record, string) bool, memo *atomic.Pointer[[]libdns.Record]) []libdns.Record {
	var m []libdns.Record
	if memo != nil {
		if p := memo.Load(); p != nil {
			m = *p
		}
	}
	first, last, n, same := -1, -1, 0, m != nil
	for i, r := range rrs {
		if !tagged(r, region) {
			continue
		}
		if first < 0 {
			first = i
		}
		last = i
		same = same && n < len(m) && sameRecord(m[n], r)
		n++
	}
	switch {
	case n == 0:
		return nil
	case last-first+1 == n:
		return rrs[first : last+1 : last+1]
	case same && n == len(m):
		return m
	}
	out := make([]libdns.Record, 0, n)
	for _, r := range rrs {
		if tagged(r, region) {
			out = append(out, r)
		}
	}
	if memo != nil && comparableRecords(out) {
		memo.Store(&out)
	}
	return out
}

// addrTable maps addresses to values: a short list searched in order when
// small (cheaper than hashing an address), else a map.
type addrTable[V any] struct {
	keys []netip.Addr
	vals []V
	m    map[netip.Addr]V
}

const addrTableLinear = 16

func newAddrTable[V any](m map[netip.Addr]V) addrTable[V] {
	if len(m) > addrTableLinear {
		return addrTable[V]{m: m}
	}
	var t addrTable[V]
	for a, v := range m {
		t.keys = append(t.keys, a)
		t.vals = append(t.vals, v)
	}
	return t
}

func (t *addrTable[V]) get(a netip.Addr) V {
	if t.m != nil {
		return t.m[a]
	}
	for i, k := range t.keys {
		if k == a {
			return t.vals[i]
		}
	}
	var zero V
	return zero
}

// comparableRecords reports whether every record can be compared by
// sameRecord: an Address without ProviderData, or an RR (the zone hands its
// address records to hooks as libdns.Address).
func comparableRecords(rs []libdns.Record) bool {
	for _, r := range rs {
		switch r := r.(type) {
		case libdns.Address:
			if r.ProviderData != nil {
				return false
			}
		case libdns.RR:
		default:
			return false
		}
	}
	return true
}

// sameRecord compares a remembered record m (see comparableRecords) with r
// field by field.
func sameRecord(m, r libdns.Record) bool {
	switch m := m.(type) {
	case libdns.Address:
		a, ok := r.(libdns.Address)
		return ok && a.ProviderData == nil && a.Name == m.Name && a.TTL == m.TTL && a.IP == m.IP
	case libdns.RR:
		rr, ok := r.(libdns.RR)
		return ok && rr == m
	}
	return false
}
