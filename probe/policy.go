package probe

import (
	"errors"
	"fmt"
	"time"

	"github.com/gslbkit/gslb/internal/backoff"
	"github.com/gslbkit/gslb/internal/jsontime"
)

// Duration is a time.Duration that reads and writes Go duration strings
// ("3s", "250ms") in JSON; a JSON number is read as seconds.
type Duration = jsontime.Duration

// Limits that Validate enforces on every Policy.
const (
	// MinInterval is the shortest delay the machine ever returns and the
	// smallest Interval a Policy accepts (Envoy's floor).
	MinInterval = time.Millisecond
	// MaxInterval is the longest interval, back-off or jitter a Policy accepts.
	MaxInterval = 24 * time.Hour
	// MaxThreshold is the largest value any threshold accepts.
	MaxThreshold = 65535
)

// ErrInvalidPolicy is wrapped by every error Policy.Validate returns.
var ErrInvalidPolicy = errors.New("probe: invalid policy")

// PolicyError says which policy field holds a bad value and what it may
// hold. It wraps ErrInvalidPolicy.
type PolicyError struct {
	// Field is the JSON name of the field ("criticalThreshold").
	Field string
	// Value is the offending value, formatted.
	Value string
	// Allowed describes the allowed range ("1–65535", "≥ warningThreshold (3)").
	Allowed string
}

// Error formats the field, the value and the allowed range.
func (e *PolicyError) Error() string {
	return fmt.Sprintf("probe: policy field %s = %s: allowed %s", e.Field, e.Value, e.Allowed)
}

// Unwrap returns ErrInvalidPolicy.
func (e *PolicyError) Unwrap() error { return ErrInvalidPolicy }

