package record

import (
	"fmt"
	"github.com/gslbkit/gslb/internal/fielderr"
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
			return "", invalid(subField{f, "Zone"}, z, "a zone name: "+err.Error())
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
				return nil, invalid(path(nf.String()+".Zone"), k.Zone, "a zone name, "+dnsname.NameRule)
			}
			if err := checkRelative(k.Name, k.Zone); err != nil || strings.HasSuffix(k.Name, ".") {
				return nil, invalid(path(nf.String()+".Name"), k.Name, "a name relative to "+k.Zone)
			}
			if k.Type != "" {
				if err := checkType(f, fmt.Sprintf("Needs[%d].Type", j), k.Type); err != nil {
					return nil, err
				}
			}
			if k == n.Key() {
				return nil, invalid(nf, k, "another RRset than the set itself")
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
				return nil, invalid(field{"Sets", orig(k)}, it.Key(), fmt.Sprintf("each RRset once (it repeats %s)", field{"Sets", orig(k - 1)}))
			}
			if prev.Zone == it.Zone && prev.Name == it.Name && (prev.Type == "CNAME" || it.Type == "CNAME") {
				return nil, invalid(field{"Sets", orig(k)}, Name{it.Zone, it.Name}, "a CNAME alone at its name (this name has a CNAME and other types)")
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
				return nil, invalid(f, Name{zone, name}, "a name Sets does not publish (withdrawing every type)")
			}
			for _, s := range zd.sets[lo:hi] {
				if s.Type == typ {
					return nil, invalid(f, s.Key(), "an RRset not also in Sets (an RRset is either set or withdrawn)")
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
		return invalid(subField{field, "Name"}, given, "a name inside zone "+zone+", relative to it (\"@\" for the apex)")
	}
	if err := checkRelative(rel, zone); err != nil {
		return invalid(subField{field, "Name"}, given, "a name relative to "+zone+", "+dnsname.NameRule)
	}
	if isMarker(prefix, rel) {
		return invalid(subField{field, "Name"}, given, fmt.Sprintf("a name that is not an owner marker (prefix %q; the reconciler writes those itself)", prefix))
	}
	return nil
}

func checkType(f field, sub, typ string) error {
	field := subField{f, sub}
	if typ == "" || len(typ) > 10 {
		return invalid(field, typ, "a record type such as A, AAAA, CNAME or TXT")
	}
	for i := 0; i < len(typ); i++ {
		c := typ[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return invalid(field, typ, "a record type such as A, AAAA, CNAME or TXT")
		}
	}
	if typ == "SOA" {
		return invalid(field, typ, "a type other than SOA (the SOA record belongs to the zone, not to the reconciler)")
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
		return invalid(subField{field, "Type"}, s.Type, fmt.Sprintf("an RRset the zone does not own (%s belongs to the zone, not to the reconciler)", s.Key()))
	}
	if s.TTL < 0 || s.TTL > maxTTL {
		return invalid(subField{field, "TTL"}, s.TTL, fmt.Sprintf("0s to %v", maxTTL))
	}
	if s.Type == "CNAME" {
		if s.Name == "@" {
			return invalid(subField{field, "Name"}, "@", "a name below the zone apex "+s.Zone+" (a CNAME cannot sit at the apex)")
		}
		if len(s.Values) > 1 {
			return invalid(subField{field, "Values"}, fmt.Sprintf("%d targets", len(s.Values)), "at most one target for a CNAME")
		}
	}
	if ipv4 {
		return nil
	}
	for j, v := range s.Values {
		vf := valueField{field, j}
		if v == "" {
			return invalid(vf, "", "a non-empty value")
		}
		switch s.Type {
		case "A", "AAAA":
			ip, err := netip.ParseAddr(v)
			if err != nil || ip.Zone() != "" || (s.Type == "A") != ip.Is4() {
				want := "an IPv4 address"
				if s.Type == "AAAA" {
					want = "an IPv6 address"
				}
				return invalid(vf, v, want)
			}
		case "CNAME":
			if err := dnsname.Check(v); err != nil {
				return invalid(vf, v, "a host name, "+dnsname.NameRule)
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

// invalid returns the *FieldError of a desired state's element.
func invalid(f fmt.Stringer, value any, allowed string) error {
	return fielderr.New(desiredSentinel, f.String(), value, allowed)
}

// path is a field path already formatted.
type path string

// String returns p.
func (p path) String() string { return string(p) }
