package failover

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/internal/dnsname"
)

// WriterScope says which controllers write a record. The zero value means
// every controller of the deployment (the global zone's names); a non-empty
// Region means only that region's controllers (its regional record).
type WriterScope struct {
	// Region is the region whose controllers write the record; "" = every controller.
	Region string
}

// Everyone is the scope of records every controller writes.
var Everyone = WriterScope{}

// RegionWriters is the scope of records written by region's controllers only.
func RegionWriters(region string) WriterScope { return WriterScope{Region: region} }

// Includes reports whether a controller of region writes under scope w.
func (w WriterScope) Includes(region string) bool { return w.Region == "" || w.Region == region }

// String returns "everyone" or "region <name>".
func (w WriterScope) String() string {
	if w.Region == "" {
		return "everyone"
	}
	return "region " + w.Region
}

// DesiredSet is one desired resource record set: every record at Name of Type,
// in Zone (as seen from View). Records are libdns values (libdns.Address or
// libdns.CNAME) whose names are relative to Zone ("@" at the apex) and whose
// TTL equals TTL. A policy never returns a DesiredSet without records.
//
// It is the failover side of record.RRSet: where record.RRSet holds RDATA
// strings for one zone, a DesiredSet holds libdns records and says which
// view and which controllers it belongs to. The record package reads it
// through DesiredState's Records method (record.Source), so neither package
// imports the other; RelativeName and Values give record.RRSet's name and
// values.
type DesiredSet struct {
	// Zone is the fully qualified zone holding the set, e.g. "example.com.".
	Zone string
	// View names the region whose private instance of Zone holds the set
	// (split horizon: every region has its own copy of the local zone);
	// "" means the one shared instance (the global zone).
	View string
	// Name is the fully qualified owner name, lower case.
	Name string
	// Type is "A", "AAAA" or "CNAME".
	Type string
	// TTL is the records' time to live.
	TTL time.Duration
	// Records are the set's records, sorted (addresses in address order).
	Records []libdns.Record
	// Writers says which controllers write the set.
	Writers WriterScope
}

// Addrs returns the addresses of an A or AAAA set, in order.
func (s DesiredSet) Addrs() []netip.Addr {
	out := make([]netip.Addr, 0, len(s.Records))
	for _, r := range s.Records {
		if a, ok := r.(libdns.Address); ok {
			out = append(out, a.IP)
		}
	}
	return out
}

// RelativeName returns Name relative to Zone ("@" at the apex), the form
// libdns and the record package use.
func (s DesiredSet) RelativeName() string { return relName(s.Name, s.Zone) }

// Values returns the records' data in libdns's zone-file form (an address
// for A/AAAA, a fully qualified target for CNAME), in order.
func (s DesiredSet) Values() []string {
	out := make([]string, len(s.Records))
	for i, r := range s.Records {
		out[i] = r.RR().Data
	}
	return out
}

// Target returns the target of a CNAME set ("" for other types).
func (s DesiredSet) Target() string {
	for _, r := range s.Records {
		if c, ok := r.(libdns.CNAME); ok {
			return c.Target
		}
	}
	return ""
}

// Withdraw asks for records to be removed: the only way a policy removes a
// name. Type "" withdraws every type the reconciler owns at Name; "A" or
// "AAAA" withdraws one address family while the other stays published.
type Withdraw struct {
	// Zone, View and Name locate the name as in DesiredSet.
	Zone, View, Name string
	// Type is the record type to remove, or "" for every type.
	Type string
	// Writers says which controllers ask for the withdraw.
	Writers WriterScope
}

// RelativeName returns Name relative to Zone ("@" at the apex).
func (w Withdraw) RelativeName() string { return relName(w.Name, w.Zone) }

// DesiredState is a policy's output: the sets to publish and the explicit
// withdraws. A name absent from both is left alone: the reconciler keeps
// whatever it last published there (that is how "keep last" works). Sets
// and withdraws are sorted by view, zone, name and type, so equal inputs
// give equal outputs.
//
// It is what record.Desired is built from: DesiredState satisfies
// record.Source, and record.FromSource turns the part one provider holds
// (one or more views) into that reconciler's record.Desired.
type DesiredState struct {
	// Sets are the RRsets to publish; none is empty.
	Sets []DesiredSet
	// Withdraws are the names (or one type at a name) to remove.
	Withdraws []Withdraw
}

// WrittenBy returns the part of d that a controller of region writes: the
// sets and withdraws whose WriterScope includes region.
func (d DesiredState) WrittenBy(region string) DesiredState {
	var out DesiredState
	for _, s := range d.Sets {
		if s.Writers.Includes(region) {
			out.Sets = append(out.Sets, s)
		}
	}
	for _, w := range d.Withdraws {
		if w.Writers.Includes(region) {
			out.Withdraws = append(out.Withdraws, w)
		}
	}
	return out
}

// Records returns the records d publishes in view, by zone: the form the
// record package reads (record.Source, record.FromSource), in d's order.
func (d DesiredState) Records(view string) map[string][]libdns.Record {
	out := map[string][]libdns.Record{}
	for _, s := range d.Sets {
		if s.View == view {
			out[s.Zone] = append(out[s.Zone], s.Records...)
		}
	}
	return out
}

// Withdrawals returns what d withdraws in view, by zone, as libdns.RR
// values with the name relative to the zone and the type ("" for every
// type): the form the record package reads (record.Source).
func (d DesiredState) Withdrawals(view string) map[string][]libdns.RR {
	out := map[string][]libdns.RR{}
	for _, w := range d.Withdraws {
		if w.View == view {
			out[w.Zone] = append(out[w.Zone], libdns.RR{Name: w.RelativeName(), Type: w.Type})
		}
	}
	return out
}

