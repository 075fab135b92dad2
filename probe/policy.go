package probe

import (
	"errors"
	"fmt"
	"github.com/gslbkit/gslb/internal/fielderr"
	"time"

	"github.com/gslbkit/gslb/internal/backoff"
)

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

// ErrInvalidPolicy is wrapped by every error Policy.Validate returns (a
// *FieldError).
var ErrInvalidPolicy = errors.New("probe: invalid policy")

// Policy is the per-target health policy: the thresholds that move a
// Machine between states and the schedule that spaces its probes.
//
// Start from DefaultPolicy or a named preset (Envoy, RecordService,
// ProxySync, Consul, Route53, Gdnsd) and change fields. A field left at
// zero takes its default (so the zero Policy is DefaultPolicy), except the
// fields whose zero already means something: the envoy-schedule intervals
// (0 = Interval), the jitters (0 = none) and the booleans. A Policy is a
// plain value, safe to copy; Validate reports the first bad field. JSON uses the camelCase names below; criticalThreshold may also
// be spelled unhealthyThreshold and passingThreshold healthyThreshold
// (Envoy Gateway's names), but not both spellings of one knob at once.
//
// A Policy judges one target's probe results; a failover.Decider (a
// failover policy) turns the health of many targets into DNS answers.
type Policy struct {
	// Interval is the delay between probes of a passing target (the base
	// of every schedule). Range MinInterval–MaxInterval. Default (also 0)
	// 10s.
	Interval time.Duration `json:"interval"`
	// Timeout bounds each probe: the Monitor gives Probe a context with
	// this deadline. Range (0, Interval]. Default (also 0) 1s, or Interval
	// when that is shorter.
	Timeout time.Duration `json:"timeout"`

	// WarningThreshold is the number of consecutive failures that moves a
	// passing target to warning (still served). Range 1–criticalThreshold;
	// equal to criticalThreshold means the target never shows warning.
	// Default (also 0) 1.
	WarningThreshold int `json:"warningThreshold"`
	// CriticalThreshold is the number of consecutive failures that moves a
	// passing or warning target to critical (not served). Range
	// warningThreshold–MaxThreshold. Default (also 0) 3. JSON alias
	// unhealthyThreshold.
	CriticalThreshold int `json:"criticalThreshold"`
	// PassingThreshold is the number of consecutive successes that moves a
	// critical target back to passing; with more than 1, the first success
	// moves it to recovery (not served) until the count is reached. Range
	// 1–MaxThreshold. Default (also 0) 1. JSON alias healthyThreshold.
	PassingThreshold int `json:"passingThreshold"`
	// WarningExitThreshold is the number of consecutive successes that
	// returns a warning target to passing (Consul's successBeforePassing).
	// Range 1–MaxThreshold. Default (also 0) 1.
	WarningExitThreshold int `json:"warningExitThreshold"`
	// FailureResetThreshold is the number of consecutive successes after
	// which the failure count is reset (gdnsd's ok_thresh). Until then
	// failures keep accumulating across sparse successes. Range
	// 1–MaxThreshold. Default (also 0) 1: every success resets the failure
	// count.
	FailureResetThreshold int `json:"failureResetThreshold"`

	// InitialState is the state of a new target before its first result:
	// Passing (optimistic, served) or Critical (nothing served until
	// proven). JSON "passing" or "critical". Default (also Unknown, the
	// zero State) Passing.
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
	// may be 0) for ScheduleEnvoy. Default (also 0 with the record-service
	// schedule) 300s, or Interval when that is longer.
	MaxBackoff time.Duration `json:"maxBackoff,omitempty"`
	// UnhealthyInterval is the Envoy-schedule delay while the target is not
	// served. 0 means Interval; else MinInterval–MaxInterval.
	UnhealthyInterval time.Duration `json:"unhealthyInterval,omitempty"`
	// UnhealthyEdgeInterval is the Envoy-schedule delay after a failure
	// that left the target served (a change toward critical is pending).
	// 0 means Interval; else MinInterval–MaxInterval.
	UnhealthyEdgeInterval time.Duration `json:"unhealthyEdgeInterval,omitempty"`
	// HealthyEdgeInterval is the Envoy-schedule delay after a success that
	// left the target unserved in recovery (a change toward passing is
	// pending). 0 means Interval; else MinInterval–MaxInterval.
	HealthyEdgeInterval time.Duration `json:"healthyEdgeInterval,omitempty"`

	// InitialJitter delays a new target's first probe by a uniform random
	// amount in [0, InitialJitter); 0 probes at once. The Monitor applies
	// it. Range 0–MaxInterval. Default 0.
	InitialJitter time.Duration `json:"initialJitter,omitempty"`
	// IntervalJitter adds a uniform random amount in [0, IntervalJitter)
	// to every delay. The Monitor applies it. Range 0–MaxInterval.
	// Default 0.
	IntervalJitter time.Duration `json:"intervalJitter,omitempty"`
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
		Interval:              10 * time.Second,
		Timeout:               time.Second,
		WarningThreshold:      1,
		CriticalThreshold:     3,
		PassingThreshold:      1,
		WarningExitThreshold:  1,
		FailureResetThreshold: 1,
		InitialState:          Passing,
		Schedule:              ScheduleRecordService,
		MaxBackoff:            300 * time.Second,
	}
}

