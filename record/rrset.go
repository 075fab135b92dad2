package record

import (
	"encoding/json"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/internal/jsontime"
	"github.com/gslbkit/gslb/internal/zoneops"
)

// Key identifies one RRset: a zone, a name relative to it and a type.
//
// Zone is fully qualified and lower case ("example.com."); Name follows the
// libdns convention: relative to the zone, lower case, "@" for the apex;
// Type is upper case ("A", "AAAA", "CNAME", "TXT", ...). Plan normalises the
// keys it is given, so callers may pass a fully qualified name inside the
// zone, mixed case, or a zone without its trailing dot.
type Key struct {
	// Zone is the zone, e.g. "example.com.".
	Zone string `json:"zone"`
	// Name is relative to Zone, "@" for the apex.
	Name string `json:"name"`
	// Type is the record type; empty in a withdraw means every type.
	Type string `json:"type,omitempty"`
}

// FQDN returns the key's fully qualified name ("www.example.com.").
func (k Key) FQDN() string { return dnsname.Join(k.Name, k.Zone) }

// Node returns the name (all types) the key belongs to.
func (k Key) Node() Name { return Name{Zone: k.Zone, Name: k.Name} }

// String returns "www.example.com. A".
func (k Key) String() string { return k.FQDN() + " " + k.Type }

// Name identifies a node of a zone, all types together. Zone and Name follow
// the conventions of Key.
type Name struct {
	// Zone is the zone, e.g. "example.com.".
	Zone string `json:"zone"`
	// Name is relative to Zone, "@" for the apex.
	Name string `json:"name"`
}

// FQDN returns the fully qualified name.
func (n Name) FQDN() string { return dnsname.Join(n.Name, n.Zone) }

// String returns the fully qualified name.
func (n Name) String() string { return n.FQDN() }

// RRSet is the set of records of one name and type: the unit the reconciler
// compares, publishes and holds. Values are RDATA in libdns's unescaped
// zone-file form (libdns.RR.Data): an IP address for A/AAAA, a target name
// for CNAME, the text for TXT. The zero RRSet is empty and invalid.
//
// Values are compared as a set, after canonicalisation: IP addresses in
// their standard form, target names (CNAME, NS, PTR, DNAME) lower case and
// fully qualified, other data as given. TTLs are compared in whole seconds,
// the precision DNS keeps.
type RRSet struct {
	// Zone is the zone the set lives in, e.g. "example.com.".
	Zone string `json:"zone"`
	// Name is relative to Zone ("www", "@" for the apex); a fully qualified
	// name inside Zone is accepted and made relative.
	Name string `json:"name"`
	// Type is the record type, e.g. "A", "AAAA", "CNAME".
	Type string `json:"type"`
	// TTL is the time to live; whole seconds, 0 to 2^31-1 s. In JSON it is
	// a duration string ("30s") or a number of seconds.
	TTL time.Duration `json:"ttl"`
	// Values are the records' data. An empty list asks for an empty set,
	// which the reconciler refuses to publish (see ErrEmptySet).
	Values []string `json:"values"`
	// Needs lists the RRsets this set depends on, in zones of the same
	// reconciler (a Type "" means any record at that name): the set is
	// published, or changed, only while each of them is published or
	// written first in the same reconcile. A CNAME also needs, without
	// saying so, the sets the desired state publishes at its target when
	// that target lies in one of the desired zones (a CNAME to its pool).
	// When a dependency cannot be written — its name is owned by someone
	// else, it is refused, its write fails, or it is neither desired nor
	// published — the set keeps what is published (nothing, if it is new)
	// and the conflict is reported as a Refusal whose error matches
	// ErrDependency (a *DependencyError).
	Needs []Key `json:"needs,omitempty"`
}

// rrsetJSON is RRSet's JSON form, with the TTL as a duration string.
type rrsetJSON struct {
	Zone   string            `json:"zone"`
	Name   string            `json:"name"`
	Type   string            `json:"type"`
	TTL    jsontime.Duration `json:"ttl"`
	Values []string          `json:"values"`
	Needs  []Key             `json:"needs,omitempty"`
}

// MarshalJSON writes the set with its TTL as a duration string ("30s").
func (s RRSet) MarshalJSON() ([]byte, error) {
	return json.Marshal(rrsetJSON{s.Zone, s.Name, s.Type, jsontime.Duration(s.TTL), s.Values, s.Needs})
}

// UnmarshalJSON reads the set; the TTL may be a duration string ("30s") or
// a number of seconds.
func (s *RRSet) UnmarshalJSON(b []byte) error {
	var j rrsetJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = RRSet{Zone: j.Zone, Name: j.Name, Type: j.Type, TTL: j.TTL.D(), Values: j.Values, Needs: j.Needs}
	return nil
}

// Key returns the set's key as given (not normalised).
func (s RRSet) Key() Key { return Key{Zone: s.Zone, Name: s.Name, Type: s.Type} }

// Records returns the set as libdns records of the package's typed structs
// (libdns.Address, libdns.CNAME, libdns.TXT, ...), falling back to
// libdns.RR for data libdns cannot parse. A TXT value in zone-file
// presentation form (beginning with a double quote, several strings such as
// `"first" "second"`) stays a libdns.RR, the form providers read as
// several strings. Each call returns a new slice.
func (s RRSet) Records() []libdns.Record {
	out := make([]libdns.Record, 0, len(s.Values))
	for _, v := range s.Values {
		rr := libdns.RR{Name: s.Name, TTL: s.TTL, Type: s.Type, Data: v}
		if strings.EqualFold(s.Type, "TXT") && zoneops.IsTXTStrings(v) {
			out = append(out, rr)
		} else if rec, err := rr.Parse(); err == nil {
			out = append(out, rec)
		} else {
			out = append(out, rr)
		}
	}
	return out
}

