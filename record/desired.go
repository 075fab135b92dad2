package record

import (
	"fmt"
	"math"
	"net/netip"
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
	names    map[string][]int           // name -> indexes into sets
	withdraw map[string]map[string]bool // name -> types ("" = all)
	adopt    map[string]bool
}

// normalize validates d and groups it by zone. prefix is the owner marker
// label, which desired names may not use.
func (d Desired) normalize(prefix string) (map[string]*zoneDesired, error) {
	zones := make(map[string]*zoneDesired)
	get := func(zone string) *zoneDesired {
		zd := zones[zone]
		if zd == nil {
			zd = &zoneDesired{zone: zone, names: map[string][]int{}, withdraw: map[string]map[string]bool{}, adopt: map[string]bool{}}
			zones[zone] = zd
		}
		return zd
	}
	seen := make(map[Key]int, len(d.Sets))
	for i, s := range d.Sets {
		field := fmt.Sprintf("Sets[%d]", i)
		n := s.normalized()
		if err := checkName(field, prefix, n.Zone, s.Name, n.Name); err != nil {
			return nil, err
		}
		if err := checkSet(field, n); err != nil {
			return nil, err
		}
		if j, dup := seen[n.Key()]; dup {
			return nil, fmt.Errorf("%w: %s (%s) repeats Sets[%d]; give each RRset once", ErrInvalid, field, n.Key(), j)
		}
		seen[n.Key()] = i
		zd := get(n.Zone)
		zd.names[n.Name] = append(zd.names[n.Name], len(zd.sets))
		zd.sets = append(zd.sets, n)
	}
	for _, zd := range zones {
		for name, idx := range zd.names {
			hasCNAME, hasOther := false, false
			for _, i := range idx {
				if zd.sets[i].Type == "CNAME" {
					hasCNAME = true
				} else {
					hasOther = true
				}
			}
			if hasCNAME && hasOther {
				return nil, fmt.Errorf("%w: Sets: %s has a CNAME and other types; a CNAME must be alone at its name",
					ErrInvalid, Name{zd.zone, name})
			}
		}
	}
	for i, w := range d.Withdraw {
		field := fmt.Sprintf("Withdraw[%d]", i)
		zone := dnsname.Fqdn(w.Zone)
		name := relName(w.Name, zone)
		if err := checkName(field, prefix, zone, w.Name, name); err != nil {
			return nil, err
		}
		typ := strings.ToUpper(strings.TrimSpace(w.Type))
		if typ != "" {
			if err := checkType(field+".Type", typ); err != nil {
				return nil, err
			}
		}
		if j, clash := seen[Key{zone, name, typ}]; clash && typ != "" {
			return nil, fmt.Errorf("%w: %s (%s) also appears in Sets[%d]; an RRset is either set or withdrawn", ErrInvalid, field, Key{zone, name, typ}, j)
		}
		zd := get(zone)
		if typ == "" && len(zd.names[name]) > 0 {
			return nil, fmt.Errorf("%w: %s withdraws all of %s, which Sets also publishes", ErrInvalid, field, Name{zone, name})
		}
		if zd.withdraw[name] == nil {
			zd.withdraw[name] = map[string]bool{}
		}
		zd.withdraw[name][typ] = true
	}
	for i, a := range d.Adopt {
		field := fmt.Sprintf("Adopt[%d]", i)
		zone := dnsname.Fqdn(a.Zone)
		name := relName(a.Name, zone)
		if err := checkName(field, prefix, zone, a.Name, name); err != nil {
			return nil, err
		}
		get(zone).adopt[name] = true
	}
	for _, zd := range zones {
		sortSets(zd.sets)
		clear(zd.names)
		for i, s := range zd.sets {
			zd.names[s.Name] = append(zd.names[s.Name], i)
		}
	}
	return zones, nil
}

// Validate reports the first problem of d, naming the field, the value and
// what is allowed; nil when d is valid for the default marker prefix. The
// reconciler validates against its own Config.MarkerPrefix.
func (d Desired) Validate() error {
	_, err := d.normalize(DefaultMarkerPrefix)
	return err
}

func checkName(field, prefix, zone, given, rel string) error {
	if err := dnsname.Check(zone); err != nil {
		return fmt.Errorf("%w: %s.Zone = %q: %v", ErrInvalid, field, zone, err)
	}
	if strings.HasSuffix(rel, ".") {
		return fmt.Errorf("%w: %s.Name = %q is outside zone %s; give it relative to the zone (\"@\" for the apex)", ErrInvalid, field, given, zone)
	}
	if err := dnsname.Check(dnsname.Join(rel, zone)); err != nil {
		return fmt.Errorf("%w: %s.Name = %q: %v", ErrInvalid, field, given, err)
	}
	if isMarker(prefix, rel) {
		return fmt.Errorf("%w: %s.Name = %q is an owner marker name (prefix %q); the reconciler writes those itself", ErrInvalid, field, given, prefix)
	}
	return nil
}

func checkType(field, typ string) error {
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

func checkSet(field string, s RRSet) error {
	if err := checkType(field+".Type", s.Type); err != nil {
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
	for j, v := range s.Values {
		vf := fmt.Sprintf("%s.Values[%d]", field, j)
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
