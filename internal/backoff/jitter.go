package backoff

import "time"

// Jitter describes the random time added to a probe interval, Envoy style:
// an absolute part and a percentage of the interval, added together.
type Jitter struct {
	// Absolute is the largest absolute amount added (uniform in [0, Absolute)).
	Absolute time.Duration
	// Percent is the largest share of the interval added, 0–100
	// (uniform in [0, interval × Percent / 100)).
	Percent float64
}

// Max returns the largest amount Apply can add to interval.
func (j Jitter) Max(interval time.Duration) time.Duration {
	m := time.Duration(0)
	if j.Absolute > 0 {
		m += j.Absolute
	}
	if j.Percent > 0 && interval > 0 {
		m += time.Duration(float64(interval) * j.Percent / 100)
	}
	return m
}

// Apply returns interval plus a random amount in [0, Max(interval)). With a
// nil r, or no jitter configured, it returns interval unchanged.
func (j Jitter) Apply(interval time.Duration, r Rand) time.Duration {
	if r == nil {
		return interval
	}
	d := interval
	if j.Absolute > 0 {
		d += time.Duration(r.Float64() * float64(j.Absolute))
	}
	if j.Percent > 0 && interval > 0 {
		d += time.Duration(r.Float64() * float64(interval) * j.Percent / 100)
	}
	return d
}

// Uniform returns a random duration in [0, max); 0 when max ≤ 0 or r is nil.
func Uniform(max time.Duration, r Rand) time.Duration {
	if max <= 0 || r == nil {
		return 0
	}
	return time.Duration(r.Float64() * float64(max))
}
