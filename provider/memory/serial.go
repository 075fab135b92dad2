package memory

import "time"

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
