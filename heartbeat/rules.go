package heartbeat

import (
	"fmt"
	"github.com/gslbkit/gslb/internal/fielderr"
	"time"

	"github.com/gslbkit/gslb/internal/jsontime"
)

// Duration is a time.Duration that reads and writes "3s" in JSON.
// Rules are the timings of one scope, shared by the publisher that writes
// beats and the readers that judge them. All rules are pure functions of
// a beat and the time given; none reads a clock.
//
// The zero value is not usable; start from DefaultRules.
type Rules struct {
	// ReconcileInterval is how often a publisher writes its beat and a
	// reader reads the zone. Default 10 s; allowed 100 ms – 10 min.
	ReconcileInterval time.Duration `json:"reconcileInterval"`
	// HealthyDuration is how long a beat stays fresh after its timestamp
	// (the reference's localTXTRecordHealthyDurationSeconds /
	// globalTXTRecordHealthyDurationSeconds). Default 30 s; allowed 1 s – 1 h,
	// and more than SelfHealLeadIntervals × ReconcileInterval.
	HealthyDuration time.Duration `json:"healthyDuration"`
	// SkewTolerance absorbs clock differences between clusters: a beat is
	// fresh while now − timestamp ≤ HealthyDuration + SkewTolerance, and
	// may be up to SelfHealInterval + SkewTolerance in the future. Default
	// 5 s; allowed 0 – HealthyDuration.
	SkewTolerance time.Duration `json:"skewTolerance"`
	// SelfHealInterval is how far in the future a self-heal beat is
	// stamped. Default 3 min; allowed 1 s – 24 h.
	SelfHealInterval time.Duration `json:"selfHealInterval"`
	// SelfHealLeadIntervals is how many reconcile intervals before its own
	// beat could go stale a publisher starts self-healing: it self-heals once
	// its read-back beat is older than HealthyDuration −
	// SelfHealLeadIntervals × ReconcileInterval. Default 2, so a write
	// throttle causes no failover at all; 0 behaves like the reference
	// controller (self-heal only once the beat is already stale). Allowed 0–10.
	SelfHealLeadIntervals int `json:"selfHealLeadIntervals"`
}

// DefaultRules returns the defaults: reconcile every 10 s, fresh for 30 s,
// 5 s of skew tolerance, self-heal 3 min ahead, starting 2 intervals early.
func DefaultRules() Rules {
	return Rules{
		ReconcileInterval:     10 * time.Second,
		HealthyDuration:       30 * time.Second,
		SkewTolerance:         5 * time.Second,
		SelfHealInterval:      3 * time.Minute,
		SelfHealLeadIntervals: 2,
	}
}

// ReferenceRules returns the heartbeat controller's own behaviour: the
// defaults, but self-healing only once the publisher's beat is already
// stale (SelfHealLeadIntervals 0), so peers may briefly see a throttled
// cluster stale.
func ReferenceRules() Rules {
	r := DefaultRules()
	r.SelfHealLeadIntervals = 0
	return r
}

// FastRules returns timings for the embedded zone, where writes are cheap:
// reconcile every 2 s, fresh for 8 s, 1 s of skew, self-heal 1 min ahead.
func FastRules() Rules {
	r := DefaultRules()
	r.ReconcileInterval = 2 * time.Second
	r.HealthyDuration = 8 * time.Second
	r.SkewTolerance = time.Second
	r.SelfHealInterval = time.Minute
	return r
}

// withDefaults fills the zero durations that take a default
// (ReconcileInterval, HealthyDuration, SelfHealInterval); SkewTolerance 0
// (no tolerance) and SelfHealLeadIntervals 0 (self-heal once stale) mean
// what they say.
func (r Rules) withDefaults() Rules {
	d := DefaultRules()
	if r.ReconcileInterval == 0 {
		r.ReconcileInterval = d.ReconcileInterval
	}
	if r.HealthyDuration == 0 {
		r.HealthyDuration = d.HealthyDuration
	}
	if r.SelfHealInterval == 0 {
		r.SelfHealInterval = d.SelfHealInterval
	}
	return r
}

// validate reports the first field out of range, naming it, its value and
// the allowed range; zero fields take their defaults first. prefix (e.g.
// "local.") is prepended to field names.
func (r Rules) validate(prefix string) error {
	r = r.withDefaults()
	in := func(name string, v, lo, hi time.Duration) error {
		if v < lo || v > hi {
			return fieldErr(prefix+name, v, fielderr.DurationRange(lo, hi))
		}
		return nil
	}
	if err := in("reconcileInterval", r.ReconcileInterval, 100*time.Millisecond, 10*time.Minute); err != nil {
		return err
	}
	if err := in("healthyDuration", r.HealthyDuration, time.Second, time.Hour); err != nil {
		return err
	}
	if err := in("skewTolerance", r.SkewTolerance, 0, r.HealthyDuration); err != nil {
		return err
	}
	if err := in("selfHealInterval", r.SelfHealInterval, time.Second, 24*time.Hour); err != nil {
		return err
	}
	if r.SelfHealLeadIntervals < 0 || r.SelfHealLeadIntervals > 10 {
		return fieldErr(prefix+"selfHealLeadIntervals", r.SelfHealLeadIntervals, fielderr.Range(0, 10))
	}
	if r.SelfHealThreshold() <= 0 {
		return fieldErr(prefix+"selfHealLeadIntervals", r.SelfHealLeadIntervals, fmt.Sprintf("[0, %d]: the self-heal threshold healthyDuration − selfHealLeadIntervals × reconcileInterval (%v) must be positive",
			(r.HealthyDuration-1)/r.ReconcileInterval, r.SelfHealThreshold()))
	}
	return nil
}