// Equal reports whether a and b publish the same thing: same key, same TTL
// in whole seconds and the same set of canonical values.
func (s RRSet) Equal(o RRSet) bool {
	a, b := s.normalized(), o.normalized()
	return a.Key() == b.Key() && sameTTL(a.TTL, b.TTL) && slices.Equal(a.Values, b.Values)
}

// normalized returns a copy with a canonical key, TTL truncated to seconds
// and values canonical, sorted and without duplicates. The caller's slice is
// never modified.
func (s RRSet) normalized() RRSet {
	n, _ := s.normalizedChecked()
	return n
}

// normalizedChecked is normalized, and also reports whether the set is of
// type A with every value a canonical IPv4 address, which then needs no
// further check.
func (s RRSet) normalizedChecked() (RRSet, bool) {
	zone := s.Zone
	if !plainName(strings.TrimSuffix(zone, ".")) || !strings.HasSuffix(zone, ".") {
		zone = dnsname.Fqdn(zone)
	}
	typ := strings.ToUpper(strings.TrimSpace(s.Type))
	out := RRSet{Zone: zone, Name: relName(s.Name, zone), Type: typ, TTL: s.TTL.Truncate(time.Second), Needs: normNeeds(s.Needs)}
	if typ == "A" && sortedIPv4(s.Values) {
		out.Values = slices.Clip(s.Values) // shared with the caller, never written
		return out, true
	}
	out.Values = canonValues(typ, s.Values)
	return out, false
}

// sortedIPv4 reports whether vs are canonical IPv4 addresses, sorted and
// unique (and not empty).
func sortedIPv4(vs []string) bool {
	for i, v := range vs {
		if !canonicalIPv4(v) || (i > 0 && vs[i-1] >= v) {
			return false
		}
	}
	return len(vs) > 0
}

func canonValues(typ string, in []string) []string {
	if len(in) == 0 {
		return nil
	}
	if canonical(typ, in) {
		return slices.Clip(in) // shared with the caller, never written
	}
	vs := make([]string, len(in))
	for i, v := range in {
		vs[i] = canonValue(typ, v)
	}
	slices.Sort(vs)
	return slices.Compact(vs)
}

// canonValue returns the canonical form of one value of type typ.
func canonValue(typ, v string) string {
	switch typ {
	case "A", "AAAA":
		if canonicalIPv4(v) {
			return v
		}
		if ip, err := netip.ParseAddr(strings.TrimSpace(v)); err == nil {
			var buf [64]byte
			if b := ip.AppendTo(buf[:0]); string(b) != v {
				return string(b)
			}
			return v
		}
	case "TXT":
		return zoneops.CanonicalTXT(v)
	case "CNAME", "NS", "PTR", "DNAME":
		if t := strings.TrimSpace(v); t != "" {
			if t == v && plainName(t[:len(t)-1]) && t[len(t)-1] == '.' {
				return v
			}
			return dnsname.Fqdn(t)
		}
	}
	return v
}

// relName returns name relative to the fully qualified zone, lower case,
// "@" for the apex. A name ending in a dot is treated as fully qualified;
// one outside the zone is returned fully qualified (and later refused).
func relName(name, zone string) string {
	if plainName(name) {
		return name
	}
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" || n == "@" {
		return "@"
	}
	if strings.HasSuffix(n, ".") {
		rel, _ := dnsname.Relative(n, zone)
		return rel
	}
	return n
}

func sameTTL(a, b time.Duration) bool {
	return a.Truncate(time.Second) == b.Truncate(time.Second)
}

// Group turns the records of one zone, as a libdns provider returns them,
// into RRsets in a deterministic order (by name, then type). Record names
// are taken as relative to zone (a fully qualified name inside the zone is
// accepted too). When the records of one set disagree on the TTL, the set
// carries the smallest.
func Group(zone string, recs []libdns.Record) []RRSet {
	idx := indexZone(dnsname.Fqdn(zone), recs, "")
	out := make([]RRSet, 0, len(idx.sets))
	for si := range idx.sets {
		out = append(out, idx.rrset(&idx.sets[si]))
	}
	sortSets(out)
	return out
}

func sortSets(s []RRSet) {
	slices.SortFunc(s, func(a, b RRSet) int { return compareKeys(a.Key(), b.Key()) })
}

// compareKeys orders keys by zone, then name (apex first, then byte-wise),
// then type.
func compareKeys(a, b Key) int {
	if c := strings.Compare(a.Zone, b.Zone); c != 0 {
		return c
	}
	if c := compareNames(a.Name, b.Name); c != 0 {
		return c
	}
	return strings.Compare(a.Type, b.Type)
}

func compareNames(a, b string) int {
	if a == b {
		return 0
	}
	if a == "@" {
		return -1
	}
	if b == "@" {
		return 1
	}
	return strings.Compare(a, b)
}

// canonical reports whether vs are already canonical, sorted and unique.
func canonical(typ string, vs []string) bool {
	for i, v := range vs {
		if canonValue(typ, v) != v || (i > 0 && vs[i-1] >= v) {
			return false
		}
	}
	return true
}
