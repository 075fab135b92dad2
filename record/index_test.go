package record

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"pgregory.net/rapid"
)

// refSet is an RRset as the reference grouping finds it.
type refSet struct {
	name, typ string
	ttl       time.Duration
	mixed     bool
	values    []string
	recs      []libdns.Record
}

// refIndex groups records the plain way, one map entry per set, by the
// rules indexZone implements with shared arrays: names relative to the
// zone, types upper case, TTLs in whole seconds (a set carries the
// smallest), values canonical, sorted and unique, records in the order
// read, TXT sets at "<prefix>.<name>" filed as the marker of name.
func refIndex(zone string, recs []libdns.Record, prefix string) (sets map[string]map[string]*refSet, markers map[string]*refSet) {
	sets = map[string]map[string]*refSet{}
	markers = map[string]*refSet{}
	for _, rec := range recs {
		if rec == nil {
			continue
		}
		rr := rec.RR()
		name, typ, ttl, val := rr.Name, strings.ToUpper(rr.Type), rr.TTL, canonValue(strings.ToUpper(rr.Type), rr.Data)
		if a, ok := rec.(libdns.Address); ok {
			typ, val = "A", ""
			if a.IP.Is6() {
				typ = "AAAA"
			}
			if a.IP.IsValid() {
				val = a.IP.String()
			}
			name, ttl = a.Name, a.TTL
		}
		name = relName(name, zone)
		ttl = ttl.Truncate(time.Second)
		owner, marker := name, false
		if prefix != "" && typ == "TXT" {
			if name == prefix {
				owner, marker = "@", true
			} else if rest, ok := strings.CutPrefix(name, prefix+"."); ok {
				owner, marker = rest, true
			}
		}
		var s *refSet
		if marker {
			s = markers[owner]
			if s == nil {
				s = &refSet{name: name, typ: typ, ttl: ttl}
				markers[owner] = s
			}
		} else {
			if sets[owner] == nil {
				sets[owner] = map[string]*refSet{}
			}
			s = sets[owner][typ]
			if s == nil {
				s = &refSet{name: name, typ: typ, ttl: ttl}
				sets[owner][typ] = s
			}
		}
		if ttl != s.ttl {
			s.mixed = true
			s.ttl = min(s.ttl, ttl)
		}
		s.values = append(s.values, val)
		s.recs = append(s.recs, rec)
	}
	for _, m := range sets {
		for _, s := range m {
			slices.Sort(s.values)
			s.values = slices.Compact(s.values)
		}
	}
	for _, s := range markers {
		slices.Sort(s.values)
		s.values = slices.Compact(s.values)
	}
	return sets, markers
}

// sameSet reports how the index's set differs from the reference's.
func sameSet(idx *zoneIndex, cs *curSet, want *refSet) error {
	got := idx.rrset(cs)
	switch {
	case got.Zone != idx.zone || got.Name != want.name || got.Type != want.typ || got.TTL != want.ttl:
		return fmt.Errorf("set %s %s %v, want %s %s %v", got.Name, got.Type, got.TTL, want.name, want.typ, want.ttl)
	case cs.mixed != want.mixed:
		return fmt.Errorf("%s %s: mixed %v, want %v", got.Name, got.Type, cs.mixed, want.mixed)
	case !slices.Equal(got.Values, want.values) || len(got.Values) != cap(got.Values):
		return fmt.Errorf("%s %s: values %q (cap %d), want %q", got.Name, got.Type, got.Values, cap(got.Values), want.values)
	case !slices.Equal(idx.records(cs), want.recs):
		return fmt.Errorf("%s %s: records %v, want %v", got.Name, got.Type, idx.records(cs), want.recs)
	}
	return nil
}

// checkIndex compares indexZone with refIndex on recs.
func checkIndex(zone string, recs []libdns.Record, prefix string) error {
	idx := indexZone(zone, recs, prefix)
	sets, markers := refIndex(zone, recs, prefix)
	owners := map[string]bool{}
	for o := range sets {
		owners[o] = true
	}
	for o := range markers {
		owners[o] = true
	}
	used := 0
	for _, x := range idx.names {
		if x > 0 {
			used++
		}
	}
	if used != len(owners) || len(idx.nodes) != len(owners) {
		return fmt.Errorf("%d names, %d nodes, want %d", used, len(idx.nodes), len(owners))
	}
	n := 0
	for o := range owners {
		ni := idx.lookup(o)
		if ni < 0 {
			return fmt.Errorf("name %q missing", o)
		}
		if idx.nodes[ni].name != o {
			return fmt.Errorf("name %q found as %q", o, idx.nodes[ni].name)
		}
		m := idx.marker(ni)
		if (m == nil) != (markers[o] == nil) {
			return fmt.Errorf("%q: marker %v, want %v", o, m != nil, markers[o] != nil)
		}
		if m != nil {
			n++
			if err := sameSet(idx, m, markers[o]); err != nil {
				return err
			}
		}
		for typ, want := range sets[o] {
			n++
			cs := idx.get(ni, typ)
			if cs == nil {
				return fmt.Errorf("%q %s missing", o, typ)
			}
			if err := sameSet(idx, cs, want); err != nil {
				return err
			}
		}
	}
	for _, o := range []string{"absent", "www.", "_gslb-owner.absent"} {
		if !owners[o] && idx.lookup(o) >= 0 {
			return fmt.Errorf("absent name %q found", o)
		}
	}
	if n != len(idx.sets) {
		return fmt.Errorf("%d sets, want %d", len(idx.sets), n)
	}
	return nil
}