// withDefaults returns p with every zero field that takes a default set to
// it (see Policy).
func (p Policy) withDefaults() Policy {
	d := DefaultPolicy()
	if p.Interval == 0 {
		p.Interval = d.Interval
	}
	if p.Timeout == 0 {
		p.Timeout = min(d.Timeout, p.Interval)
	}
	for _, f := range []struct {
		v *int
		d int
	}{
		{&p.WarningThreshold, d.WarningThreshold},
		{&p.CriticalThreshold, d.CriticalThreshold},
		{&p.PassingThreshold, d.PassingThreshold},
		{&p.WarningExitThreshold, d.WarningExitThreshold},
		{&p.FailureResetThreshold, d.FailureResetThreshold},
	} {
		if *f.v == 0 {
			*f.v = f.d
		}
	}
	if p.InitialState == Unknown {
		p.InitialState = d.InitialState
	}
	if p.MaxBackoff == 0 && p.Schedule == ScheduleRecordService {
		p.MaxBackoff = max(d.MaxBackoff, p.Interval)
	}
	return p
}

// MaxJitter returns the most jitter the Monitor adds to a delay d the
// machine returns: IntervalJitter plus d × IntervalJitterPercent / 100. The
// jitter drawn is uniform in [0, MaxJitter(d)).
func (p Policy) MaxJitter(d time.Duration) time.Duration { return p.jitter().Max(d) }

// jitter is the per-interval jitter as the back-off helper's type.
func (p Policy) jitter() backoff.Jitter {
	return backoff.Jitter{Absolute: p.IntervalJitter, Percent: p.IntervalJitterPercent}
}

func machBad(field string, value any, allowed string) error {
	return fieldErr(ErrInvalidPolicy, field, value, allowed)
}

func machCheckDur(field string, d time.Duration, lo, hi time.Duration, zeroOK bool) error {
	if zeroOK && d == 0 {
		return nil
	}
	if d < lo || d > hi {
		r := fielderr.DurationRange(lo, hi)
		if zeroOK {
			r += ", or 0 for the default"
		}
		return machBad(field, d, r)
	}
	return nil
}

func machCheckInt(field string, v, lo, hi int, what string) error {
	if v < lo || v > hi {
		if what == "" {
			what = fielderr.Range(lo, hi)
		}
		return machBad(field, v, what)
	}
	return nil
}

// Validate reports the first field whose value is out of range, as a
// *FieldError naming the field, the value and the allowed range (it wraps
// ErrInvalidPolicy). Zero fields that take a default are checked with
// their default. It does not apply the record-service style limits; see
// ValidateRecordService.
func (p Policy) Validate() error {
	p = p.withDefaults()
	if err := machCheckDur("interval", p.Interval, MinInterval, MaxInterval, false); err != nil {
		return err
	}
	if p.Timeout <= 0 || p.Timeout > p.Interval {
		return machBad("timeout", p.Timeout, "[1ns, interval ("+fielderr.Duration(p.Interval)+")]")
	}
	if err := machCheckInt("criticalThreshold", p.CriticalThreshold, 1, MaxThreshold, ""); err != nil {
		return err
	}
	if p.WarningThreshold < 1 || p.WarningThreshold > p.CriticalThreshold {
		return machBad("warningThreshold", p.WarningThreshold, fmt.Sprintf("[1, criticalThreshold (%d)]", p.CriticalThreshold))
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
		return machBad("initialState", p.InitialState, fielderr.OneOf("passing", "critical"))
	}
	switch p.Schedule {
	case ScheduleRecordService:
		if err := machCheckDur("maxBackoff", p.MaxBackoff, p.Interval, MaxInterval, false); err != nil {
			return err
		}
	case ScheduleEnvoy:
		if p.MaxBackoff < 0 || p.MaxBackoff > MaxInterval {
			return machBad("maxBackoff", p.MaxBackoff, fielderr.DurationRange(0, MaxInterval)+" (unused by the envoy schedule)")
		}
	default:
		return machBad("schedule", p.Schedule, fielderr.OneOf(ScheduleRecordService.String(), ScheduleEnvoy.String()))
	}
	for _, f := range []struct {
		name string
		d    time.Duration
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
		return machBad("intervalJitterPercent", p.IntervalJitterPercent, fielderr.Range(0, 100))
	}
	return nil
}

// Record-service style limits, enforced by ValidateRecordService.
const (
	recordServiceMinInterval = 10 * time.Second
	recordServiceMaxInterval = 300 * time.Second
	recordServiceMinTimeout  = 100 * time.Millisecond
	recordServiceMaxTimeout  = 3 * time.Second
)

// ValidateRecordService runs Validate and then the record service's own
// ranges: interval 10–300s and timeout 0.1–3.0s. Configs that declare the
// record-service style (gslbd's records) call it instead of Validate.
func (p Policy) ValidateRecordService() error {
	if err := p.Validate(); err != nil {
		return err
	}
	p = p.withDefaults()
	if err := machCheckDur("interval", p.Interval, recordServiceMinInterval, recordServiceMaxInterval, false); err != nil {
		return err
	}
	return machCheckDur("timeout", p.Timeout, recordServiceMinTimeout, recordServiceMaxTimeout, false)
}
