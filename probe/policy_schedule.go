package probe

import (
	"fmt"
	"time"

	"github.com/gslbkit/gslb/internal/backoff"
)

// ScheduleKind selects how a Machine spaces the probes of one target.
type ScheduleKind uint8

const (
	// ScheduleRecordService is the record service's schedule (the default):
	// Interval while passing; Interval/2 in warning and recovery; in
	// critical an exponential back-off that starts at Interval and doubles
	// per consecutive failure seen in critical, capped at MaxBackoff; back
	// to the state's delay as soon as a success is seen.
	ScheduleRecordService ScheduleKind = iota
	// ScheduleEnvoy is Envoy's schedule (Envoy's unhealthy and edge intervals; docs/semantics.md, Envoy rule 9):
	// after a success, HealthyEdgeInterval if the target is in recovery
	// (a return to passing is pending), UnhealthyInterval if it is still
	// critical, else Interval; after a failure, UnhealthyEdgeInterval if
	// the target is still served (a fall to critical is pending), else
	// UnhealthyInterval. Each of those defaults to Interval when 0. No
	// back-off. With all three at 0 it is a fixed interval, which is what
	// the Consul, Route 53 and gdnsd presets use.
	ScheduleEnvoy
)

// String returns "record-service" or "envoy".
func (k ScheduleKind) String() string {
	switch k {
	case ScheduleRecordService:
		return "record-service"
	case ScheduleEnvoy:
		return "envoy"
	}
	return fmt.Sprintf("schedule(%d)", uint8(k))
}

// MarshalText writes the schedule's name.
func (k ScheduleKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads "record-service" (also "recordService" or the empty
// string) or "envoy".
func (k *ScheduleKind) UnmarshalText(b []byte) error {
	switch string(b) {
	case "record-service", "recordService", "":
		*k = ScheduleRecordService
	case "envoy":
		*k = ScheduleEnvoy
	default:
		return fmt.Errorf("probe: schedule %q: want record-service or envoy", b)
	}
	return nil
}

// machFloor returns d, raised to MinInterval.
func machFloor(d time.Duration) time.Duration {
	if d < MinInterval {
		return MinInterval
	}
	return d
}

func machOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// machDelay is the schedule: the base delay before the next probe for a
// target now in state s. passed says whether the last result was a
// success (ignored by the record-service schedule); critFails is the
// number of consecutive failures seen while critical (record-service
// back-off exponent + 1; 0 means just entered by an override).
func (p *Policy) machDelay(s State, passed bool, critFails int) time.Duration {
	if p.Schedule == ScheduleEnvoy {
		var d time.Duration
		switch {
		case passed && s == Recovery:
			d = machOr(p.HealthyEdgeInterval, p.Interval)
		case passed && s.Served():
			d = p.Interval
		case !passed && s.Served():
			d = machOr(p.UnhealthyEdgeInterval, p.Interval)
		default:
			d = machOr(p.UnhealthyInterval, p.Interval)
		}
		return machFloor(d)
	}
	switch s {
	case Warning, Recovery:
		return machFloor(p.Interval / 2)
	case Critical:
		n := critFails - 1
		if n < 0 {
			n = 0
		}
		return machFloor(backoff.Doubling(p.Interval, n, p.MaxBackoff))
	}
	return machFloor(p.Interval)
}
