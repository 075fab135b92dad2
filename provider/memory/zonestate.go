package memory

import (
	"fmt"
	"iter"

	"github.com/gslbkit/gslb/provider/internal/zonedata"

	"github.com/miekg/dns"
)

// ZoneState is one zone read from one snapshot of the store, with the
// store's journal at that snapshot: what a zone transfer sends is computed
// from it (the package zonetransfer does, AXFR and IXFR). The zero
// ZoneState holds no zone: SOA is nil and the lists are empty.
type ZoneState struct {
	z       *zone
	journal []Change
}

// ZoneState returns zone's state, read from one snapshot of the store, or
// ErrNoZone.
func (p *Provider) ZoneState(zone string) (ZoneState, error) {
	if p == nil {
		return ZoneState{}, fmt.Errorf("%w: %s", ErrNoZone, zoneKey(zone))
	}
	s := p.load()
	z, ok := s.Zones[zoneKey(zone)]
	if !ok {
		return ZoneState{}, fmt.Errorf("%w: %s", ErrNoZone, zoneKey(zone))
	}
	return ZoneState{z: z, journal: s.journal}, nil
}

// Name is the zone's name, lower case and fully qualified.
func (s ZoneState) Name() string {
	if s.z == nil {
		return ""
	}
	return s.z.Name
}

// SOA returns the zone's SOA as a wire record (a new one each call; nil for
// the zero ZoneState).
func (s ZoneState) SOA() *dns.SOA {
	if s.z == nil {
		return nil
	}
	return s.z.SOARR()
}

// Records returns every record of the zone but the SOA, as wire records in
// GetRecords order (not to be modified).
func (s ZoneState) Records() []dns.RR {
	if s.z == nil {
		return nil
	}
	recs := s.z.Records()
	out := make([]dns.RR, len(recs))
	for i, r := range recs {
		out[i] = r.Wire
	}
	return out
}

// All yields every record of the zone but the SOA as wire records (not to
// be modified), without copying the zone: the apex's RRsets, then every
// other owner name's in canonical order (RFC 4034 section 6.1, as Records
// orders them), each owner's RRsets together and each RRset's records
// together. The owners are sorted when the apex's records have been
// yielded, by the first iteration of the zone version (zonedata.
// CanonicalNodes: some 56 bytes per name while it runs, a tenth of a
// second of CPU for a million names), and the order kept with the version
// for the next ones (8 bytes per name): a secondary builds
// its copy from sorted names at a fraction of the cost of names in random
// order (Knot's, measured, half the CPU at a million names). It reads the
// zone version the ZoneState was read from, which writes never change, so
// a slow reader sees one consistent zone while writes land. This is what
// an AXFR streams (RFC 5936 section 2.2 asks for no order; peers send
// canonical order).
func (s ZoneState) All() iter.Seq[dns.RR] {
	return func(yield func(dns.RR) bool) {
		if s.z == nil {
			return
		}
		if !yieldNode(s.z.Nodes[s.z.Name], yield) {
			return
		}
		for nd := range zonedata.CanonicalNodes(s.z) {
			if !yieldNode(nd, yield) {
				return
			}
		}
	}
}

// yieldNode yields nd's records RRset by RRset; false once yield stops.
func yieldNode(nd *node, yield func(dns.RR) bool) bool {
	if nd == nil {
		return true
	}
	for _, r := range nd.All() {
		if !yield(r.Wire) {
			return false
		}
	}
	return true
}

// LenAtLeast reports whether the zone holds at least n records, SOA
// excluded. It answers from the number of names when there are n or more
// besides the apex (each holds a record), else counts only until it
// reaches n, so it costs at most O(n) however large the zone (Len counts
// them all): an IXFR server asks it whether the differences are larger
// than the zone.
func (s ZoneState) LenAtLeast(n int) bool {
	if n <= 0 {
		return true
	}
	if s.z == nil {
		return false
	}
	// Every name but the apex holds a record (a write removes a name whose
	// last RRset it removes): as many names are enough, without a walk.
	if len(s.z.Nodes)-1 >= n {
		return true
	}
	c := 0
	for _, nd := range s.z.Nodes {
		if c += len(nd.All()); c >= n {
			return true
		}
	}
	return false
}

// Len is the number of records in the zone, SOA excluded. It walks the
// whole zone; LenAtLeast answers "at least n?" in O(n).
func (s ZoneState) Len() int {
	if s.z == nil {
		return 0
	}
	n := 0
	for _, nd := range s.z.Nodes {
		n += len(nd.All())
	}
	return n
}

// Journal returns the store's journal at the snapshot, every zone's
// entries in version order (see Changes; not to be modified).
func (s ZoneState) Journal() []Change { return s.journal }

// SOARecord returns zone's SOA as a wire record (a new one each call), or
// ErrNoZone.
func (p *Provider) SOARecord(zone string) (*dns.SOA, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoZone, zoneKey(zone))
	}
	z, ok := p.load().Zones[zoneKey(zone)]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoZone, zoneKey(zone))
	}
	return z.SOARR(), nil
}

// SOARecords returns, from one snapshot, the Provider's Version and every
// zone's SOA as a wire record, keyed by the zone's name (lower case, fully
// qualified): what a NOTIFY sender needs to see which serials changed
// (wait for the next change with Wait).
func (p *Provider) SOARecords() (version uint64, soas map[string]*dns.SOA) {
	if p == nil {
		return 0, map[string]*dns.SOA{}
	}
	s := p.load()
	soas = make(map[string]*dns.SOA, len(s.Zones))
	for name, z := range s.Zones {
		soas[name] = z.SOARR()
	}
	return s.version, soas
}

// HoldsZone reports whether the Provider holds the zone name, written lower
// case and fully qualified ("example.com."). It takes bytes so that a
// caller on a hot path (the DNS server's rate limiter) asks without
// allocating.
func (p *Provider) HoldsZone(name []byte) bool {
	if p == nil {
		return false
	}
	_, ok := p.load().Zones[string(name)]
	return ok
}

// ZoneHooked reports whether answer hooks (SetAnswerFunc,
// SetZoneAnswerFunc) act on names of zone — hooks do not travel to
// secondaries — and a number that changes whenever the set of hooks does,
// so that a caller can warn once per set.
func (p *Provider) ZoneHooked(zone string) (hooked bool, set uint64) {
	if p == nil {
		return false, 0
	}
	return p.eng.ZoneHooked(zoneKey(zone))
}
