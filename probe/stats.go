package probe

import (
	"math"
	"slices"
	"time"
)

// NumStates is the number of State values (Unknown through Recovery), for
// arrays indexed by State such as TargetStats.TimeIn.
const NumStates = int(Recovery) + 1

// TargetStats is a copy of one target's statistics, taken by
// Monitor.Snapshot or Monitor.Stats. Counters start when the target is added
// and survive Update; times are those of the Monitor's clock.
type TargetStats struct {
	// ID is the target's ID.
	ID string `json:"id"`
	// State is the machine's current state; Served and Disabled are the
	// machine's Served() and Disabled().
	State    State `json:"state"`
	Served   bool  `json:"served"`
	Disabled bool  `json:"disabled"`
	// Since is when the target entered State (when it was added, for the
	// initial state).
	Since time.Time `json:"since"`
	// TimeIn is the total time spent in each state since the target was
	// added, indexed by State (Unknown stays 0); the current state's entry
	// counts up to the moment of the snapshot.
	TimeIn [NumStates]time.Duration `json:"timeIn"`
	// Transitions counts state changes (probe results and overrides;
	// enabling or disabling counts too).
	Transitions uint64 `json:"transitions"`

	// Probes counts finished probes whose results the machine counted;
	// Passes and Failures split them (Failures includes fail-now). Local
	// failures are not among them.
	Probes   uint64 `json:"probes"`
	Passes   uint64 `json:"passes"`
	Failures uint64 `json:"failures"`
	// FailuresByKind counts failures by Kind (index KindNone stays 0 unless
	// a prober fails without saying why; index KindLocal stays 0: see
	// LocalFailures).
	FailuresByKind [NumKinds]uint64 `json:"failuresByKind"`
	// LocalFailures counts the target's local failures (KindLocal): probes
	// that failed because of this process or host, which the machine did
	// not count. Monitor.LocalStats counts them Monitor-wide.
	LocalFailures uint64 `json:"localFailures"`

	// LastResult is the most recent result, a local failure included, and
	// LastProbe when it arrived (zero before the first).
	LastResult Result    `json:"lastResult"`
	LastProbe  time.Time `json:"lastProbe"`
	// LastError is the Detail of the most recent failure (its Kind's name when
	// the prober gave no detail) and LastErrorAt when it arrived.
	LastError   string    `json:"lastError"`
	LastErrorAt time.Time `json:"lastErrorAt"`

	// LastLatency is the latency of the most recent probe; SmoothedLatency an
	// exponentially weighted moving average of all of them
	// (MonitorConfig.LatencySmoothing is the weight of the newest sample).
	LastLatency     time.Duration `json:"lastLatency"`
	SmoothedLatency time.Duration `json:"smoothedLatency"`
	// P50, P95 and P99 are nearest-rank percentiles, to the microsecond,
	// over the latencies of the last Samples probes, passed or failed (at
	// most MonitorConfig.LatencyWindow); 0 with no samples. A failure's latency is
	// the time to its verdict (a timeout's is about the policy's timeout).
	P50     time.Duration `json:"p50"`
	P95     time.Duration `json:"p95"`
	P99     time.Duration `json:"p99"`
	Samples int           `json:"samples"`

	// NextProbe is when the next probe is due; zero while one is running.
	NextProbe time.Time `json:"nextProbe"`
	// InFlight reports whether a probe is running now.
	InFlight bool `json:"inFlight"`
}

// monStats accumulates one target's statistics. It is a plain value guarded
// by the Monitor's mutex; recording a result allocates only the latency
// window, once, and the rare block at the first failure or state change.
// Window latencies are kept in microseconds to halve the per-target memory.
//
// Its layout is kept compact (it is most of a target's record): what only
// failures and state changes set is kept apart (rare), allocated at the
// first, so a target that stays healthy does not carry it; failures are
// probes minus passes. The fields a passing probe's record writes come
// first, so that with the monTarget fields a check reads they span as few
// cache lines of the target's record as they can: at 100,000 targets every
// line a check touches is a miss.
type monStats struct {
	probes, passes uint64
	ewma           float64 // nanoseconds
	last           Result
	lastAt         time.Time
	window         []uint32 // latencies in microseconds (saturating), a ring once full
	windowNext     uint16   // ring position of the next write once full
	windowLimit    uint16   // at most MaxLatencyWindow
	state          State

	rare  *monRare // nil until the first failure or state change
	since time.Time
}

// monRare is what only a target's failures and state changes set in its
// statistics: while a target stays in its first state, its time there is
// counted from since. Counts by kind are 32-bit (4 × 10⁹ failures of one
// kind is over a century of one probe a second).
type monRare struct {
	timeIn      [NumStates]time.Duration // in the states left, not the current one
	transitions uint64
	byKind      [NumKinds]uint32 // saturating
	local       uint32           // local failures, saturating
	lastErr     string
	lastErrAt   time.Time
}

