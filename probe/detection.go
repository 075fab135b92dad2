package probe

import (
	"math"
	"time"
)

// WorstCaseDetection returns the longest time, under policy p, from "the
// target dies" to "the machine stops serving it", probe timeouts and the
// largest jitter included. Other packages state their failover bounds
// through it (docs/semantics.md in the repository, "Failover time — one formula"). It returns 0 for a
// policy that fails Validate, and saturates at the largest time.Duration.
//
// The model, which the Monitor follows: a probe's Step.Next delay d runs
// from the start of that probe to the start of the next one, the Monitor
// adds at most J(d) = Policy.MaxJitter(d) to it, a probe returns within
// T = Timeout, and a result that arrives later than the next start is
// followed by the next probe at once; so consecutive probes start
// g(d) = max(d + J(d), T) apart at most. The worst case starts with the
// target passing with no failure counted, dying just after a probe
// started (that probe may still pass). Then c = CriticalThreshold probes
// must fail (a fail-now, or failures already counted, only make it
// sooner), and the last one may take T to do so. With I = Interval and
// w = WarningThreshold:
//
//	record service: w·g(I) + (c−w)·g(h) + T   where h = max(I/2, 1ms)
//	envoy:          g(I) + (c−1)·g(e) + T     where e = UnhealthyEdgeInterval
//	                                          (I when 0), floored at 1ms
//
// In the record service the first w delays (after the pass, then after
// each failure still below the warning threshold) are I and the other c−w
// (in warning) are I/2; in Envoy's schedule the delay after the pass is I
// and every failure that leaves the target served is followed by the
// unhealthy edge interval. The result is a supremum: jitter is drawn from
// [0, J(d)), so real runs come in strictly under it whenever jitter is on.
//
// The Monitor's event loop (plain HTTP and TCP checks; see
// MonitorConfig.NoEventLoop) may start a probe up to one wake-up grain
// after it is due — at most 4 % of its delay, 1 to 32 ms — without moving
// the probes after it, so the bound adds one grain of the longest delay
// above (32 ms from an 800 ms interval on).
//
// The bound assumes every probe gives a verdict. A local failure (KindLocal)
// gives none and delays the verdict by one probe interval, so the bound
// does not hold while a Monitor is degraded (LocalStats.Degraded).
func WorstCaseDetection(p Policy) time.Duration {
	if p.Validate() != nil {
		return 0
	}
	p = p.withDefaults()
	c := int64(p.CriticalThreshold)
	w := int64(p.WarningThreshold)
	t := p.Timeout
	j := p.jitter()
	step := func(d time.Duration) time.Duration {
		d = machFloor(d)
		return max(d+j.Max(d), t)
	}
	i := step(p.Interval)
	var total machSat
	total.add(1, t)
	if p.Schedule == ScheduleEnvoy {
		total.add(1, i)
		total.add(c-1, step(machOr(p.UnhealthyEdgeInterval, p.Interval)))
	} else {
		total.add(w, i)
		total.add(c-w, step(p.Interval/2))
	}
	total.add(1, detectionGrain(p))
	return time.Duration(total)
}

// detectionGrain is the event loop's wake-up grain for the longest delay
// of p's schedule (see WorstCaseDetection); p has its defaults.
func detectionGrain(p Policy) time.Duration {
	longest := machFloor(p.Interval)
	if p.Schedule == ScheduleEnvoy {
		longest = max(longest, machFloor(machOr(p.UnhealthyEdgeInterval, p.Interval)))
	}
	return monGrain(longest)
}

// machSat is a saturating sum of durations.
type machSat int64

func (s *machSat) add(n int64, d time.Duration) {
	if n <= 0 || d <= 0 {
		return
	}
	if int64(d) > (math.MaxInt64-int64(*s))/n {
		*s = math.MaxInt64
		return
	}
	*s += machSat(n * int64(d))
}
