package probe

import (
	"fmt"
	"time"
)

// State is a target's health state. Only Passing and Warning targets are served.
type State uint8

const (
	// Unknown is the zero State; a Machine never reports it.
	Unknown State = iota
	// Passing targets are healthy and served.
	Passing
	// Warning targets have failed recently but fewer times than the critical
	// threshold; they are still served.
	Warning
	// Critical targets are unhealthy and not served.
	Critical
	// Recovery targets were critical and have passed at least once, but fewer
	// times than the passing threshold; they are not served yet.
	Recovery
)

// String returns "passing", "warning", "critical", "recovery" or "unknown".
func (s State) String() string {
	switch s {
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

// Served reports whether targets in state s receive traffic.
func (s State) Served() bool { return s == Passing || s == Warning }

// Cause says what moved a target.
type Cause uint8

const (
	// CauseProbe: a probe result moved the target.
	CauseProbe Cause = iota + 1
	// CauseOverride: an operator forced the state (drain or force passing).
	CauseOverride
	// CauseDisabled: the target was disabled or enabled.
	CauseDisabled
)

// String returns "probe", "override" or "disabled".
func (c Cause) String() string {
	switch c {
	case CauseProbe:
		return "probe"
	case CauseOverride:
		return "override"
	case CauseDisabled:
		return "disabled"
	}
	return "unknown"
}

// Transition is a change of a target's state, delivered as a value.
type Transition struct {
	// From and To are the states before and after.
	From, To State
	// At is the time the change happened (the now given to the machine).
	At time.Time
	// Cause says what moved the target.
	Cause Cause
	// Result is the probe result that caused the change (zero for overrides).
	Result Result
}

// MarshalText writes the state's name ("passing", …); Unknown is written
// as "unknown".
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads "passing", "warning", "critical", "recovery" or
// "unknown" (also the empty string), case-sensitively.
func (s *State) UnmarshalText(b []byte) error {
	switch string(b) {
	case "passing":
		*s = Passing
	case "warning":
		*s = Warning
	case "critical":
		*s = Critical
	case "recovery":
		*s = Recovery
	case "unknown", "":
		*s = Unknown
	default:
		return fmt.Errorf("probe: state %q: want passing, warning, critical or recovery", b)
	}
	return nil
}
