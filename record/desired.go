package record

import (
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/gslbkit/gslb/internal/dnsname"
)

// maxTTL is the largest TTL DNS can carry (RFC 2181: 2^31-1 seconds).
const maxTTL = time.Duration(math.MaxInt32) * time.Second

// Desired is the state the caller wants: RRsets to publish, names or RRsets
// to withdraw, and names to adopt. It covers only the names it lists: a name
// that is absent is left as it is (only a withdraw removes one), and at a
// listed name, types that are not listed are left as they are, except that a
// CNAME and other types exclude each other (a type switch, see
// Config.AllowTypeSwitch). Sets may span several zones.
//
// Desired is a plain value; the reconciler copies what it needs, so the
// caller may reuse it after Set or Apply returns.
type Desired struct {
	// Sets are the RRsets to publish. A set with no values asks for nothing
	// to be published; a published set is then held stale (ErrEmptySet).
	Sets []RRSet `json:"sets,omitempty"`
	// Withdraw lists what to remove: a key with a Type removes that RRset, a
	// key with an empty Type removes every record at the name. The owner
	// marker goes too once nothing is left at the name. This is the only way
	// a published name becomes empty.
	Withdraw []Key `json:"withdraw,omitempty"`
	// Adopt lists names that hold records without an owner marker which the
	// reconciler may take over: it writes its marker, then manages them like
	// its own. Names marked by another owner are never adopted.
	Adopt []Name `json:"adopt,omitempty"`
}

// zoneDesired is the normalised desired state of one zone.
type zoneDesired struct {
	zone     string
	sets     []RRSet                    // normalised, sorted by key
	withdraw map[string]map[string]bool // name -> types ("" = all)
	adopt    map[string]bool
}

// field names an element of a Desired in error messages; it is formatted
// only when there is an error.
type field struct {
	list string
	i    int
}

// String returns e.g. "Sets[3]".
func (f field) String() string { return fmt.Sprintf("%s[%d]", f.list, f.i) }