// Policy is the per-target health policy: the thresholds that move a
// Machine between states and the schedule that spaces its probes.
//
// The zero value is not valid; start from DefaultPolicy or a named preset
// (Envoy, RecordService, ProxySync, Consul, Route53, Gdnsd) and change
// fields. A Policy is a plain value, safe to copy; Validate reports the first
// bad field. JSON uses the camelCase names below; criticalThreshold may also
// be spelled unhealthyThreshold and passingThreshold healthyThreshold
// (Envoy Gateway's names), but not both spellings of one knob at once.
type Policy struct {
	// Interval is the delay between probes of a passing target (the base
	// of every schedule). Range MinInterval–MaxInterval. Default 10s.
	Interval Duration `json:"interval"`
	// Timeout bounds each probe: the Monitor gives Probe a context with
	// this deadline. Range (0, Interval]. Default 1s.
	Timeout Duration `json:"timeout"`

	// WarningThreshold is the number of consecutive failures that moves a
	// passing target to warning (still served). Range 1–criticalThreshold;
	// equal to criticalThreshold means the target never shows warning.
	// Default 1.
	WarningThreshold int `json:"warningThreshold"`
	// CriticalThreshold is the number of consecutive failures that moves a
	// passing or warning target to critical (not served). Range
	// warningThreshold–MaxThreshold. Default 3. JSON alias unhealthyThreshold.
	CriticalThreshold int `json:"criticalThreshold"`
	// PassingThreshold is the number of consecutive successes that moves a
	// critical target back to passing; with more than 1, the first success
	// moves it to recovery (not served) until the count is reached. Range
	// 1–MaxThreshold. Default 1. JSON alias healthyThreshold.
	PassingThreshold int `json:"passingThreshold"`
	// WarningExitThreshold is the number of consecutive successes that
	// returns a warning target to passing (Consul's successBeforePassing).
	// Range 1–MaxThreshold. Default 1.
	WarningExitThreshold int `json:"warningExitThreshold"`
	// FailureResetThreshold is the number of consecutive successes after
	// which the failure count is reset (gdnsd's ok_thresh). Until then
	// failures keep accumulating across sparse successes. Range
	// 1–MaxThreshold. Default 1 (every success resets the failure count).
	FailureResetThreshold int `json:"failureResetThreshold"`

	// InitialState is the state of a new target before its first result:
	// Passing (optimistic, served) or Critical (nothing served until
	// proven). JSON "passing" or "critical". Default Passing.
	InitialState State `json:"initialState"`
	// FirstPassImmediate makes one success enough to pass while no result
	// has been seen yet, whatever PassingThreshold says (Envoy's startup
	// rule; Consul and gdnsd apply their first result at once). It applies
	// only to the very first result. Default false.
	FirstPassImmediate bool `json:"firstPassImmediate"`
	// FailNowAsFailure counts a FailNow result as an ordinary failure
	// instead of moving the target straight to critical (peers without the
	// notion: Route 53, Consul, gdnsd). Default false (fail-now → critical).
	FailNowAsFailure bool `json:"failNowAsFailure"`

	// Schedule selects how the delay to the next probe is computed:
	// ScheduleRecordService (default) or ScheduleEnvoy.
	Schedule ScheduleKind `json:"schedule"`
	// MaxBackoff caps the record-service back-off of critical targets.
	// Range Interval–MaxInterval for ScheduleRecordService; ignored (and
	// may be 0) for ScheduleEnvoy. Default 300s.
	MaxBackoff Duration `json:"maxBackoff,omitempty"`
	// UnhealthyInterval is the Envoy-schedule delay while the target is not
	// served. 0 means Interval; else MinInterval–MaxInterval.
	UnhealthyInterval Duration `json:"unhealthyInterval,omitempty"`
	// UnhealthyEdgeInterval is the Envoy-schedule delay after a failure
	// that left the target served (a change toward critical is pending).
	// 0 means Interval; else MinInterval–MaxInterval.
	UnhealthyEdgeInterval Duration `json:"unhealthyEdgeInterval,omitempty"`
	// HealthyEdgeInterval is the Envoy-schedule delay after a success that
	// left the target unserved in recovery (a change toward passing is
	// pending). 0 means Interval; else MinInterval–MaxInterval.
	HealthyEdgeInterval Duration `json:"healthyEdgeInterval,omitempty"`

	// InitialJitter delays a new target's first probe by a uniform random
	// amount in [0, InitialJitter); 0 probes at once. The Monitor applies
	// it. Range 0–MaxInterval. Default 0.
	InitialJitter Duration `json:"initialJitter,omitempty"`
	// IntervalJitter adds a uniform random amount in [0, IntervalJitter)
	// to every delay. The Monitor applies it. Range 0–MaxInterval.
	// Default 0.
	IntervalJitter Duration `json:"intervalJitter,omitempty"`
	// IntervalJitterPercent adds a uniform random share in
	// [0, delay × percent / 100) to every delay, on top of IntervalJitter.
	// Range 0–100. Default 0.
	IntervalJitterPercent float64 `json:"intervalJitterPercent,omitempty"`
}

// DefaultPolicy returns the default policy, which is RecordService():
// interval 10s, timeout 1s, warning after 1 failure, critical after 3,
// passing after 1 success, start passing, fail-now → critical, the
// record-service schedule with back-off capped at 300s, no jitter.
func DefaultPolicy() Policy {
	return Policy{
		Interval:              Duration(10 * time.Second),
		Timeout:               Duration(time.Second),
		WarningThreshold:      1,
		CriticalThreshold:     3,
		PassingThreshold:      1,
		WarningExitThreshold:  1,
		FailureResetThreshold: 1,
		InitialState:          Passing,
		Schedule:              ScheduleRecordService,
		MaxBackoff:            Duration(300 * time.Second),
	}
}

// Jitter returns the per-interval jitter the Monitor adds to every delay
// the machine returns (IntervalJitter plus IntervalJitterPercent).
func (p Policy) Jitter() backoff.Jitter {
	return backoff.Jitter{Absolute: p.IntervalJitter.D(), Percent: p.IntervalJitterPercent}
}

func machBad(field string, value any, allowed string) error {
	return &PolicyError{Field: field, Value: fmt.Sprint(value), Allowed: allowed}
}

func machCheckDur(field string, d Duration, lo, hi time.Duration, zeroOK bool) error {
	if zeroOK && d == 0 {
		return nil
	}
	if d.D() < lo || d.D() > hi {
		r := fmt.Sprintf("%v–%v", lo, hi)
		if zeroOK {
			r = "0 or " + r
		}
		return machBad(field, d, r)
	}
	return nil
}

