package probe

import (
	"math"
	"time"
)

// DegradedWindow is the span of recent probe results over which a Monitor
// counts its local failures (see LocalStats): a Monitor is degraded while
// a local failure happened within about the last DegradedWindow.
const DegradedWindow = 30 * time.Second

// LocalStats is a Monitor's account of its local failures (KindLocal):
// probes that failed because of this process or host and told nothing
// about their targets. Monitor.LocalStats returns it and a DegradedEvent
// carries it.
//
// While Degraded, some targets were not probed as their policies say:
// each local failure delays the verdict on its target by one probe
// interval, so WorstCaseDetection does not hold until the Monitor is no
// longer degraded. A reader of the Monitor's health (a readiness check, a
// status page, a metric) should report it; Share says how blind the
// Monitor is.
type LocalStats struct {
	// Degraded reports whether a local failure happened within the window.
	Degraded bool `json:"degraded"`
	// Since is when Degraded last changed (zero if it never did).
	Since time.Time `json:"since"`
	// Window is the span the counts below cover (DegradedWindow).
	Window time.Duration `json:"window"`
	// Results counts the probe results within the window, local failures
	// included; LocalFailures counts the local failures among them; Share
	// is LocalFailures / Results (0 with no results).
	Results       uint64  `json:"results"`
	LocalFailures uint64  `json:"localFailures"`
	Share         float64 `json:"share"`
	// Total counts every local failure since the Monitor was created.
	Total uint64 `json:"total"`
	// LastError is the Detail of the most recent local failure ("connect:
	// dial tcp 10.0.0.7:443: socket: too many open files") and LastErrorAt
	// when it arrived; zero before the first.
	LastError   string    `json:"lastError,omitempty"`
	LastErrorAt time.Time `json:"lastErrorAt"`
}

// DegradedEvent reports that a Monitor became degraded (Local.Degraded
// true: its first local failure within the window) or stopped being
// degraded (no local failure within the window any more).
type DegradedEvent struct {
	// At is the Monitor's clock when the change was seen.
	At time.Time `json:"at"`
	// Local is the Monitor's LocalStats as of At.
	Local LocalStats `json:"local"`
}

// DegradedObserver is an optional interface of the Observer given to
// NewMonitor: if it has this method too, it also receives the Monitor's
// DegradedEvents, from the goroutine that delivers the Events, in order
// with them, never under the Monitor's lock (the same contract as
// Observer.Observe). Event stays a state-transition event; a Monitor whose
// Observer lacks the method keeps no DegradedEvents. Monitor.LocalStats
// tells the same without an observer.
type DegradedObserver interface {
	ObserveDegraded(DegradedEvent)
}

// monLocalBuckets is the number of slices of the window monLocal counts
// in: the window slides by a sixteenth of its span.
const monLocalBuckets = 16

// monLocalBucket counts the results within one slice of the window.
type monLocalBucket struct {
	k              int64 // the slice's number: time since base / width
	results, local uint32
}

// monLocal counts a Monitor's results and local failures over a sliding
// window. It is a pure value guarded by the Monitor's mutex; times are
// those of the Monitor's clock.
type monLocal struct {
	base     time.Time
	width    time.Duration
	b        [monLocalBuckets]monLocalBucket
	total    uint64
	degraded bool
	since    time.Time
	lastErr  string
	lastAt   time.Time
}

// monNewLocal starts counting at now over window.
func monNewLocal(now time.Time, window time.Duration) monLocal {
	return monLocal{base: now, width: max(window/monLocalBuckets, time.Nanosecond)}
}

// slice returns the number of the slice now falls in.
func (w *monLocal) slice(now time.Time) int64 {
	d := now.Sub(w.base)
	if d < 0 {
		return 0
	}
	return int64(d / w.width)
}

// add records one result at now, a local failure with detail when local,
// and reports whether Degraded changed.
func (w *monLocal) add(now time.Time, local bool, detail string) bool {
	k := w.slice(now)
	b := &w.b[k%monLocalBuckets]
	if b.k != k {
		*b = monLocalBucket{k: k}
	}
	if b.results < math.MaxUint32 {
		b.results++
	}
	if local {
		if b.local < math.MaxUint32 {
			b.local++
		}
		w.total++
		w.lastErr, w.lastAt = detail, now
	} else if !w.degraded {
		// No local failure was in the window at the last refresh, and
		// none came since: slices leaving the window cannot add one.
		return false
	}
	return w.refresh(now)
}

// sums returns the results and local failures within the window at now.
func (w *monLocal) sums(now time.Time) (results, local uint64) {
	k := w.slice(now)
	for i := range w.b {
		if b := &w.b[i]; b.k > k-monLocalBuckets && b.k <= k {
			results += uint64(b.results)
			local += uint64(b.local)
		}
	}
	return results, local
}

// refresh updates Degraded as of now and reports whether it changed.
func (w *monLocal) refresh(now time.Time) bool {
	_, l := w.sums(now)
	if d := l > 0; d != w.degraded {
		w.degraded, w.since = d, now
		return true
	}
	return false
}

// fill copies the counts as of now into out (call refresh first).
func (w *monLocal) fill(now time.Time, out *LocalStats) {
	r, l := w.sums(now)
	*out = LocalStats{
		Degraded: w.degraded, Since: w.since, Window: w.width * monLocalBuckets,
		Results: r, LocalFailures: l, Total: w.total,
		LastError: w.lastErr, LastErrorAt: w.lastAt,
	}
	if r > 0 {
		out.Share = float64(l) / float64(r)
	}
}

// LocalStats returns the Monitor's local failures over the recent window
// and whether it is degraded (see LocalStats). If the window has just
// emptied of local failures, the change is seen now, and a DegradedObserver
// receives it. A zero Monitor reports zero LocalStats.
func (m *Monitor) LocalStats() LocalStats {
	if m.targets == nil {
		return LocalStats{}
	}
	m.mu.Lock()
	now := time.Now()
	sent := m.refreshLocalLocked(now)
	var out LocalStats
	m.loc.fill(now, &out)
	m.mu.Unlock()
	if sent {
		monSignal(m.evWake)
	}
	return out
}

// recordLocalLocked counts one result of a probe in the Monitor's window
// and reports whether a DegradedEvent was queued.
func (m *Monitor) recordLocalLocked(now time.Time, r Result) bool {
	if !m.loc.add(now, r.Kind == KindLocal, r.Detail) {
		return false
	}
	return m.emitDegradedLocked(now)
}

// refreshLocalLocked sees whether the window emptied of local failures and
// reports whether a DegradedEvent was queued.
func (m *Monitor) refreshLocalLocked(now time.Time) bool {
	if !m.loc.refresh(now) {
		return false
	}
	return m.emitDegradedLocked(now)
}

// emitDegradedLocked queues a DegradedEvent for a DegradedObserver; false
// when there is none.
func (m *Monitor) emitDegradedLocked(now time.Time) bool {
	if m.dobs == nil {
		return false
	}
	ev := &DegradedEvent{At: now}
	m.loc.fill(now, &ev.Local)
	m.events = append(m.events, monEvent{deg: ev})
	return true
}
