package heartbeat

import "time"

// Healer is the pure self-heal rule of one scope: it remembers what the
// publisher last knows of its own beat and plans the timestamp of the
// next one. It reads no clock, does no I/O and is not safe for concurrent
// use (one publisher goroutine owns it).
//
// The rule: while the publisher's own beat (as last read back, or as last
// written successfully when the read-back failed) is no older than
// Rules.SelfHealThreshold, beats are normal (stamped now). Once it is
// older, the next beat is a self-heal beat stamped now + SelfHealInterval
// and the scope is "recovering from rate limiting" until a normal beat the
// publisher wrote has been read back.
//
// While recovering, the publisher keeps writing normal beats (a self-heal
// beat in the zone is younger than the threshold, so plans are normal);
// the first that lands replaces the self-heal beat and ends recovery, and
// protection rests on the threshold again. So peers never see a throttled
// cluster stale as long as some write lands within HealthyDuration (less
// the peers' clock lead) of the last one, and once a self-heal beat has
// landed, for SelfHealInterval more. Under throttling so heavy that writes
// land less often than that, each normal beat that lands opens a new window
// in which peers may see a short stale.
type Healer struct {
	rules Rules
	// own is the timestamp of the beat we believe is in the zone.
	own    time.Time
	hasOwn bool
	// written is the normal beat last written successfully, awaiting read-back.
	written    time.Time
	hasWritten bool
	recovering bool
}

// NewHealer returns a Healer for rules, knowing nothing of its own beat
// (its first plan is a normal beat) and not recovering.
func NewHealer(rules Rules) *Healer { return &Healer{rules: rules} }

// Plan is the healer's decision for the next write.
type Plan struct {
	// Time is the timestamp to write: now, or now + SelfHealInterval.
	Time time.Time
	// SelfHeal is true for a self-heal beat.
	SelfHeal bool
}

// Plan returns the beat to write at now. Planning a self-heal beat puts
// the healer in the recovering state; changed reports whether that state
// changed.
func (h *Healer) Plan(now time.Time) (p Plan, changed bool) {
	if h.needsSelfHeal(now) {
		changed = !h.recovering
		h.recovering = true
		return Plan{Time: h.rules.SelfHealTime(now), SelfHeal: true}, changed
	}
	return Plan{Time: now}, false
}

// needsSelfHeal reports whether a beat planned at now would be a self-heal
// beat; it changes nothing.
func (h *Healer) needsSelfHeal(now time.Time) bool {
	return h.hasOwn && h.rules.NeedsSelfHeal(h.own, now)
}

// Written records that a beat stamped ts (a self-heal beat when selfHeal)
// was accepted by the provider. Until a read-back says otherwise, it is
// taken to be the beat in the zone.
func (h *Healer) Written(ts time.Time, selfHeal bool) {
	ts = ts.Truncate(time.Millisecond)
	h.own, h.hasOwn = ts, true
	h.hasWritten = !selfHeal
	if !selfHeal {
		h.written = ts
	}
}

// ReadBack records what reading the zone found at the publisher's own
// name: found is false when no valid beat of ours is there (absent,
// malformed, or failing verification); ts and selfHeal describe the beat
// otherwise. Reading back a normal beat that this publisher wrote ends
// recovery; changed reports whether the recovering state changed.
//
// A missing or invalid own beat does not by itself start a self-heal (a
// self-heal beat would claim more than a normal one); the next plan is a
// normal beat.
func (h *Healer) ReadBack(ts time.Time, selfHeal, found bool) (changed bool) {
	if !found {
		h.hasOwn = false
		return false
	}
	h.own, h.hasOwn = ts, true
	if !selfHeal && h.hasWritten && ts.Equal(h.written) {
		h.hasWritten = false
		if h.recovering {
			h.recovering = false
			return true
		}
	}
	return false
}

// Reset forgets the healer's own beat and ends recovery, as when the
// publisher stops or starts publishing because the local verdict changed:
// a beat left stale by an unhealthy spell is not a throttle, and the next
// plan is a normal beat. It reports whether the recovering state changed.
func (h *Healer) Reset() (changed bool) {
	changed = h.recovering
	*h = Healer{rules: h.rules}
	return changed
}

// Recovering reports whether the scope is recovering from rate limiting:
// a self-heal was needed and no normal beat has since been read back.
func (h *Healer) Recovering() bool { return h.recovering }

// Own returns the timestamp of the beat the healer believes is in the
// zone, and false when it knows of none.
func (h *Healer) Own() (time.Time, bool) { return h.own, h.hasOwn }
