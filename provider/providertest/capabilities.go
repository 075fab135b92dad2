package providertest

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/libdns/libdns"
)

// Behaviour is what a provider does with a change real DNS servers
// disagree about. The zero value, Refuse, is the strict behaviour.
type Behaviour int

const (
	// Refuse: the call returns an error and the zone is left as it was
	// (Route 53 for both cases; Cloudflare for a CNAME beside other data).
	Refuse Behaviour = iota
	// Ignore: the call succeeds but the change is not applied; the suite
	// reads the zone back and asserts "not applied" (BIND over RFC 2136
	// silently drops a CNAME beside other data).
	Ignore
	// Accept: the change is applied (Cloudflare flattens an apex CNAME;
	// provider/memory lets SetRecords swap an address set for a CNAME).
	// The suite then checks only that the CNAME is there.
	Accept
)

// String returns "refuse", "ignore" or "accept".
func (b Behaviour) String() string {
	switch b {
	case Refuse:
		return "refuse"
	case Ignore:
		return "ignore"
	case Accept:
		return "accept"
	}
	return fmt.Sprintf("Behaviour(%d)", int(b))
}

// Capabilities describes where a provider legitimately differs from the
// strict reading of the libdns contract. The zero value describes a strict
// provider: it refuses a CNAME beside other data and a CNAME at the apex,
// keeps TTLs exactly, and is not asked to list zones.
type Capabilities struct {
	// CNAMEBesideData is what SetRecords does when it is asked to add a
	// CNAME at a name that holds other data.
	CNAMEBesideData Behaviour
	// ApexCNAME is what SetRecords does with a CNAME at the zone apex.
	ApexCNAME Behaviour
	// MinTTL is the smallest TTL the provider stores; lower TTLs read back
	// raised to it. 0 means TTLs are kept exactly (the suite uses TTLs of
	// 60s and more).
	MinTTL time.Duration
	// ListZones says the provider implements libdns.ZoneLister and lists
	// the zone under test.
	ListZones bool
	// NoTXTStrings skips the check that a TXT given in presentation form
	// (a libdns.RR whose data is quoted strings, `"a" "b"`) keeps its
	// strings; for libdns providers that only know one text per record.
	// gslbkit's adapters all keep them.
	NoTXTStrings bool
	// Prefix is the label prefix of the names the suite creates; default
	// "gslbct-". The suite deletes names with this prefix before and
	// after it runs, and touches nothing else in the zone.
	Prefix string
}

// key identifies one record by name, type and data for comparison.
type key struct {
	Name, Type, Data string
}

// rec is a record read back, reduced to what the suite compares.
type rec struct {
	key
	TTL time.Duration
}

// normalise reduces r to comparable form: lower-case relative name, "@"
// for the apex, upper-case type, canonical IPs, lower-case fully qualified
// CNAME/NS targets. TXT text is kept byte for byte.
func normalise(r libdns.Record, zone string) rec {
	rr := r.RR()
	name := strings.ToLower(rr.Name)
	if name == "" {
		name = "@"
	}
	if strings.HasSuffix(name, ".") {
		name = libdns.RelativeName(name, strings.ToLower(zone))
	}
	typ := strings.ToUpper(rr.Type)
	data := rr.Data
	switch typ {
	case "A", "AAAA":
		if ip, err := netip.ParseAddr(data); err == nil {
			data = ip.Unmap().String()
		}
	case "CNAME", "NS":
		data = strings.ToLower(data)
		if !strings.HasSuffix(data, ".") {
			data += "."
		}
	}
	return rec{key: key{Name: name, Type: typ, Data: data}, TTL: rr.TTL.Truncate(time.Second)}
}

// rrset returns the records of zone at (name, typ), sorted by data; an
// empty typ means every type at name.
func rrset(all []rec, name, typ string) []rec {
	var out []rec
	for _, r := range all {
		if r.Name == name && (typ == "" || r.Type == typ) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b rec) int {
		if c := strings.Compare(a.Type, b.Type); c != 0 {
			return c
		}
		return strings.Compare(a.Data, b.Data)
	})
	return out
}

// datas returns the sorted data of rs.
func datas(rs []rec) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.Data)
	}
	slices.Sort(out)
	return out
}
