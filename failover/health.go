package failover

import (
	"errors"
	"fmt"

	"github.com/gslbkit/gslb/internal/fielderr"
)

// ErrInvalidConfig is wrapped by every configuration error this package returns.
var ErrInvalidConfig = errors.New("failover: invalid config")

// ErrInvalidSnapshot is wrapped by every error about a snapshot or record
// handed to a policy (unknown region, duplicate address, bad name, ...).
var ErrInvalidSnapshot = errors.New("failover: invalid snapshot")

// FieldError says which field of a config or snapshot is wrong: its path
// (Path, e.g. "ttl" or "clusters[2].region"), its value as written and
// what is allowed. It wraps ErrInvalidConfig or ErrInvalidSnapshot (in
// package failovertest, its ErrInvalid) and reads
//
//	failover: invalid config: ttl = 0s: allowed [1s, 24h] in whole seconds
//
// It is the module's one invalid-configuration error type.
type FieldError = fielderr.Error

func configErr(field string, value any, allowed string) error {
	return fielderr.New(ErrInvalidConfig, field, value, allowed)
}

func snapErr(field string, value any, allowed string) error {
	return fielderr.New(ErrInvalidSnapshot, field, value, allowed)
}

// allUnhealthyModes is what AllUnhealthy may hold.
var allUnhealthyModes = fielderr.OneOf("keepLast", "failOpen", "failClosed", "fallback")

// Health is what the computing controller knows about one gateway or
// address. Its values match probe.State one for one, so a caller converts
// with Health(state). The zero value, HealthUnknown, means "this controller
// does not observe that target": its membership in a shared set is then
// decided by the controllers that do (see the package documentation).
type Health uint8

const (
	// HealthUnknown: not observed by this controller.
	HealthUnknown Health = iota
	// Passing targets are healthy and served.
	Passing
	// Warning targets have failed recently but are still served.
	Warning
	// Critical targets are not served.
	Critical
	// Recovery targets have passed since being critical, not often enough
	// yet; they are not served.
	Recovery
)

// String returns "unknown", "passing", "warning", "critical" or "recovery".
func (h Health) String() string {
	switch h {
	case Passing:
		return "passing"
	case Warning:
		return "warning"
	case Critical:
		return "critical"
	case Recovery:
		return "recovery"
	}
	return "unknown"
}

// Served reports whether a target in health h receives traffic: passing
// and warning targets do; critical, recovery and unknown ones do not (an
// unknown target may still be kept in a shared set by its owner's decision).
func (h Health) Served() bool { return h == Passing || h == Warning }

// Known reports whether h is an observation (anything but HealthUnknown).
func (h Health) Known() bool { return h != HealthUnknown }

// Freshness is what the computing controller read of one cluster's
// heartbeat in one scope. The caller derives it from the heartbeat
// package's staleness rules at its own now.
type Freshness uint8

const (
	// FreshnessUnknown: the beat could not be read (the listing failed,
	// the zone is unreachable, the region is partitioned away). Unknown is
	// never evidence of failure.
	FreshnessUnknown Freshness = iota
	// Fresh: the beat was read and is within the scope's healthy duration.
	Fresh
	// Stale: a successful read showed the beat too old, badly signed or
	// missing. This is evidence of failure that survives a partition, since
	// every controller that can read the zone reads the same thing.
	Stale
)

// String returns "unknown", "fresh" or "stale".
func (f Freshness) String() string {
	switch f {
	case Fresh:
		return "fresh"
	case Stale:
		return "stale"
	}
	return "unknown"
}

// AllUnhealthy says what a policy publishes when a name has no served
// address. The zero value is KeepLast, the default. In JSON it is one of
// "keepLast", "failOpen", "failClosed", "fallback".
type AllUnhealthy uint8

const (
	// KeepLast omits the set from the desired state, so the reconciler keeps
	// the last published set (stale, reported as held) until an address
	// recovers. The default.
	KeepLast AllUnhealthy = iota
	// FailOpen publishes every address, healthy or not (Route 53's rule).
	FailOpen
	// FailClosed asks for the name to be withdrawn (an explicit Withdraw).
	FailClosed
	// Fallback points the name, or the CNAME that leads to it, at a fixed
	// fallback target.
	Fallback
)

var allUnhealthyNames = [...]string{"keepLast", "failOpen", "failClosed", "fallback"}

// String returns the JSON name of m.
func (m AllUnhealthy) String() string {
	if int(m) < len(allUnhealthyNames) {
		return allUnhealthyNames[m]
	}
	return fmt.Sprintf("AllUnhealthy(%d)", uint8(m))
}

// MarshalText writes the JSON name; it fails for an undefined value.
func (m AllUnhealthy) MarshalText() ([]byte, error) {
	if int(m) >= len(allUnhealthyNames) {
		return nil, configErr("allUnhealthy", uint8(m), allUnhealthyModes)
	}
	return []byte(allUnhealthyNames[m]), nil
}

// UnmarshalText reads a JSON name; "" means keepLast.
func (m *AllUnhealthy) UnmarshalText(b []byte) error {
	s := string(b)
	if s == "" {
		*m = KeepLast
		return nil
	}
	for i, n := range allUnhealthyNames {
		if n == s {
			*m = AllUnhealthy(i)
			return nil
		}
	}
	return configErr("allUnhealthy", s, allUnhealthyModes)
}

func (m AllUnhealthy) valid() bool { return int(m) < len(allUnhealthyNames) }

// healthValues is what a Health may hold.
var healthValues = fielderr.OneOf("unknown", "passing", "warning", "critical", "recovery")
