package memory

import (
	"fmt"
	"time"
)

// SerialGreater reports whether zone serial a is greater than b in the
// serial number arithmetic of RFC 1982 (32-bit serials, compared modulo
// 2^32): true when a differs from b and a lies less than 2^31 ahead of it.
// Two serials exactly 2^31 apart are not comparable and yield false either
// way, as RFC 1982 section 3.2 leaves them undefined. Secondaries compare
// serials this way, so a zone's serial must only ever move forward in this
// sense: see ZoneConfig.Serial for carrying it across restarts.
func SerialGreater(a, b uint32) bool {
	d := a - b
	return d != 0 && d < 1<<31
}

// nextSerial is the serial after s: one more, skipping 0 (which some
// servers treat as unset).
func nextSerial(s uint32) uint32 {
	s++
	if s == 0 {
		s = 1
	}
	return s
}

// bumpSerial is the serial after s under policy at now: see
// ZoneConfig.SerialPolicy.
func bumpSerial(s uint32, policy SerialPolicy, now time.Time) uint32 {
	next := nextSerial(s)
	if policy != SerialUnixTime {
		return next
	}
	if clock := uint32(now.Unix()); clock != 0 && SerialGreater(clock, next) {
		return clock
	}
	return next
}

// AdvanceSerial moves zone's SOA serial to one past past when past is not
// behind it (RFC 1982: past equal to the serial, or greater), and returns
// the serial then in force and whether it moved; or ErrNoZone. It changes
// no record: the Provider's Version moves (so Wait, and NOTIFY senders,
// see it) with no journal entry, so an incremental transfer from a serial
// before the move no longer chains and falls back to a full one, and a
// replica (provider/replication), handed a newer version without changes,
// takes a full snapshot. It is
// for a primary that learns a secondary holds a serial it served before
// losing its state (a restart without a state file after a burst of
// changes ran the serial ahead of the clock): moving past it makes the
// secondary transfer again instead of ignoring the zone.
func (p *Provider) AdvanceSerial(zone string, past uint32) (uint32, bool, error) {
	key := zoneKey(zone)
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.load()
	z, ok := old.Zones[key]
	if !ok {
		return 0, false, fmt.Errorf("%w: %s", ErrNoZone, key)
	}
	cur := z.SOA.Serial
	if SerialGreater(cur, past) {
		return cur, false, nil
	}
	nz := z.Clone()
	nz.SOA.Serial = nextSerial(past)
	nz.CarryIndex(z, func(func(string) bool) {}) // the same names
	zones := maps(old.Zones)
	zones[key] = nz
	p.publish(old, zones, nil)
	return nz.SOA.Serial, true, nil
}
