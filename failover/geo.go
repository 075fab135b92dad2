package failover

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"maps"
	mathbits "math/bits"
	"net/netip"
	"slices"
)

// GeoMap is the caller's knowledge of where clients are and which regions
// are near each other. Fields are JSON-tagged (prefixes as "192.0.2.0/24").
// The zero value places no client.
type GeoMap struct {
	// Prefixes maps client prefixes (IPv4 or IPv6, host bits clear) to a
	// region; the longest matching prefix wins.
	Prefixes map[netip.Prefix]string `json:"prefixes"`
	// Preferences lists, for a region, the regions to try after it, nearest
	// first. A region without an entry falls back to no other region.
	Preferences map[string][]string `json:"preferences,omitempty"`
	// Default is the region of clients no prefix matches; "" leaves them
	// unplaced (the answer functions then have no opinion).
	Default string `json:"default,omitempty"`
	// Coordinates places regions on the globe, by region name: the
	// clients' regions (of Prefixes and Default) and the pools' (the
	// regions addresses are tagged with). Only Proximity reads it; nil is
	// fine for every other step.
	Coordinates map[string]LatLon `json:"coordinates,omitempty"`
}

// Validate reports the first bad prefix or region list; the error wraps
// ErrInvalidConfig.
func (g GeoMap) Validate() error {
	for _, p := range sortedPrefixes(g.Prefixes) {
		f := fmt.Sprintf("prefixes[%s]", p)
		if !p.IsValid() || p.Masked() != p || p.Addr().Is4In6() || p.Addr().Zone() != "" {
			return configErr(f, p.String(), "a valid prefix with host bits clear, IPv4 in its own form (192.0.2.0/24)")
		}
		if g.Prefixes[p] == "" {
			return configErr(f, "", "a non-empty region name")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(g.Coordinates)) {
		c := g.Coordinates[k]
		f := fmt.Sprintf("coordinates[%s]", k)
		switch {
		case k == "":
			return configErr("coordinates", k, "non-empty region names as keys")
		case !(c.Lat >= -90 && c.Lat <= 90):
			return configErr(f+".lat", c.Lat, "[-90, 90] (degrees north)")
		case !(c.Lon >= -180 && c.Lon <= 180):
			return configErr(f+".lon", c.Lon, "[-180, 180] (degrees east)")
		}
	}
	keys := make([]string, 0, len(g.Preferences))
	for k := range g.Preferences {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if k == "" {
			return configErr("preferences", k, "non-empty region names as keys")
		}
		list := g.Preferences[k]
		for i, r := range list {
			if r == "" || slices.Index(list, r) != i {
				return configErr(fmt.Sprintf("preferences[%s][%d]", k, i), r, "distinct, non-empty region names")
			}
		}
	}
	return nil
}

func sortedPrefixes(m map[netip.Prefix]string) []netip.Prefix {
	ps := make([]netip.Prefix, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b netip.Prefix) int {
		return cmp.Or(a.Addr().Compare(b.Addr()), cmp.Compare(a.Bits(), b.Bits()))
	})
	return ps
}

// Locator places clients in regions by a GeoMap. It is immutable and safe
// for concurrent use. Build it with NewLocator; a nil *Locator places no
// client.
//
// Besides the region it tells how far around the client every client is
// placed alike (LocateScope): the EDNS Client Subnet scope an answer
// chosen by region may be cached for (RFC 7871 section 7.2.1).
type Locator struct {
	v4, v6 []int // distinct prefix lengths, longest first
	// The prefixes, by node (see node): IPv4 ones keyed by v4Key, a
	// uint64 that is cheaper to hash than a netip.Prefix.
	v4m map[uint64]node
	v6m map[netip.Prefix]node
	// The prefixes' addresses per length, sorted, in v4's and v6's order:
	// the client's nearest neighbours there tell where its network stops
	// holding only its own region (see scopeV4, scopeV6).
	v4s [][]uint32
	v6s [][]u128
	// Every prefix's address, sorted, once: a client no prefix matches
	// shares the most leading bits with one of its neighbours there.
	v4all      []uint32
	v6all      []u128
	names      []string            // region index → name: every region the map names
	order      [][]int             // region index → itself, then its preferences
	prefs      map[string][]string // region name → itself, then its preferences
	defaultReg int                 // region index of unplaced clients; -1: none
}

