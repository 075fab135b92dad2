package failover

import (
	"cmp"
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
			return configErr(f, p, "a valid prefix with host bits clear, IPv4 in its own form (192.0.2.0/24)")
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
	v4, v6     []int // distinct prefix lengths, longest first
	regions    map[netip.Prefix]string
	prefs      map[string][]string
	defaultReg string
}

// NewLocator validates g and compiles it; g is copied.
func NewLocator(g GeoMap) (*Locator, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	l := &Locator{regions: make(map[netip.Prefix]string, len(g.Prefixes)), prefs: make(map[string][]string), defaultReg: g.Default}
	for p, r := range g.Prefixes {
		l.regions[p] = r
		if p.Addr().Is4() {
			l.v4 = append(l.v4, p.Bits())
		} else {
			l.v6 = append(l.v6, p.Bits())
		}
	}
	for _, s := range []*[]int{&l.v4, &l.v6} {
		slices.Sort(*s)
		*s = slices.Compact(*s)
		slices.Reverse(*s)
	}
	for k, list := range g.Preferences {
		full := []string{k}
		for _, r := range list {
			if r != k {
				full = append(full, r)
			}
		}
		l.prefs[k] = full
	}
	return l, nil
}

// Locate returns the region of client: that of the longest map prefix
// containing the whole client prefix, else the map's default. An IPv4
// address mapped into IPv6 is matched as IPv4. ok is false when the client
// is not placed.
func (l *Locator) Locate(client netip.Prefix) (region string, ok bool) {
	if l == nil {
		return "", false
	}
	if client.IsValid() {
		a, bits := client.Addr(), client.Bits()
		if a.Is4In6() {
			a, bits = a.Unmap(), max(bits-96, 0)
		}
		a = a.WithZone("")
		lengths := l.v6
		if a.Is4() {
			lengths = l.v4
		}
		for _, n := range lengths {
			if n > bits {
				continue
			}
			p, err := a.Prefix(n)
			if err != nil {
				continue
			}
			if r, found := l.regions[p]; found {
				return r, true
			}
		}
	}
	return l.defaultReg, l.defaultReg != ""
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