// Validate reports the first field out of range, naming it, its value and
// the allowed range.
func (r Rules) Validate() error { return r.validate("") }

// SelfHealThreshold is the age of its own read-back beat beyond which a
// publisher self-heals: HealthyDuration − SelfHealLeadIntervals ×
// ReconcileInterval (10 s by default: 30 s − 2 × 10 s).
func (r Rules) SelfHealThreshold() time.Duration {
	return r.HealthyDuration - time.Duration(r.SelfHealLeadIntervals)*r.ReconcileInterval
}

// StaleAt returns the first instant at which a beat stamped ts is stale:
// just after ts + HealthyDuration + SkewTolerance.
func (r Rules) StaleAt(ts time.Time) time.Time {
	return ts.Add(r.HealthyDuration + r.SkewTolerance)
}

// DetectionBound returns the longest time from a dead publisher's last
// normal beat until a reader that reads every readInterval sees its cluster
// stale: HealthyDuration + SkewTolerance + readInterval, plus
// SelfHealInterval when selfHeal (its last beat was a self-heal beat).
// Time is counted on the reader's clock against the beat's timestamp; in
// real time a reader whose clock runs d behind the publisher's sees it d
// later, one running d ahead d earlier (never before HealthyDuration when
// d ≤ SkewTolerance).
func (r Rules) DetectionBound(selfHeal bool, readInterval time.Duration) time.Duration {
	d := r.HealthyDuration + r.SkewTolerance + readInterval
	if selfHeal {
		d += r.SelfHealInterval
	}
	return d
}

// Reason says why a cluster is not fresh.
type Reason uint8

const (
	// ReasonNone: the beat is fresh.
	ReasonNone Reason = iota
	// ReasonTooOld: the beat's timestamp is older than HealthyDuration + SkewTolerance.
	ReasonTooOld
	// ReasonFuture: the beat is stamped more than SelfHealInterval + SkewTolerance ahead.
	ReasonFuture
	// ReasonMalformed: the record's value is not a beat (truncated,
	// oversized, unknown version, bad field), or names another cluster.
	ReasonMalformed
	// ReasonBadSignature: a keyring is set and the beat is unsigned, signed
	// with an unknown key, or its signature does not match (forged or altered).
	ReasonBadSignature
	// ReasonMissing: the cluster was seen before and its record is gone.
	ReasonMissing
)

// String returns "fresh", "too-old", "future", "malformed", "bad-signature" or "missing".
func (r Reason) String() string {
	switch r {
	case ReasonNone:
		return "fresh"
	case ReasonTooOld:
		return "too-old"
	case ReasonFuture:
		return "future"
	case ReasonMalformed:
		return "malformed"
	case ReasonBadSignature:
		return "bad-signature"
	case ReasonMissing:
		return "missing"
	}
	return "unknown"
}

// Judgment is Rules.Judge's verdict on one beat at one instant: fresh or
// not, why, how old, and until when. A controller that feeds the failover
// package turns it into failover.Freshness: a beat judged fresh is
// failover.Fresh, one read and judged not fresh is failover.Stale, and a
// beat that could not be read at all is failover.FreshnessUnknown.
type Judgment struct {
	// Fresh is true when the beat keeps its cluster healthy.
	Fresh bool
	// Reason says why it is not fresh (ReasonNone when fresh).
	Reason Reason
	// Age is now − the beat's timestamp (negative for future beats).
	Age time.Duration
	// StaleAt is when the beat stops being fresh (see Rules.StaleAt).
	StaleAt time.Time
}

// Judge says whether a beat stamped ts is fresh at now: fresh while
// now − ts ≤ HealthyDuration + SkewTolerance and ts − now ≤
// SelfHealInterval + SkewTolerance. Judge is pure.
func (r Rules) Judge(ts, now time.Time) Judgment {
	f := Judgment{Age: now.Sub(ts), StaleAt: r.StaleAt(ts)}
	switch {
	case -f.Age > r.SelfHealInterval+r.SkewTolerance:
		f.Reason = ReasonFuture
	case f.Age > r.HealthyDuration+r.SkewTolerance:
		f.Reason = ReasonTooOld
	default:
		f.Fresh = true
	}
	return f
}

// NeedsSelfHeal reports whether a publisher whose own beat, as last read
// back (or last written), is stamped ts must make its next beat a self-heal
// beat at now: now − ts > SelfHealThreshold.
func (r Rules) NeedsSelfHeal(ts, now time.Time) bool {
	return now.Sub(ts) > r.SelfHealThreshold()
}

// SelfHealTime is the timestamp of a self-heal beat written at now:
// now + SelfHealInterval.
func (r Rules) SelfHealTime(now time.Time) time.Time {
	return now.Add(r.SelfHealInterval)
}

// MarshalJSON writes Rules with its durations as strings such as "10s".
func (c Rules) MarshalJSON() ([]byte, error) {
	type plain Rules
	return jsontime.Marshal(plain(c))
}

// UnmarshalJSON reads Rules, its durations as strings such as "10s" or as
// numbers of seconds. Unknown keys, and keys in the wrong case, are errors.
func (c *Rules) UnmarshalJSON(b []byte) error {
	type plain Rules
	return jsontime.Unmarshal(b, (*plain)(c))
}