// node is a map prefix: its region index times 2, plus 1 when a longer map
// prefix lies inside it (then a client's scope needs the sorted lists;
// otherwise it is the prefix's own length).
type node int

func (n node) region() int { return int(n) >> 1 }
func (n node) inner() bool { return n&1 != 0 }

// u128 is an IPv6 address as two big-endian halves.
type u128 struct{ hi, lo uint64 }

func u128Of(a netip.Addr) u128 {
	b := a.As16()
	return u128{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
}

// masked keeps the first bits bits (0 to 128).
func (x u128) masked(bits int) u128 {
	switch {
	case bits <= 0:
		return u128{}
	case bits < 64:
		return u128{x.hi & (^uint64(0) << (64 - bits)), 0}
	case bits < 128:
		return u128{x.hi, x.lo & (^uint64(0) << (128 - bits))}
	}
	return x
}

// commonBits returns how many leading bits x and y share (128 when equal).
func (x u128) commonBits(y u128) int {
	if x.hi != y.hi {
		return mathbits.LeadingZeros64(x.hi ^ y.hi)
	}
	return 64 + mathbits.LeadingZeros64(x.lo^y.lo)
}

func (x u128) compare(y u128) int { return cmp.Or(cmp.Compare(x.hi, y.hi), cmp.Compare(x.lo, y.lo)) }

// v4Key is the key of an IPv4 prefix of bits bits whose address is a
// (host bits clear) in Locator.v4m.
func v4Key(a uint32, bits int) uint64 { return uint64(bits)<<32 | uint64(a) }

// v4Mask returns the mask of an IPv4 prefix of bits bits (0 to 32).
func v4Mask(bits int) uint32 { return ^uint32(0) << (32 - bits) } // a shift by 32 is 0

// NewLocator validates g and compiles it; g is copied.
func NewLocator(g GeoMap) (*Locator, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	l := &Locator{v4m: make(map[uint64]node), v6m: make(map[netip.Prefix]node), prefs: make(map[string][]string), defaultReg: -1}
	index := map[string]int{}
	idx := func(r string) int {
		i, ok := index[r]
		if !ok {
			i = len(l.names)
			index[r] = i
			l.names = append(l.names, r)
		}
		return i
	}
	for _, p := range sortedPrefixes(g.Prefixes) { // sorted: region indices do not depend on map order
		r := idx(g.Prefixes[p])
		if p.Addr().Is4() {
			l.v4 = append(l.v4, p.Bits())
			a := p.Addr().As4()
			l.v4m[v4Key(binary.BigEndian.Uint32(a[:]), p.Bits())] = node(2 * r)
		} else {
			l.v6 = append(l.v6, p.Bits())
			l.v6m[p] = node(2 * r)
		}
	}
	for _, s := range []*[]int{&l.v4, &l.v6} {
		slices.Sort(*s)
		*s = slices.Compact(*s)
		slices.Reverse(*s)
	}
	l.v4s, l.v6s = make([][]uint32, len(l.v4)), make([][]u128, len(l.v6))
	for _, p := range sortedPrefixes(g.Prefixes) { // sorted: so is each list
		n := p.Bits()
		if p.Addr().Is4() {
			a := p.Addr().As4()
			v := binary.BigEndian.Uint32(a[:])
			i := slices.Index(l.v4, n)
			l.v4s[i] = append(l.v4s[i], v)
			l.v4all = append(l.v4all, v)
			for _, m := range l.v4[i+1:] { // the shorter map prefixes holding p
				k := v4Key(v&v4Mask(m), m)
				if r, ok := l.v4m[k]; ok {
					l.v4m[k] = r | 1
				}
			}
		} else {
			i := slices.Index(l.v6, n)
			l.v6s[i] = append(l.v6s[i], u128Of(p.Addr()))
			l.v6all = append(l.v6all, u128Of(p.Addr()))
			for _, m := range l.v6[i+1:] {
				q, _ := p.Addr().Prefix(m)
				if r, ok := l.v6m[q]; ok {
					l.v6m[q] = r | 1
				}
			}
		}
	}
	l.v4all, l.v6all = slices.Compact(l.v4all), slices.Compact(l.v6all) // sorted already
	keys := make([]string, 0, len(g.Preferences))
	for k := range g.Preferences {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		full := []string{k}
		idx(k)
		for _, r := range g.Preferences[k] {
			if r != k {
				full = append(full, r)
				idx(r)
			}
		}
		l.prefs[k] = full
	}
	if g.Default != "" {
		l.defaultReg = idx(g.Default)
	}
	l.order = make([][]int, len(l.names))
	for i, r := range l.names {
		l.order[i] = []int{i}
		if full, ok := l.prefs[r]; ok {
			l.order[i] = l.order[i][:0]
			for _, x := range full {
				l.order[i] = append(l.order[i], index[x])
			}
		}
	}
	return l, nil
}

// Locate returns the region of client: that of the longest map prefix
// containing the whole client prefix, else the map's default. An IPv4
// address mapped into IPv6 is matched as IPv4. ok is false when the client
// is not placed.
func (l *Locator) Locate(client netip.Prefix) (region string, ok bool) {
	if i, _ := l.locate(client); i >= 0 {
		return l.names[i], true
	}
	return "", false
}

// LocateScope is Locate that also returns the scope of the decision: the
// prefix length s (at most the client prefix's Bits()) such that every client prefix
// of client's length inside client's first s bits is placed as client is
// (in the same region, or equally unplaced). It is the longest of the
// matched prefix's length and, for each longer map prefix, the length at
// which client's network stops containing it; for a client no prefix
// matches, the widest network around it holding no map prefix. With 10/8
// and 10.1/16 mapped, 10.2.3.0/24 is placed by 10/8 at scope 15 (10.2/15
// holds no part of 10.1/16), 192.0.2.0/24 is unplaced at scope 1. An
// answer chosen by region may tell a caching resolver it suits that whole
// network: the EDNS Client Subnet SCOPE PREFIX-LENGTH of RFC 7871 section
// 7.2.1, which Geo and RegionFilter report. An invalid prefix (no address
// to place) gets the default region, if the map has one, at scope 0. An
// IPv4 address mapped into
// IPv6 has its scope counted in IPv6 bits.
func (l *Locator) LocateScope(client netip.Prefix) (region string, scope int, ok bool) {
	i, scope := l.locate(client)
	if i >= 0 {
		return l.names[i], scope, true
	}
	return "", scope, false
}

// locate is LocateScope by region index; -1 when the client is not placed.
// A client placed by a map prefix with no longer one inside it (the common
// case) costs the lookups of the longest match and nothing more.
func (l *Locator) locate(client netip.Prefix) (region, scope int) {
	if l == nil {
		return -1, 0
	}
	if !client.IsValid() {
		return l.unplaced(), 0 // no address to place: the default region, for everyone
	}
	a, bits, extra := client.Addr(), client.Bits(), 0
	if a.Is4In6() {
		a, bits, extra = a.Unmap(), max(bits-96, 0), 96
	}
	if a.Is4() {
		b := a.As4()
		v := binary.BigEndian.Uint32(b[:])
		for i, n := range l.v4 {
			if n > bits {
				continue
			}
			if r, found := l.v4m[v4Key(v&v4Mask(n), n)]; found {
				if !r.inner() {
					return r.region(), min(n+extra, client.Bits())
				}
				return r.region(), min(l.scopeV4(v, bits, n, i)+extra, client.Bits())
			}
		}
		return l.unplaced(), min(min(outsideV4(l.v4all, v), bits)+extra, client.Bits())
	}
	a = a.WithZone("")
	for i, n := range l.v6 {
		if n > bits {
			continue
		}
		p, err := a.Prefix(n)
		if err != nil {
			continue
		}
		if r, found := l.v6m[p]; found {
			if !r.inner() {
				return r.region(), n
			}
			return r.region(), l.scopeV6(u128Of(a), bits, n, i)
		}
	}
	return l.unplaced(), min(outsideV6(l.v6all, u128Of(a)), bits)
}

// unplaced is the region index of a client no prefix holds: the default
// region's, or -1 (also for a zero Locator, which names no region).
func (l *Locator) unplaced() int {
	if len(l.names) == 0 {
		return -1
	}
	return l.defaultReg
}

// outsideV4 is the scope of an IPv4 address v that no map prefix holds:
// one more than the most leading bits it shares with a prefix's address in
// all (sorted), which its neighbours there have; 0 when all is empty. (A
// prefix can share more bits than its length only when it holds v, and
// then only if it is longer than the client's prefix: the caller caps the
// scope at that length.)
func outsideV4(all []uint32, v uint32) int {
	k, _ := slices.BinarySearch(all, v)
	n := -1
	if k > 0 {
		n = mathbits.LeadingZeros32(v ^ all[k-1])
	}
	if k < len(all) {
		n = max(n, mathbits.LeadingZeros32(v^all[k]))
	}
	return n + 1
}

// outsideV6 is outsideV4 for IPv6.
func outsideV6(all []u128, v u128) int {
	k, _ := slices.BinarySearchFunc(all, v, u128.compare)
	n := -1
	if k > 0 {
		n = v.commonBits(all[k-1])
	}
	if k < len(all) {
		n = max(n, v.commonBits(all[k]))
	}
	return n + 1
}

// scopeV4 returns the scope of IPv4 client v/bits placed by a map prefix
// of n bits with longer ones inside it, the i-th length in v4: the longest of n and, for
// each longer map prefix, the length at which the client's network stops
// containing it, capped at bits. Among the prefixes of one length the
// client shares the most leading bits with a neighbour of its own place in
// the sorted list, so each length costs a binary search.
func (l *Locator) scopeV4(v uint32, bits, n, i int) int {
	scope := n
	for j, m := range l.v4[:i] {
		x := v & v4Mask(m)
		s := l.v4s[j]
		k, _ := slices.BinarySearch(s, x)
		for _, y := range s[max(k-1, 0):min(k+1, len(s))] {
			scope = max(scope, min(mathbits.LeadingZeros32(x^y)+1, m))
		}
		if scope >= bits {
			break
		}
	}
	return min(scope, bits)
}

// scopeV6 is scopeV4 for IPv6.
func (l *Locator) scopeV6(v u128, bits, n, i int) int {
	scope := n
	for j, m := range l.v6[:i] {
		x := v.masked(m)
		s := l.v6s[j]
		k, _ := slices.BinarySearchFunc(s, x, u128.compare)
		for _, y := range s[max(k-1, 0):min(k+1, len(s))] {
			scope = max(scope, min(x.commonBits(y)+1, m))
		}
		if scope >= bits {
			break
		}
	}
	return min(scope, bits)
}

// Preferences returns region followed by the regions to try after it,
// nearest first. The slice is shared: do not modify it.
func (l *Locator) Preferences(region string) []string {
	if l != nil {
		if p, ok := l.prefs[region]; ok {
			return p
		}
	}
	return []string{region}
}

// regionCount returns how many regions the locator knows (region indices
// are 0 to regionCount()-1).
func (l *Locator) regionCount() int { return len(l.names) }

// orderOf returns the region indices to try for a client of region ri:
// ri, then with prefs its preferences, nearest first.
func (l *Locator) orderOf(ri int, prefs bool) []int {
	if prefs {
		return l.order[ri]
	}
	return l.order[ri][:1]
}