// Lookup returns the set at name and typ in view ("" for the shared
// instance). name is compared case-insensitively, with or without its
// trailing dot.
func (d DesiredState) Lookup(view, name, typ string) (DesiredSet, bool) {
	n := dnsname.Fqdn(name)
	for _, s := range d.Sets {
		if s.View == view && s.Name == n && s.Type == typ {
			return s, true
		}
	}
	return DesiredSet{}, false
}

// Withdrawn reports whether d withdraws typ at name in view, either that
// type alone or every type.
func (d DesiredState) Withdrawn(view, name, typ string) bool {
	n := dnsname.Fqdn(name)
	for _, w := range d.Withdraws {
		if w.View == view && w.Name == n && (w.Type == "" || w.Type == typ) {
			return true
		}
	}
	return false
}

// String lists d one line per set or withdraw, in order, e.g.
//
//	[eu] edge.local.example.com. A 30s 192.0.2.1 192.0.2.2 (region eu)
//	edge.global.example.com. CNAME 30s edge.local.example.com. (everyone)
//	withdraw [eu] edge.local.example.com. AAAA (region eu)
func (d DesiredState) String() string {
	var b strings.Builder
	for _, s := range d.Sets {
		if s.View != "" {
			fmt.Fprintf(&b, "[%s] ", s.View)
		}
		fmt.Fprintf(&b, "%s %s %s", s.Name, s.Type, s.TTL)
		for _, r := range s.Records {
			fmt.Fprintf(&b, " %s", r.RR().Data)
		}
		fmt.Fprintf(&b, " (%s)\n", s.Writers)
	}
	for _, w := range d.Withdraws {
		b.WriteString("withdraw ")
		if w.View != "" {
			fmt.Fprintf(&b, "[%s] ", w.View)
		}
		typ := w.Type
		if typ == "" {
			typ = "*"
		}
		fmt.Fprintf(&b, "%s %s (%s)\n", w.Name, typ, w.Writers)
	}
	return b.String()
}

// sort puts sets and withdraws in their canonical order.
func (d *DesiredState) sort() {
	slices.SortFunc(d.Sets, func(a, b DesiredSet) int {
		return cmp.Or(cmp.Compare(a.View, b.View), cmp.Compare(a.Zone, b.Zone),
			cmp.Compare(a.Name, b.Name), cmp.Compare(a.Type, b.Type))
	})
	slices.SortFunc(d.Withdraws, func(a, b Withdraw) int {
		return cmp.Or(cmp.Compare(a.View, b.View), cmp.Compare(a.Zone, b.Zone),
			cmp.Compare(a.Name, b.Name), cmp.Compare(a.Type, b.Type))
	})
}

// relName returns name relative to zone as libdns wants it ("@" at the apex).
func relName(name, zone string) string {
	r, _ := dnsname.Relative(name, zone)
	return r
}

// cnameSet builds a one-record CNAME set.
func cnameSet(zone, view, name, target string, ttl time.Duration, w WriterScope) DesiredSet {
	return DesiredSet{
		Zone: zone, View: view, Name: name, Type: "CNAME", TTL: ttl, Writers: w,
		Records: []libdns.Record{libdns.CNAME{Name: relName(name, zone), TTL: ttl, Target: target}},
	}
}

// addrOut appends to d the A and AAAA sets of addrs at name. addrs must be
// non-empty, sorted and free of duplicates. A family without addresses is
// withdrawn, so that a name that loses its last IPv6 address stops
// answering AAAA instead of holding a dead one: the name as a whole is
// never empty.
func addrOut(d *DesiredState, zone, view, name string, addrs []netip.Addr, ttl time.Duration, w WriterScope) {
	rel := relName(name, zone)
	var v4, v6 []libdns.Record
	for _, a := range addrs {
		r := libdns.Address{Name: rel, TTL: ttl, IP: a}
		if a.Is4() {
			v4 = append(v4, r)
		} else {
			v6 = append(v6, r)
		}
	}
	for _, fam := range []struct {
		typ  string
		recs []libdns.Record
	}{{"A", v4}, {"AAAA", v6}} {
		if len(fam.recs) == 0 {
			d.Withdraws = append(d.Withdraws, Withdraw{Zone: zone, View: view, Name: name, Type: fam.typ, Writers: w})
			continue
		}
		d.Sets = append(d.Sets, DesiredSet{Zone: zone, View: view, Name: name, Type: fam.typ, TTL: ttl, Records: fam.recs, Writers: w})
	}
}

// AddrSets returns the A and AAAA sets of addrs at name, for a user's
// policy: records sorted, duplicates dropped, a family without addresses
// withdrawn (so a name that loses its last IPv6 address stops answering
// AAAA), every set written by w. With no address it returns the zero
// Desired: the name is left out, and the reconciler keeps what it last
// published (keep last). name is fully qualified, inside zone; view is ""
// for the shared instance of zone or a region's private copy.
func AddrSets(zone, view, name string, addrs []netip.Addr, ttl time.Duration, w WriterScope) DesiredState {
	var d DesiredState
	if a := normAddrs(addrs); len(a) > 0 {
		addrOut(&d, dnsname.Fqdn(zone), view, dnsname.Fqdn(name), a, ttl, w)
		d.sort()
	}
	return d
}

// normAddrs returns a sorted, duplicate-free copy of addrs with IPv4-mapped
// IPv6 addresses unmapped and zones dropped.
func normAddrs(addrs []netip.Addr) []netip.Addr {
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, a.Unmap().WithZone(""))
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return slices.Compact(out)
}
