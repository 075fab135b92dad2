package memory

import (
	"fmt"

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

// Len is the number of records in the zone, SOA excluded.
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
