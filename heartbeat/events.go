package heartbeat

import "time"

// Observer receives the events of publishers and readers. Observe is
// called from the goroutine that owns the state (a scope's publishing
// loop, or the goroutine calling Reader.Read), outside any lock, in the
// order things happened; it must return quickly and must not call back
// into the publisher or reader that emitted the event. A nil Observer
// means nobody listens.
type Observer interface {
	Observe(Event)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(Event)

// Observe calls f(e).
func (f ObserverFunc) Observe(e Event) { f(e) }

// Event is one of the event types of this package: BeatWritten,
// WriteFailed, OwnBeatRead, RecoveringChanged, PublishingChanged,
// BeatRejected, ClusterChanged, RegionChanged, FailoverChanged and
// ReadDone. Switch on the concrete type.
type Event interface {
	// When is the event's time (the publisher's or reader's clock).
	When() time.Time
}

// BeatWritten: a beat was accepted by the provider (counter "beats
// written"; with Beat.SelfHeal, "self-heal writes").
type BeatWritten struct {
	// At is the publisher's or reader's time of the event.
	At time.Time
	// Scope is the scope the event concerns.
	Scope Scope
	// Beat is the beat written (KeyID set when signed).
	Beat Beat
	// Attempt is the 1-based attempt within the interval that succeeded.
	Attempt int
}

// WriteFailed: one write attempt failed (counter "write failures").
type WriteFailed struct {
	// At is the publisher's or reader's time of the event.
	At time.Time
	// Scope is the scope the event concerns.
	Scope Scope
	// Attempt is the 1-based attempt within the interval.
	Attempt int
	// SelfHeal is true when the beat being written was a self-heal beat.
	SelfHeal bool
	// Throttled is true when the provider asked to slow down (an error
	// answering Throttled() true, or an HTTP 429).
	Throttled bool
	// Retrying is true when another attempt follows within this interval.
	Retrying bool
	// Err is the provider's error.
	Err error
}

// OwnBeatRead: the publisher read its own beat back. Found is false when
// no valid beat of its own was at its name (Err then says why, when the
// record was there but invalid, or when reading failed).
type OwnBeatRead struct {
	// At is the publisher's or reader's time of the event.
	At time.Time
	// Scope is the scope the event concerns.
	Scope Scope
	// Found is true when a valid beat of this publisher was at its name.
	Found bool
	// Beat is the beat read back, when Found.
	Beat Beat
	// Age is At − Beat.Time (negative for a self-heal beat), when Found.
	Age time.Duration
	// Err is the read or verification error, if any.
	Err error
}

// RecoveringChanged: a scope started or stopped "recovering from rate
// limiting" (gauge *_is_recovering_from_rate_limiting per scope).
type RecoveringChanged struct {
	// At is the publisher's or reader's time of the event.
	At time.Time
	// Scope is the scope the event concerns.
	Scope Scope
	// Recovering is the new state.
	Recovering bool
}

// PublishingChanged: the publisher started or stopped writing beats in a
// scope because the local verdict changed (or at the first interval).
type PublishingChanged struct {
	// At is the publisher's or reader's time of the event.
	At time.Time
	// Scope is the scope the event concerns.
	Scope Scope
	// Publishing is true while beats are written (the verdict is healthy).
	Publishing bool
}

// BeatRejected: a reader found a record at a beat name whose value it
// could not accept (counter of rejected beats, by Reason: malformed,
// bad-signature, or future for a beat stamped too far ahead; Err says
// exactly why).
type BeatRejected struct {
	// At is the reader's time of the read.
	At time.Time
	// Scope is the scope read.
	Scope Scope
	// Cluster is the cluster named by the record.
	Cluster string
	// Reason is ReasonMalformed, ReasonBadSignature or ReasonFuture.
	Reason Reason
	// Err is the *BeatError saying exactly why.
	Err error
}

// ClusterChanged: a cluster became fresh or stale in a reader's view, or
// was seen for the first time, or was forgotten (gauge "cluster healthy").
type ClusterChanged struct {
	// At is the reader's time of the read.
	At time.Time
	// Scope is the scope read.
	Scope Scope
	// Status is the cluster's new status.
	Status ClusterStatus
	// Forgotten is true when the reader dropped the cluster (missing for
	// longer than ForgetAfter).
	Forgotten bool
}

// RegionChanged: a region became healthy or unhealthy in a reader's view,
// or was seen for the first time, or disappeared (gauge "region healthy").
type RegionChanged struct {
	// At is the reader's time of the read.
	At time.Time
	// Scope is the scope read.
	Scope Scope
	// Status is the region's new status.
	Status RegionStatus
	// Gone is true when the region has no known clusters any more.
	Gone bool
}

// FailoverChanged: failover for a region started or ended (gauge
// "failover in progress"): the region is unhealthy while another region
// is healthy.
type FailoverChanged struct {
	// At is the publisher's or reader's time of the event.
	At time.Time
	// Scope is the scope the event concerns.
	Scope Scope
	// Region is the region failing over (or back).
	Region string
	// InProgress is true while the region's traffic is served elsewhere.
	InProgress bool
}

// ReadDone: a reader finished one read of the zone (counters of peers
// seen fresh and stale). Err is set when the zone could not be read; the
// reader then keeps judging the beats it last saw.
type ReadDone struct {
	// At is the publisher's or reader's time of the event.
	At time.Time
	// Scope is the scope the event concerns.
	Scope Scope
	// Fresh and Stale count clusters; Rejected counts records rejected in this read.
	Fresh, Stale, Rejected int
	// Err is the read error, if any.
	Err error
}

// When returns e.At.
func (e BeatWritten) When() time.Time { return e.At }

// When returns e.At.
func (e WriteFailed) When() time.Time { return e.At }

// When returns e.At.
func (e OwnBeatRead) When() time.Time { return e.At }

// When returns e.At.
func (e RecoveringChanged) When() time.Time { return e.At }

// When returns e.At.
func (e PublishingChanged) When() time.Time { return e.At }

// When returns e.At.
func (e BeatRejected) When() time.Time { return e.At }

// When returns e.At.
func (e ClusterChanged) When() time.Time { return e.At }

// When returns e.At.
func (e RegionChanged) When() time.Time { return e.At }

// When returns e.At.
func (e FailoverChanged) When() time.Time { return e.At }

// When returns e.At.
func (e ReadDone) When() time.Time { return e.At }