// rareBlock returns the rare block, allocating it the first time.
func (s *monStats) rareBlock() *monRare {
	if s.rare == nil {
		s.rare = new(monRare)
	}
	return s.rare
}

// failed records r, a failure (local or not) that arrived at now, as the
// last error, and returns the block to count it in.
func (s *monStats) failed(now time.Time, r Result) *monRare {
	f := s.rareBlock()
	f.lastErr, f.lastErrAt = r.Detail, now
	if f.lastErr == "" {
		f.lastErr = r.Kind.String()
	}
	return f
}

// monNewStats starts statistics for a target entering state at now; window
// is at most MaxLatencyWindow.
func monNewStats(now time.Time, state State, window int) monStats {
	return monStats{since: now, state: state, windowLimit: uint16(window)}
}

// enter records a change to state at now.
func (s *monStats) enter(now time.Time, state State) {
	rare := s.rareBlock()
	if state == s.state {
		rare.transitions++ // disable/enable: same state, still a transition
		return
	}
	if int(s.state) < NumStates && now.After(s.since) {
		rare.timeIn[s.state] += now.Sub(s.since)
	}
	s.state, s.since = state, now
	rare.transitions++
}

// record adds one result, which arrived at now, with weight alpha for the
// moving average.
func (s *monStats) record(now time.Time, r Result, alpha float64) {
	if r.Kind == KindLocal {
		// Not a verdict: no probe counted, no latency sample.
		if f := s.failed(now, r); f.local < math.MaxUint32 {
			f.local++
		}
		s.last, s.lastAt = r, now
		return
	}
	s.probes++
	if r.Passed() {
		s.passes++
	} else {
		k := r.Kind
		if int(k) >= NumKinds {
			k = KindOther
		}
		if f := s.failed(now, r); f.byKind[k] < math.MaxUint32 {
			f.byKind[k]++
		}
	}
	s.last, s.lastAt = r, now
	lat := r.Latency
	if s.probes == 1 {
		s.ewma = float64(lat)
	} else {
		s.ewma += alpha * (float64(lat) - s.ewma)
	}
	if s.windowLimit == 0 {
		return
	}
	us := monMicros(lat)
	if len(s.window) < int(s.windowLimit) {
		if s.window == nil {
			s.window = make([]uint32, 0, s.windowLimit)
		}
		s.window = append(s.window, us)
		return
	}
	s.window[s.windowNext] = us
	s.windowNext = (s.windowNext + 1) % s.windowLimit
}

// monMicros converts a latency to whole microseconds for the window,
// saturating at about 71 minutes; negative latencies count as 0.
func monMicros(d time.Duration) uint32 {
	us := d / time.Microsecond
	switch {
	case us < 0:
		return 0
	case us > math.MaxUint32:
		return math.MaxUint32
	}
	return uint32(us)
}

// samples appends the window's latencies to buf as durations.
func (s *monStats) samples(buf []time.Duration) []time.Duration {
	for _, us := range s.window {
		buf = append(buf, time.Duration(us)*time.Microsecond)
	}
	return buf
}

// fill copies the counters into out as of now; the percentiles are left to
// monPercentiles, which callers run outside the Monitor's lock.
func (s *monStats) fill(now time.Time, out *TargetStats) {
	out.State, out.Since = s.state, s.since
	out.TimeIn, out.Transitions = [NumStates]time.Duration{}, 0
	if f := s.rare; f != nil {
		out.TimeIn, out.Transitions = f.timeIn, f.transitions
		for k, n := range f.byKind {
			out.FailuresByKind[k] = uint64(n)
		}
		out.LocalFailures = uint64(f.local)
		out.LastError, out.LastErrorAt = f.lastErr, f.lastErrAt
	}
	if int(s.state) < NumStates && now.After(s.since) {
		out.TimeIn[s.state] += now.Sub(s.since)
	}
	out.Probes, out.Passes, out.Failures = s.probes, s.passes, s.probes-s.passes
	out.LastResult, out.LastProbe = s.last, s.lastAt
	if s.probes > 0 {
		out.LastLatency = s.last.Latency
		out.SmoothedLatency = time.Duration(s.ewma)
	}
	out.Samples = len(s.window)
}

// monPercentiles sorts samples in place and sets out's P50, P95 and P99 by
// nearest rank.
func monPercentiles(samples []time.Duration, out *TargetStats) {
	out.Samples = len(samples)
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	out.P50 = monRank(samples, 50)
	out.P95 = monRank(samples, 95)
	out.P99 = monRank(samples, 99)
}

// monRank returns the nearest-rank p-th percentile of sorted samples.
func monRank(sorted []time.Duration, p int) time.Duration {
	n := len(sorted)
	k := (p*n + 99) / 100 // ceil(p × n / 100)
	if k < 1 {
		k = 1
	}
	if k > n {
		k = n
	}
	return sorted[k-1]
}
