package backoff

import (
	"math"
	"time"
)

// Rand is the randomness the helpers need: a float in [0, 1). *math/rand/v2.Rand
// satisfies it through its Float64 method.
type Rand interface {
	Float64() float64
}

// Exponential describes capped exponential back-off. The zero value never
// waits; DefaultExponential is a sensible start for provider retries.
type Exponential struct {
	// Base is the delay before the first retry (attempt 0).
	Base time.Duration
	// Max caps every delay; 0 means no cap.
	Max time.Duration
	// Factor multiplies the delay per attempt; values below 1 are treated as 2.
	Factor float64
	// Jitter is the fraction of each delay that is randomised, in [0, 1]:
	// 0 gives exact delays, 1 gives "full jitter" (uniform in [0, d]),
	// 0.5 gives uniform in [d/2, d].
	Jitter float64
}

// DefaultExponential returns 100 ms doubling up to 10 s with half of each
// delay randomised.
func DefaultExponential() Exponential {
	return Exponential{Base: 100 * time.Millisecond, Max: 10 * time.Second, Factor: 2, Jitter: 0.5}
}

// BaseDelay returns the delay for attempt (0-based) before jitter is applied.
func (e Exponential) BaseDelay(attempt int) time.Duration {
	if e.Base <= 0 {
		return 0
	}
	if attempt < 0 {
		attempt = 0
	}
	f := e.Factor
	if f < 1 {
		f = 2
	}
	d := float64(e.Base) * math.Pow(f, float64(attempt))
	if e.Max > 0 && d > float64(e.Max) {
		return e.Max
	}
	if d > float64(math.MaxInt64) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(d)
}

// Delay returns the jittered delay for attempt (0-based). r may be nil when
// Jitter is 0.
func (e Exponential) Delay(attempt int, r Rand) time.Duration {
	d := e.BaseDelay(attempt)
	j := e.Jitter
	if j <= 0 || r == nil || d <= 0 {
		return d
	}
	if j > 1 {
		j = 1
	}
	fixed := float64(d) * (1 - j)
	return time.Duration(fixed + r.Float64()*float64(d)*j)
}

// Doubling returns base × 2^n capped at max, without floating point; it is
// the schedule the record-service preset uses while a target is critical.
// A non-positive max means no cap.
func Doubling(base time.Duration, n int, max time.Duration) time.Duration {
	if base <= 0 {
		return 0
	}
	d := base
	for i := 0; i < n; i++ {
		if max > 0 && d >= max {
			return max
		}
		if d > math.MaxInt64/2 {
			return time.Duration(math.MaxInt64)
		}
		d *= 2
	}
	if max > 0 && d > max {
		return max
	}
	return d
}