// normalize validates d and groups it by zone. prefix is the owner marker
// label, which desired names may not use. With share true, the sets of the
// result may be d.Sets itself when every set is normalised and sorted
// already (the usual case, spared a copy); the caller must then only read
// them. With share false they are always a copy.
func (d Desired) normalize(prefix string, share bool) (map[string]*zoneDesired, error) {
	zones := make(map[string]*zoneDesired)
	fqdn := make(map[string]string) // zone as given -> checked FQDN
	zoneName := func(f field, z string) (string, error) {
		if n, ok := fqdn[z]; ok {
			return n, nil
		}
		n := dnsname.Fqdn(z)
		if err := dnsname.Check(n); err != nil {
			return "", fmt.Errorf("%w: %s.Zone = %q: %v", ErrInvalid, f, z, err)
		}
		fqdn[z] = n
		return n, nil
	}
	get := func(zone string) *zoneDesired {
		zd := zones[zone]
		if zd == nil {
			zd = &zoneDesired{zone: zone}
			zones[zone] = zd
		}
		return zd
	}
	// The sets are normalised in place of a copy of d.Sets and sorted only
	// when they do not come sorted already; perm maps sorted positions back
	// to d.Sets for error messages (nil: the identity). With share, the
	// copy is made only from the first set that normalising changes (all
	// stays nil while none has).
	var all []RRSet
	if !share {
		all = make([]RRSet, len(d.Sets))
	}
	at := func(i int) *RRSet {
		if all == nil {
			return &d.Sets[i]
		}
		return &all[i]
	}
	sorted := true
	lastGiven, lastZone := "", ""
	for i, s := range d.Sets {
		f := field{"Sets", i}
		zone := lastZone
		if i == 0 || s.Zone != lastGiven {
			var err error
			if zone, err = zoneName(f, s.Zone); err != nil {
				return nil, err
			}
			lastGiven, lastZone = s.Zone, zone
		}
		s.Zone = zone
		n, ipv4 := s.normalizedChecked()
		if err := checkName(f, prefix, n.Zone, s.Name, n.Name); err != nil {
			return nil, err
		}
		if err := checkSet(f, n, ipv4); err != nil {
			return nil, err
		}
		for j, k := range n.Needs {
			nf := subField{f, fmt.Sprintf("Needs[%d]", j)}
			if dnsname.Check(k.Zone) != nil {
				return nil, fmt.Errorf("%w: %s.Zone = %q: want a zone name", ErrInvalid, nf, k.Zone)
			}
			if err := checkRelative(k.Name, k.Zone); err != nil || strings.HasSuffix(k.Name, ".") {
				return nil, fmt.Errorf("%w: %s.Name = %q: want a name relative to %s", ErrInvalid, nf, k.Name, k.Zone)
			}
			if k.Type != "" {
				if err := checkType(f, fmt.Sprintf("Needs[%d].Type", j), k.Type); err != nil {
					return nil, err
				}
			}
			if k == n.Key() {
				return nil, fmt.Errorf("%w: %s: a set cannot need itself", ErrInvalid, nf)
			}
			get(k.Zone) // the zone of a dependency is read too
		}
		if all == nil && !identicalSet(&n, &d.Sets[i]) {
			all = make([]RRSet, len(d.Sets))
			copy(all, d.Sets[:i])
		}
		if all != nil {
			all[i] = n
		}
		if sorted && i > 0 && compareKeys(at(i-1).Key(), n.Key()) >= 0 {
			sorted = false
		}
	}
	if all == nil {
		all = d.Sets[:len(d.Sets):len(d.Sets)] // read only
	}
	order := all
	var perm []int32
	if !sorted {
		perm = make([]int32, len(all))
		for i := range perm {
			perm[i] = int32(i)
		}
		slices.SortFunc(perm, func(a, b int32) int {
			if c := compareKeys(all[a].Key(), all[b].Key()); c != 0 {
				return c
			}
			return int(a - b)
		})
		order = make([]RRSet, len(all))
		for k, i := range perm {
			order[k] = all[i]
		}
	}
	orig := func(k int) int {
		if perm == nil {
			return k
		}
		return int(perm[k])
	}
	lo := 0
	for k := range order {
		it := &order[k]
		if k > 0 {
			prev := &order[k-1]
			if prev.Key() == it.Key() {
				return nil, fmt.Errorf("%w: %s (%s) repeats %s; give each RRset once", ErrInvalid, field{"Sets", orig(k)}, it.Key(), field{"Sets", orig(k - 1)})
			}
			if prev.Zone == it.Zone && prev.Name == it.Name && (prev.Type == "CNAME" || it.Type == "CNAME") {
				return nil, fmt.Errorf("%w: %s: %s has a CNAME and other types; a CNAME must be alone at its name",
					ErrInvalid, field{"Sets", orig(k)}, Name{it.Zone, it.Name})
			}
		}
		if k+1 == len(order) || order[k+1].Zone != it.Zone {
			get(it.Zone).sets = order[lo : k+1 : k+1]
			lo = k + 1
		}
	}
	for i, w := range d.Withdraw {
		f := field{"Withdraw", i}
		zone, err := zoneName(f, w.Zone)
		if err != nil {
			return nil, err
		}
		name := relName(w.Name, zone)
		if err := checkName(f, prefix, zone, w.Name, name); err != nil {
			return nil, err
		}
		typ := strings.ToUpper(strings.TrimSpace(w.Type))
		if typ != "" {
			if err := checkType(f, "Type", typ); err != nil {
				return nil, err
			}
		}
		zd := get(zone)
		if lo, hi := zd.find(name); lo < hi {
			if typ == "" {
				return nil, fmt.Errorf("%w: %s withdraws all of %s, which Sets also publishes", ErrInvalid, f, Name{zone, name})
			}
			for _, s := range zd.sets[lo:hi] {
				if s.Type == typ {
					return nil, fmt.Errorf("%w: %s (%s) also appears in Sets; an RRset is either set or withdrawn", ErrInvalid, f, s.Key())
				}
			}
		}
		if zd.withdraw == nil {
			zd.withdraw = map[string]map[string]bool{}
		}
		if zd.withdraw[name] == nil {
			zd.withdraw[name] = map[string]bool{}
		}
		zd.withdraw[name][typ] = true
	}
	for i, a := range d.Adopt {
		f := field{"Adopt", i}
		zone, err := zoneName(f, a.Zone)
		if err != nil {
			return nil, err
		}
		name := relName(a.Name, zone)
		if err := checkName(f, prefix, zone, a.Name, name); err != nil {
			return nil, err
		}
		zd := get(zone)
		if zd.adopt == nil {
			zd.adopt = map[string]bool{}
		}
		zd.adopt[name] = true
	}
	return zones, nil
}

// identicalSet reports whether a and b are the same set down to the slice of
// values (same array, length and capacity).
func identicalSet(a, b *RRSet) bool {
	if a.Zone != b.Zone || a.Name != b.Name || a.Type != b.Type || a.TTL != b.TTL ||
		len(a.Values) != len(b.Values) || cap(a.Values) != cap(b.Values) || !slices.Equal(a.Needs, b.Needs) {
		return false
	}
	return len(a.Values) == 0 || &a.Values[0] == &b.Values[0]
}

// find returns the range of sets at name (sets are sorted by name).
func (zd *zoneDesired) find(name string) (lo, hi int) {
	lo, _ = slices.BinarySearchFunc(zd.sets, name, func(s RRSet, n string) int { return compareNames(s.Name, n) })
	hi = lo
	for hi < len(zd.sets) && zd.sets[hi].Name == name {
		hi++
	}
	return lo, hi
}