func TestIndexZoneCases(t *testing.T) {
	a := func(name string, ttl int, ip string) libdns.Record {
		return libdns.Address{Name: name, TTL: time.Duration(ttl) * time.Second, IP: netip.MustParseAddr(ip)}
	}
	txt := func(name string, ttl int, text string) libdns.Record {
		return libdns.TXT{Name: name, TTL: time.Duration(ttl) * time.Second, Text: text}
	}
	cases := []struct {
		name string
		recs []libdns.Record
	}{
		{"empty", nil},
		{"one run per set", []libdns.Record{txt("_gslb-owner.www", 300, "dep-1"), a("www", 60, "192.0.2.2"), a("www", 60, "192.0.2.1")}},
		{"interleaved", []libdns.Record{a("www", 60, "192.0.2.2"), a("api", 60, "192.0.2.1"), a("www", 30, "192.0.2.1"), txt("_gslb-owner.www", 300, "dep-1")}},
		{"duplicates", []libdns.Record{a("www", 60, "192.0.2.1"), a("www", 60, "192.0.2.1"), a("www", 60, "192.0.2.1")}},
		{"nil record", []libdns.Record{a("www", 60, "192.0.2.1"), nil, a("www", 60, "192.0.2.2")}},
		{"empty name is the apex", []libdns.Record{a("", 60, "192.0.2.1"), a("@", 60, "192.0.2.2"), txt("", 60, "x")}},
		{"apex marker", []libdns.Record{txt("_gslb-owner", 300, "dep-1"), a("@", 60, "192.0.2.1")}},
		{"fully qualified and upper case", []libdns.Record{a("WWW.example.com.", 60, "192.0.2.1"), a("www", 60, "2001:db8::1"), a("Www", 61, "192.0.2.3")}},
		{"invalid address", []libdns.Record{libdns.Address{Name: "www", TTL: time.Minute}, a("www", 60, "192.0.2.1")}},
		{"other types", []libdns.Record{
			libdns.RR{Name: "@", Type: "soa", TTL: time.Hour, Data: "ns. h. 1 2 3 4 5"},
			libdns.CNAME{Name: "app", TTL: time.Minute, Target: "Pool.Example.COM"},
			libdns.RR{Name: "mail", Type: "MX", TTL: time.Minute, Data: "10 mx.example.com."},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, prefix := range []string{"_gslb-owner", ""} {
				if err := checkIndex("example.com.", tc.recs, prefix); err != nil {
					t.Fatalf("prefix %q: %v", prefix, err)
				}
			}
		})
	}
}

// TestIndexZoneProperty compares indexZone with refIndex on random
// records: names and types that collide, runs and interleavings, TTLs that
// disagree, duplicates, markers and nil records.
func TestIndexZoneProperty(t *testing.T) {
	names := []string{"www", "WWW", "api", "@", "", "www.example.com.", "_gslb-owner", "_gslb-owner.www", "_gslb-owner.api", "_gslb-owner.@", "_gslb-owner.", "x.y", "out.example.net."}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 40).Draw(t, "n")
		recs := make([]libdns.Record, 0, n)
		for i := 0; i < n; i++ {
			name := rapid.SampledFrom(names).Draw(t, "name")
			ttl := time.Duration(rapid.IntRange(59, 61).Draw(t, "ttl")) * time.Second
			if rapid.IntRange(0, 9).Draw(t, "subsecond") == 0 {
				ttl += 500 * time.Millisecond
			}
			var rec libdns.Record
			switch rapid.IntRange(0, 5).Draw(t, "kind") {
			case 0, 1:
				rec = libdns.Address{Name: name, TTL: ttl, IP: netip.AddrFrom4([4]byte{192, 0, 2, byte(rapid.IntRange(1, 3).Draw(t, "ip"))})}
			case 2:
				rec = libdns.Address{Name: name, TTL: ttl, IP: netip.MustParseAddr(rapid.SampledFrom([]string{"2001:db8::1", "2001:db8::2"}).Draw(t, "ip6"))}
			case 3:
				rec = libdns.TXT{Name: name, TTL: ttl, Text: rapid.SampledFrom([]string{"dep-1", "other", "x"}).Draw(t, "text")}
			case 4:
				rec = libdns.RR{Name: name, Type: rapid.SampledFrom([]string{"cname", "CNAME", "mx", "A"}).Draw(t, "type"), TTL: ttl, Data: rapid.SampledFrom([]string{"Pool.example.com", "pool.example.com.", "192.0.2.1", " 192.0.2.1"}).Draw(t, "data")}
			default:
				rec = nil
			}
			recs = append(recs, rec)
		}
		prefix := rapid.SampledFrom([]string{"_gslb-owner", ""}).Draw(t, "prefix")
		if err := checkIndex("example.com.", recs, prefix); err != nil {
			t.Fatal(err)
		}
	})
}
