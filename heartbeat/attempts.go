package heartbeat

import (
	"time"

	"github.com/gslbkit/gslb/internal/backoff"
)

// Write attempts within one reconcile interval.
//
// A scope makes up to MaxAttempts attempts per interval for a normal beat,
// RetryBackoff apart (jittered), and up to SelfHealAttempts for a
// self-heal beat, at most ReconcileInterval / SelfHealAttempts apart. The
// limit is the one of the beat being attempted; attempts already made in
// the interval count towards it. Every attempt starts within the interval
// and the first success ends it, so at most one write per scope per
// interval lands.
//
// Why SelfHealAttempts defaults to 7. The throttle pattern the package is
// tested against (TestThrottlePatternNoPeerSeesStale) rejects
// every write for 15 s, then 2 of every 3 writes for 5 minutes; no peer may
// see the cluster stale, with clocks up to SkewTolerance (5 s) ahead of the
// publisher's. A peer 5 s ahead sees a normal beat stamped L stale once
// real time passes L + HealthyDuration + SkewTolerance − 5 s = L + 30 s, so
// the next beat (normal or self-heal) must land within 30 s of the last.
// Defaults: interval 10 s, self-heal threshold 30 − 2 × 10 = 10 s,
// RetryBackoff 3 s, jitter 10 % (delays up to 10 % shorter). With N
// self-heal attempts their delay is d ∈ [0.9 × 10/N, 10/N] s (10/N < 3 s for
// N ≥ 4).
//
// Times relative to L, the last beat before the outage. Every write before
// the outage lands, at its tick's first attempt, so L is a tick and the
// outage starts in (L, L+10] — at any instant — and ends at E ∈ (L+15,
// L+25]. Whatever the phase of the 2-of-3 counter, of the writes from E on
// the first or second or third lands: the beat lands by w3, the third
// attempt at or after E. Attempts are self-heal attempts once their beat's
// age exceeds 10 s: tick L+10's first attempt (age exactly 10 s) is
// normal and fails; every later one is a self-heal attempt.
//
//   - E ≤ L+20. Tick L+10 attempts at +10, at +12.7…13 (normal delay), then
//     every d until its Nth attempt or the deadline; its last attempt is no
//     more than d before L+20 (for N = 7: the 7th starts at ≥ 12.7 + 5 ×
//     1.286 = 19.13, or is not made because it would start after 20). From
//     L+12.7 on, attempts are at most 10/N apart, and E > L+15, so w3 ≤
//     E + 3 × 10/N ≤ L+24.3 for N = 7.
//   - L+20 < E ≤ L+25. Tick L+20 is all self-heal: attempts at L+20 plus
//     0, 1, … N−1 delays; (N−1) × 10/N < 10 s, so all N are made. Its third
//     to last starts at ≥ L+20 + (N−3) × 0.9 × 10/N, which for N = 7 is
//     L+25.14 ≥ E: three attempts of tick L+20 come at or after E, and w3 is
//     no later than its last, L+20 + 6 × 10/7 = L+28.57.
//
// So with N = 7 the longest gap between two landed beats is 28.6 s < 30 s.
// With N = 6 the third to last may start at L+20 + 3 × 1.5 = L+24.5 < E,
// w3 is then tick L+30's first attempt and the gap is exactly 30 s, no
// margin for a peer 5 s ahead (N = 5 likewise); with N = 4 the second to
// last may start at L+24.5 and the gap exceeds 30 s; with the old three
// attempts the worst gap is 33 s.
//
// Once a beat has landed the rest is easy: a self-heal beat is fresh for
// 3 more minutes, and in the 2-of-3 phase every tick's normal attempts
// (0, 3, 6 s) land one beat, at most 10.6 s after the last.

// retryBackoff returns the back-off schedule between normal attempts.
func (c Config) retryBackoff() backoff.Exponential {
	return backoff.Exponential{Base: c.RetryBackoff, Factor: c.RetryFactor, Jitter: c.RetryJitter}
}

// attemptsSpan is the longest time from the first normal attempt to the
// start of the last.
func (c Config) attemptsSpan() time.Duration {
	b := c.retryBackoff()
	var total time.Duration
	for i := 0; i < c.MaxAttempts-1; i++ {
		total += b.BaseDelay(i)
	}
	return total
}

// attemptPolicy is one scope's attempt schedule within an interval. It is
// a pure value.
type attemptPolicy struct {
	normal   backoff.Exponential // between normal attempts
	selfHeal backoff.Exponential // between self-heal attempts: capped at interval / SelfHealAttempts
	// maxNormal and maxSelfHeal are the attempts allowed per interval.
	maxNormal, maxSelfHeal int
}

// attempts returns the attempt schedule of a scope reconciling every interval.
func (c Config) attempts(interval time.Duration) attemptPolicy {
	p := attemptPolicy{normal: c.retryBackoff(), maxNormal: c.MaxAttempts, maxSelfHeal: c.SelfHealAttempts}
	p.selfHeal = p.normal
	if c.SelfHealAttempts > 0 {
		p.selfHeal.Max = interval / time.Duration(c.SelfHealAttempts)
	}
	return p
}

// limit returns how many attempts per interval a beat of that kind allows.
func (p attemptPolicy) limit(selfHeal bool) int {
	if selfHeal {
		return p.maxSelfHeal
	}
	return p.maxNormal
}

// delay returns the jittered delay after failed attempt n (1-based) of a
// beat of that kind: the back-off schedule's, capped at interval /
// SelfHealAttempts for self-heal beats, then jittered.
func (p attemptPolicy) delay(n int, selfHeal bool, r backoff.Rand) time.Duration {
	if selfHeal {
		return p.selfHeal.Delay(n-1, r)
	}
	return p.normal.Delay(n-1, r)
}
