package record

import (
	"slices"
	"strings"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/internal/dnsname"
)

// Zone is the content of one zone as read from a provider: the input Plan
// compares the desired state against. Name is the zone ("example.com.");
// Records are as libdns's GetRecords returns them (names relative to the
// zone). Duplicates (an AXFR lists the SOA twice) and records of types the
// reconciler never manages (SOA, NS, ...) do no harm.
type Zone struct {
	Name    string
	Records []libdns.Record
}

// curSet is one RRset as found in a zone, with the records exactly as read
// so deletions match them.
type curSet struct {
	set  RRSet
	recs []libdns.Record
	// mixed is true when the records of the set disagree on the TTL.
	mixed bool
}

// zoneIndex is a zone's records grouped by key and by name.
type zoneIndex struct {
	zone  string
	sets  map[Key]*curSet
	types map[string][]string // name -> sorted types present
}

func indexZone(zone string, recs []libdns.Record) *zoneIndex {
	idx := &zoneIndex{
		zone:  zone,
		sets:  make(map[Key]*curSet, len(recs)),
		types: make(map[string][]string, len(recs)),
	}
	for _, rec := range recs {
		if rec == nil {
			continue
		}
		rr := rec.RR()
		typ := strings.ToUpper(rr.Type)
		k := Key{Zone: zone, Name: relName(rr.Name, zone), Type: typ}
		cs := idx.sets[k]
		if cs == nil {
			cs = &curSet{set: RRSet{Zone: zone, Name: k.Name, Type: typ, TTL: rr.TTL.Truncate(time.Second)}}
			idx.sets[k] = cs
			if !infrastructure(k.Name, typ) {
				ts := idx.types[k.Name]
				i, _ := slices.BinarySearch(ts, typ)
				idx.types[k.Name] = slices.Insert(ts, i, typ)
			}
		} else if t := rr.TTL.Truncate(time.Second); t != cs.set.TTL {
			cs.mixed = true
			cs.set.TTL = min(cs.set.TTL, t)
		}
		v := canonValue(typ, rr.Data)
		if !slices.Contains(cs.set.Values, v) {
			cs.set.Values = append(cs.set.Values, v)
		}
		cs.recs = append(cs.recs, rec)
	}
	for _, cs := range idx.sets {
		slices.Sort(cs.set.Values)
	}
	return idx
}

// infrastructure reports whether an RRset belongs to the zone itself rather
// than to the name's owner: the apex SOA and NS (and DNSSEC keys), and
// DNSSEC signatures and denial records anywhere. They never make a name
// occupied, never conflict with a CNAME and are never deleted.
func infrastructure(name, typ string) bool {
	switch typ {
	case "RRSIG", "NSEC", "NSEC3":
		return true
	case "SOA", "NS", "DNSKEY", "CDS", "CDNSKEY", "NSEC3PARAM":
		return name == "@"
	}
	return false
}

// get returns the current set of a key, or nil.
func (z *zoneIndex) get(name, typ string) *curSet {
	return z.sets[Key{Zone: z.zone, Name: name, Type: typ}]
}

// ownership is what the marker of a name says.
type ownership uint8

const (
	// free: no records and no marker at the name.
	free ownership = iota
	// owned: the marker holds our owner id.
	owned
	// unmarked: records but no marker.
	unmarked
	// foreign: a marker without our owner id.
	foreign
)

// markerName returns the relative name of the owner marker of name.
func markerName(prefix, name string) string {
	if name == "@" {
		return prefix
	}
	return prefix + "." + name
}

// owner reports who owns name, and the owner ids found in its marker.
func (z *zoneIndex) owner(prefix, id, name string) (ownership, []string) {
	m := z.get(markerName(prefix, name), "TXT")
	if m != nil && len(m.set.Values) > 0 {
		if slices.Contains(m.set.Values, id) {
			return owned, nil
		}
		return foreign, m.set.Values
	}
	if len(z.types[name]) > 0 {
		return unmarked, nil
	}
	return free, nil
}

// isMarker reports whether a relative name is an owner marker's name.
func isMarker(prefix, name string) bool {
	return name == prefix || strings.HasPrefix(name, prefix+".")
}

// zoneOf returns the normalised zone name.
func zoneOf(z string) string { return dnsname.Fqdn(z) }