func machCheckInt(field string, v, lo, hi int, what string) error {
	if v < lo || v > hi {
		if what == "" {
			what = fmt.Sprintf("%d–%d", lo, hi)
		}
		return machBad(field, v, what)
	}
	return nil
}

// Validate reports the first field whose value is out of range, as a
// *PolicyError naming the field, the value and the allowed range (it wraps
// ErrInvalidPolicy). It does not apply the record-service style limits;
// see ValidateRecordService.
func (p Policy) Validate() error {
	if err := machCheckDur("interval", p.Interval, MinInterval, MaxInterval, false); err != nil {
		return err
	}
	if p.Timeout <= 0 || p.Timeout > p.Interval {
		return machBad("timeout", p.Timeout, fmt.Sprintf("> 0 and ≤ interval (%v)", p.Interval))
	}
	if err := machCheckInt("criticalThreshold", p.CriticalThreshold, 1, MaxThreshold, ""); err != nil {
		return err
	}
	if err := machCheckInt("warningThreshold", p.WarningThreshold, 1, p.CriticalThreshold,
		fmt.Sprintf("1–criticalThreshold (%d)", p.CriticalThreshold)); err != nil {
		return err
	}
	if err := machCheckInt("passingThreshold", p.PassingThreshold, 1, MaxThreshold, ""); err != nil {
		return err
	}
	if err := machCheckInt("warningExitThreshold", p.WarningExitThreshold, 1, MaxThreshold, ""); err != nil {
		return err
	}
	if err := machCheckInt("failureResetThreshold", p.FailureResetThreshold, 1, MaxThreshold, ""); err != nil {
		return err
	}
	if p.InitialState != Passing && p.InitialState != Critical {
		return machBad("initialState", p.InitialState, `"passing" or "critical"`)
	}
	switch p.Schedule {
	case ScheduleRecordService:
		if err := machCheckDur("maxBackoff", p.MaxBackoff, p.Interval.D(), MaxInterval, false); err != nil {
			return err
		}
	case ScheduleEnvoy:
		if p.MaxBackoff < 0 || p.MaxBackoff.D() > MaxInterval {
			return machBad("maxBackoff", p.MaxBackoff, fmt.Sprintf("0–%v (unused by the envoy schedule)", MaxInterval))
		}
	default:
		return machBad("schedule", p.Schedule, `"record-service" or "envoy"`)
	}
	for _, f := range []struct {
		name string
		d    Duration
	}{
		{"unhealthyInterval", p.UnhealthyInterval},
		{"unhealthyEdgeInterval", p.UnhealthyEdgeInterval},
		{"healthyEdgeInterval", p.HealthyEdgeInterval},
	} {
		if err := machCheckDur(f.name, f.d, MinInterval, MaxInterval, true); err != nil {
			return err
		}
	}
	if err := machCheckDur("initialJitter", p.InitialJitter, 0, MaxInterval, false); err != nil {
		return err
	}
	if err := machCheckDur("intervalJitter", p.IntervalJitter, 0, MaxInterval, false); err != nil {
		return err
	}
	// NaN fails both comparisons, so test for the allowed range positively.
	if !(p.IntervalJitterPercent >= 0 && p.IntervalJitterPercent <= 100) {
		return machBad("intervalJitterPercent", p.IntervalJitterPercent, "0–100")
	}
	return nil
}

// Record-service style limits, enforced by ValidateRecordService.
const (
	RecordServiceMinInterval = 10 * time.Second
	RecordServiceMaxInterval = 300 * time.Second
	RecordServiceMinTimeout  = 100 * time.Millisecond
	RecordServiceMaxTimeout  = 3 * time.Second
)

// ValidateRecordService runs Validate and then the record service's own
// ranges: interval 10–300s and timeout 0.1–3.0s. Configs that declare the
// record-service style (gslbd's records) call it instead of Validate.
func (p Policy) ValidateRecordService() error {
	if err := p.Validate(); err != nil {
		return err
	}
	if err := machCheckDur("interval", p.Interval, RecordServiceMinInterval, RecordServiceMaxInterval, false); err != nil {
		return err
	}
	return machCheckDur("timeout", p.Timeout, RecordServiceMinTimeout, RecordServiceMaxTimeout, false)
}