// Validate reports the first problem of d, naming the field, the value and
// what is allowed; nil when d is valid for the default marker prefix. The
// reconciler validates against its own Config.MarkerPrefix.
func (d Desired) Validate() error {
	_, err := d.normalize(DefaultMarkerPrefix, true)
	return err
}

func checkName(field field, prefix, zone, given, rel string) error {
	if strings.HasSuffix(rel, ".") {
		return fmt.Errorf("%w: %s.Name = %q is outside zone %s; give it relative to the zone (\"@\" for the apex)", ErrInvalid, field, given, zone)
	}
	if err := checkRelative(rel, zone); err != nil {
		return fmt.Errorf("%w: %s.Name = %q: %v", ErrInvalid, field, given, err)
	}
	if isMarker(prefix, rel) {
		return fmt.Errorf("%w: %s.Name = %q is an owner marker name (prefix %q); the reconciler writes those itself", ErrInvalid, field, given, prefix)
	}
	return nil
}

func checkType(f field, sub, typ string) error {
	field := subField{f, sub}
	if typ == "" || len(typ) > 10 {
		return fmt.Errorf("%w: %s = %q: want a record type such as A, AAAA, CNAME or TXT", ErrInvalid, field, typ)
	}
	for i := 0; i < len(typ); i++ {
		c := typ[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return fmt.Errorf("%w: %s = %q: want a record type such as A, AAAA, CNAME or TXT", ErrInvalid, field, typ)
		}
	}
	if typ == "SOA" {
		return fmt.Errorf("%w: %s = %q: the SOA record belongs to the zone, not to the reconciler", ErrInvalid, field, typ)
	}
	return nil
}

// checkSet checks a normalised set; ipv4 says its values are known to be
// canonical IPv4 addresses already.
func checkSet(field field, s RRSet, ipv4 bool) error {
	if err := checkType(field, "Type", s.Type); err != nil {
		return err
	}
	if infrastructure(s.Name, s.Type) {
		return fmt.Errorf("%w: %s.Type = %q at %s: that RRset belongs to the zone, not to the reconciler", ErrInvalid, field, s.Type, s.Key())
	}
	if s.TTL < 0 || s.TTL > maxTTL {
		return fmt.Errorf("%w: %s.TTL = %v: allowed 0s to %v", ErrInvalid, field, s.TTL, maxTTL)
	}
	if s.Type == "CNAME" {
		if s.Name == "@" {
			return fmt.Errorf("%w: %s: a CNAME cannot sit at the zone apex %s", ErrInvalid, field, s.Zone)
		}
		if len(s.Values) > 1 {
			return fmt.Errorf("%w: %s.Values has %d targets: a CNAME has at most one", ErrInvalid, field, len(s.Values))
		}
	}
	if ipv4 {
		return nil
	}
	for j, v := range s.Values {
		vf := valueField{field, j}
		if v == "" {
			return fmt.Errorf("%w: %s is empty", ErrInvalid, vf)
		}
		switch s.Type {
		case "A", "AAAA":
			ip, err := netip.ParseAddr(v)
			if err != nil || ip.Zone() != "" || (s.Type == "A") != ip.Is4() {
				want := "an IPv4 address"
				if s.Type == "AAAA" {
					want = "an IPv6 address"
				}
				return fmt.Errorf("%w: %s = %q: want %s", ErrInvalid, vf, v, want)
			}
		case "CNAME":
			if err := dnsname.Check(v); err != nil {
				return fmt.Errorf("%w: %s = %q: want a host name: %v", ErrInvalid, vf, v, err)
			}
		}
	}
	return nil
}

// valueField names a value of a set in error messages.
type valueField struct {
	set field
	j   int
}

// String returns e.g. "Sets[3].Values[0]".
func (f valueField) String() string { return fmt.Sprintf("%s.Values[%d]", f.set, f.j) }

// checkRelative checks a relative name ("@" is the apex) under a checked
// zone without building the full name: every label valid, the whole at
// most 253 characters.
func checkRelative(rel, zone string) error {
	if rel == "@" {
		return nil
	}
	if len(rel)+len(zone) > dnsname.MaxName {
		return fmt.Errorf("%w: %q under %s is longer than %d characters", dnsname.ErrInvalid, rel, zone, dnsname.MaxName)
	}
	for rest := rel; ; {
		label, tail, more := strings.Cut(rest, ".")
		if label != "*" {
			if err := dnsname.CheckLabel(label, true); err != nil {
				return err
			}
		}
		if !more {
			return nil
		}
		rest = tail
	}
}

// subField names a field of an element of a Desired in error messages.
type subField struct {
	f   field
	sub string
}

// String returns e.g. "Withdraw[1].Type".
func (f subField) String() string { return f.f.String() + "." + f.sub }
