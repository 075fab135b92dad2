package failover

import (
	"cmp"
	"encoding/binary"
	"fmt"
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
type Locator struct {
	v4, v6 []int // distinct prefix lengths, longest first
	// The prefixes, by region index (see names): IPv4 ones keyed by
	// v4Key, a uint64 that is cheaper to hash than a netip.Prefix.
	v4m        map[uint64]int
	v6m        map[netip.Prefix]int
	names      []string            // region index → name: every region the map names
	order      [][]int             // region index → itself, then its preferences
	prefs      map[string][]string // region name → itself, then its preferences
	defaultReg int                 // region index of unplaced clients; -1: none
}

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
	l := &Locator{v4m: make(map[uint64]int), v6m: make(map[netip.Prefix]int), prefs: make(map[string][]string), defaultReg: -1}
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
			l.v4m[v4Key(binary.BigEndian.Uint32(a[:]), p.Bits())] = r
		} else {
			l.v6 = append(l.v6, p.Bits())
			l.v6m[p] = r
		}
	}
	for _, s := range []*[]int{&l.v4, &l.v6} {
		slices.Sort(*s)
		*s = slices.Compact(*s)
		slices.Reverse(*s)
	}
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
	if i := l.locate(client); i >= 0 {
		return l.names[i], true
	}
	return "", false
}

// locate is Locate by region index; -1 when the client is not placed.
func (l *Locator) locate(client netip.Prefix) int {
	if l == nil || len(l.names) == 0 {
		return -1 // a nil or zero Locator places nobody
	}
	if client.IsValid() {
		a, bits := client.Addr(), client.Bits()
		if a.Is4In6() {
			a, bits = a.Unmap(), max(bits-96, 0)
		}
		if a.Is4() {
			b := a.As4()
			v := binary.BigEndian.Uint32(b[:])
			for _, n := range l.v4 {
				if n > bits {
					continue
				}
				if r, found := l.v4m[v4Key(v&v4Mask(n), n)]; found {
					return r
				}
			}
		} else {
			a = a.WithZone("")
			for _, n := range l.v6 {
				if n > bits {
					continue
				}
				p, err := a.Prefix(n)
				if err != nil {
					continue
				}
				if r, found := l.v6m[p]; found {
					return r
				}
			}
		}
	}
	return l.defaultReg
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
