package probe

import (
	"errors"
	"fmt"
	"github.com/gslbkit/gslb/internal/fielderr"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gslbkit/gslb/internal/backoff"
)

// Errors returned by Monitor methods; match them with errors.Is.
var (
	// ErrUnknownTarget: no target with that ID (never added, or removed).
	ErrUnknownTarget = errors.New("probe: unknown target")
	// ErrTargetExists: Add was given an ID already present.
	ErrTargetExists = errors.New("probe: target already exists")
	// ErrNotInShard: the target's ID belongs to another shard of
	// MonitorConfig.Shard; this Monitor does not probe it.
	ErrNotInShard = errors.New("probe: target belongs to another shard")
	// ErrRunning: Run was called while another Run is still running.
	ErrRunning = errors.New("probe: monitor already running")
	// ErrMonitorRunning is ErrRunning, under its old name.
	//
	// Deprecated: use ErrRunning.
	ErrMonitorRunning = ErrRunning
	// ErrNotConfigured: the Monitor was not made by NewMonitor (a zero
	// Monitor); its methods return this error, or report no targets.
	ErrNotConfigured = errors.New("probe: monitor not configured (use NewMonitor)")
)

// ErrMonitorConfig is wrapped by every MonitorConfig (and Shard)
// validation error, a *FieldError.
var ErrMonitorConfig = errors.New("probe: invalid monitor config")

// MonitorConfig configures a Monitor. Start from DefaultMonitorConfig and
// change fields. A field left at zero takes its default (Concurrency,
// LatencyWindow, LatencySmoothing); the zero Seed draws a random seed and
// the zero Shard owns every target, so the zero MonitorConfig is
// DefaultMonitorConfig.
type MonitorConfig struct {
	// Concurrency is the number of probes that may run at once, in the
	// event loop and on workers together: also the most workers Run keeps.
	// 1 to 65536; default (also 0) 256. Workers are started when a probe is due and
	// none is free, and exit after a few seconds without work, so an idle or
	// lightly loaded Monitor keeps few goroutines. A target due while
	// Concurrency probes run waits until one ends.
	Concurrency int `json:"concurrency"`
	// Shard selects the targets this Monitor probes when several share the
	// work (see Shard). The zero value owns every target.
	Shard Shard `json:"shard"`
	// Seed seeds the random source of the jitter (initial and per-interval),
	// so a run can be repeated exactly; 0 (the default) draws a random seed
	// when the Monitor is created.
	Seed uint64 `json:"seed"`
	// LatencyWindow is the number of most recent latencies kept per target
	// for the P50/P95/P99 statistics, 1 to 4096; default (also 0) 64.
	LatencyWindow int `json:"latencyWindow"`
	// LatencySmoothing is the weight of the newest latency in the smoothed
	// (EWMA) latency, in (0, 1]; default (also 0) 0.2.
	LatencySmoothing float64 `json:"latencySmoothing"`
	// NoEventLoop runs every probe on a worker goroutine. By default, on
	// Linux, the scheduler goroutine itself runs HTTP and HTTPS checks (the
	// lean engine, and when they match the body a MatchWindow of 1 to 16384
	// bytes) and TCP connect-only checks, to IP addresses, over
	// non-blocking sockets in one epoll set: no goroutine per plain probe in
	// flight, and one wake-up for every socket that became ready. An HTTPS
	// check's exchange runs in a coroutine on the scheduler's thread, its
	// handshake's CPU included; with GOMAXPROCS above 1 the loop hands HTTPS
	// checks to the workers for 100 ms after it spent more than half of the
	// last 100 ms in them, so TLS still spreads over the cores. The loop
	// wakes for due probes on a grain of 4 % of their delay (1 to 32 ms; 32 ms
	// from an 800 ms interval on), so a probe starts up to that late and the
	// probes due within one grain start after one wake-up; its probes time
	// out up to 1 ms late. Such a probe is not interrupted when its target is removed
	// or updated; it ends at its deadline at the latest and its result is
	// dropped. The probers' verdicts are the same on both paths.
	NoEventLoop bool `json:"noEventLoop,omitempty"`
}

// Limits of MonitorConfig fields.
const (
	MaxMonitorConcurrency = 1 << 16
	MaxLatencyWindow      = 4096
)

// DefaultMonitorConfig returns 256 workers, no sharding, a random seed, a
// 64-sample latency window and a smoothing weight of 0.2.
func DefaultMonitorConfig() MonitorConfig {
	return MonitorConfig{Concurrency: 256, LatencyWindow: 64, LatencySmoothing: 0.2}
}

// withDefaults fills the zero fields that take a default.
func (c MonitorConfig) withDefaults() MonitorConfig {
	d := DefaultMonitorConfig()
	if c.Concurrency == 0 {
		c.Concurrency = d.Concurrency
	}
	if c.LatencyWindow == 0 {
		c.LatencyWindow = d.LatencyWindow
	}
	if c.LatencySmoothing == 0 {
		c.LatencySmoothing = d.LatencySmoothing
	}
	return c
}

// Validate reports the first field outside its range as a *FieldError
// naming the field, the value and the allowed range (it wraps
// ErrMonitorConfig). Zero fields are valid: they take their defaults.
func (c MonitorConfig) Validate() error {
	c = c.withDefaults()
	if c.Concurrency < 1 || c.Concurrency > MaxMonitorConcurrency {
		return fieldErr(ErrMonitorConfig, "concurrency", c.Concurrency, fielderr.Range(1, MaxMonitorConcurrency)+", or 0 for the default")
	}
	if err := c.Shard.Validate(); err != nil {
		return fieldIn("shard", ErrMonitorConfig, err)
	}
	if c.LatencyWindow < 1 || c.LatencyWindow > MaxLatencyWindow {
		return fieldErr(ErrMonitorConfig, "latencyWindow", c.LatencyWindow, fielderr.Range(1, MaxLatencyWindow)+", or 0 for the default")
	}
	if !(c.LatencySmoothing > 0 && c.LatencySmoothing <= 1) {
		return fieldErr(ErrMonitorConfig, "latencySmoothing", c.LatencySmoothing, "(0, 1], or 0 for the default")
	}
	return nil
}

// Target is one thing a Monitor probes.
type Target struct {
	// ID names the target uniquely within the Monitor (for example
	// "eu-west/10.0.0.7:443"); it is also the key the shard hash reads.
	// Required.
	ID string
	// Prober asks the question; it must be safe for concurrent use (after
	// an Update the old and the new prober may run at once). Required.
	Prober Prober
	// Policy is the target's thresholds and schedule; it must pass
	// Policy.Validate. Zero fields take their defaults (see Policy).
	Policy Policy
}

// Monitor runs the state machines of many targets: one scheduler goroutine
// keeps every target in its schedule (by due time) and starts due probes, at most
// MonitorConfig.Concurrency at once: on Linux it runs HTTP, HTTPS and
// TCP connect-only checks to IP addresses itself, in an epoll event loop (see MonitorConfig.NoEventLoop), and hands the others to
// worker goroutines started on demand. Each result goes to the target's
// Machine, whose Step says when to probe next (plus jitter from the seeded
// source); state changes are delivered in order to the Observer from one
// goroutine; statistics are kept per target.
//
// The next probe is due Step.Next plus jitter after the previous one
// started (so probing keeps its cadence whatever the latency), or at once if
// that time has passed by the time the result arrives. A probe that started
// late by at most twice the event loop's grain (about 8 % of the delay, 2 to
// 64 ms; see NoEventLoop), on either path, counts from when it was due
// instead, so that lateness does not add up round after round; one that
// started later (no free worker, a busy machine) counts from its start. The first probe of a
// target is due when it is added plus a uniform random part of the policy's
// InitialJitter.
//
// All methods are safe for concurrent use, while Run runs or not; targets
// added before Run are probed when it starts. NewMonitor starts nothing.
type Monitor struct {
	cfg MonitorConfig
	obs Observer
	log *slog.Logger

	wake   chan struct{} // tells the scheduler the schedule or the pool changed
	evWake chan struct{} // tells the deliverer events are queued

	mu       sync.Mutex
	targets  map[string]*monTarget
	policies map[Policy]*monPolicy // the targets' policies, shared by value
	sched    monSchedule
	rng      *rand.Rand
	inFlight int
	running  bool
	events   []monEvent // queued for the deliverer, from evHead on
	evHead   int
	seq      uint64 // the Seq of the last event delivered
	dropped  uint64 // events dropped when a Run stopped (DroppedEvents)

	// The deliverer's state, for Remove (see deliver): the target whose
	// event is being handed to the observer, the deliverer's goroutine,
	// and the condition Remove waits on for that hand-over to end.
	delivering *monTarget
	deliverGo  uint64
	delivered  sync.Cond

	loc  monLocal         // local failures over the recent window
	dobs DegradedObserver // obs, if it is one

	// The workers of the current Run (see dispatch and finish).
	workers     int          // worker goroutines alive
	peakWorkers int          // the most alive at once, for tests
	idle        []*monWorker // idle workers, in the order they became idle
	stopping    bool         // Run is stopping: workers exit when their probe ends

	// The event loop of the current Run, if it has one (see NoEventLoop);
	// signal wakes it. loopJobs is the scheduler's: the probes dispatch
	// handed to the loop, started once the lock is released.
	lp       atomic.Pointer[evLoop]
	loopJobs []loopJob
}

// monTarget is the Monitor's record of one target, guarded by Monitor.mu.
// It is most of the Monitor's memory per target: its machine shares the
// policy with the other targets that have the same one. The fields every
// check reads or writes come first (the prober's interface value, not the
// prober: a check dispatched to the event loop reads loop instead), then
// the statistics, whose own hot fields lead (see monStats); the ID, read
// for events and snapshots only, comes last.
type monTarget struct {
	prober Prober
	mach   Machine

	due time.Time // when the next probe is due (its schedule key while queued)
	// cancel cancels the running probe of the current generation; nil when
	// none runs.
	cancel func()
	qpos   int32 // its entry's index in the Monitor's schedule while queued (see monSchedule)
	// gen is bumped by Update and Remove: results of probes of an older
	// generation (of a removed target, too) are dropped. It is only compared
	// for equality with the generation a probe started in, so wrapping
	// (after 2³² updates) is harmless.
	gen  uint32
	loop loopRef // the event loop's view of prober (see loopRef)
	st   monStats
	id   string
}

// monPolicy is one distinct policy of a Monitor's targets and how many
// targets use it.
type monPolicy struct {
	p    Policy
	refs int
}

// internLocked returns the Monitor's shared copy of p, counting one more
// user. p must be valid.
func (m *Monitor) internLocked(p Policy) *Policy {
	mp := m.policies[p]
	if mp == nil {
		mp = &monPolicy{p: p}
		m.policies[p] = mp
	}
	mp.refs++
	return &mp.p
}

// releaseLocked counts one user of the shared policy p less.
func (m *Monitor) releaseLocked(p *Policy) {
	mp := m.policies[*p]
	if mp == nil || &mp.p != p {
		return
	}
	if mp.refs--; mp.refs <= 0 {
		delete(m.policies, *p)
	}
}

// NewMonitor validates cfg and returns an idle Monitor. obs receives the
// state changes (nil: nobody); logger reports probers that panic (nil:
// quiet). cfg is copied.
func NewMonitor(cfg MonitorConfig, obs Observer, logger *slog.Logger) (*Monitor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	seed := cfg.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	dobs, _ := obs.(DegradedObserver)
	m := &Monitor{
		dobs:     dobs,
		loc:      monNewLocal(time.Now(), DegradedWindow),
		cfg:      cfg,
		obs:      obs,
		log:      logger,
		wake:     make(chan struct{}, 1),
		evWake:   make(chan struct{}, 1),
		targets:  make(map[string]*monTarget),
		policies: make(map[Policy]*monPolicy),
		rng:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
	}
	m.delivered.L = &m.mu
	return m, nil
}

// Config returns the Monitor's configuration.
func (m *Monitor) Config() MonitorConfig { return m.cfg }

// Owns reports whether this Monitor's shard owns the target ID.
func (m *Monitor) Owns(id string) bool { return m.cfg.Shard.Owns(id) }

// Add starts watching t: its machine starts in the policy's initial state and
// its first probe is due now plus a random part of Policy.InitialJitter.
// Errors: ErrNotConfigured on a zero Monitor; an empty ID or nil Prober (a
// *FieldError wrapping ErrMonitorConfig, path `targets[""].id` or
// `targets["<id>"].prober`); an
// invalid policy (a *FieldError wrapping both ErrMonitorConfig and
// ErrInvalidPolicy, its path `targets["<id>"].policy.<field>`), ErrTargetExists, ErrNotInShard (the ID hashes to another shard;
// callers that hand every controller the full list can skip these).
func (m *Monitor) Add(t Target) error {
	if m.targets == nil {
		return ErrNotConfigured
	}
	if err := monCheckTarget(t); err != nil {
		return err
	}
	if !m.cfg.Shard.Owns(t.ID) {
		return fmt.Errorf("%w: %q", ErrNotInShard, t.ID)
	}
	if err := monCheckPolicy(t); err != nil {
		return err
	}
	t.Policy = t.Policy.withDefaults()
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.targets[t.ID]; ok {
		return fmt.Errorf("%w: %q", ErrTargetExists, t.ID)
	}
	now := time.Now()
	mt := &monTarget{id: t.ID, prober: t.Prober, loop: loopRefOf(t.Prober)}
	mt.mach.init(m.internLocked(t.Policy))
	mt.st = monNewStats(now, mt.mach.State(), m.cfg.LatencyWindow)
	m.targets[t.ID] = mt
	m.queueLocked(mt, now.Add(backoff.Uniform(mt.mach.p.InitialJitter, m.rng)))
	return nil
}

// Remove stops watching the target. When Remove returns no new probe of it
// will start; a probe already running is cancelled (one in the event loop
// runs to its end or deadline) and its result dropped. Its statistics are
// discarded. Errors: ErrUnknownTarget.
//
// No event of the removed target reaches the observer after Remove
// returns: events still queued are dropped (Seq stays gap-free, as events
// are numbered when delivered), and when the observer is being handed one
// of the target's events at that moment, Remove waits until that Observe
// call returns. Called from inside the observer (which the Observer
// contract allows), Remove does not wait: the event in hand is the last
// the observer sees of the target. An observer that, while handling an
// event of a target, blocks until another goroutine's Remove of that same
// target returns, deadlocks. A target added again under the same ID is a
// new target: the old one's events are not delivered for it.
func (m *Monitor) Remove(id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.targets[id]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownTarget, id)
	}
	delete(m.targets, id)
	m.releaseLocked(t.mach.p)
	t.gen++
	m.sched.remove(t)
	if t.cancel != nil {
		t.cancel()
		t.cancel = nil
	}
	if m.delivering == t && monGoroutine() != m.deliverGo {
		for m.delivering == t {
			m.delivered.Wait()
		}
	}
	return nil
}

// Update replaces a target's prober and policy (for example a new address,
// or new thresholds). A probe of the old prober still running is cancelled
// (one in the event loop runs to its end or deadline) and its result
// dropped; the next probe is due now plus a random part of
// the new policy's InitialJitter. Statistics carry over.
//
// When the policy is unchanged the machine keeps its state and counters.
// When it changes, a new machine starts from the new policy and is moved to
// the old state's side: served targets (passing, warning) become passing,
// unserved ones (critical, recovery) critical, a disabled target stays
// disabled, and threshold counters restart. If that changes the state
// (warning → passing, recovery → critical), observers see an Event with
// Cause CauseOverride. Errors: those of Add, or ErrUnknownTarget.
func (m *Monitor) Update(t Target) error {
	if err := monCheckTarget(t); err != nil {
		return err
	}
	m.mu.Lock()
	_, known := m.targets[t.ID]
	m.mu.Unlock()
	if !known {
		return fmt.Errorf("%w: %q", ErrUnknownTarget, t.ID)
	}
	// A policy equal to the current one is valid; checking it again gives
	// the same answer, outside the lock.
	if err := monCheckPolicy(t); err != nil {
		return err
	}
	t.Policy = t.Policy.withDefaults()

	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.targets[t.ID]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownTarget, t.ID)
	}
	now := time.Now()
	emitted := false
	if *cur.mach.p != t.Policy {
		var nm Machine
		nm.init(m.internLocked(t.Policy))
		emitted = m.carryStateLocked(now, cur, &nm)
		m.releaseLocked(cur.mach.p)
		cur.mach = nm
	}
	cur.gen++
	if cur.cancel != nil {
		cur.cancel()
		cur.cancel = nil
	}
	cur.prober, cur.loop = t.Prober, loopRefOf(t.Prober)
	m.sched.remove(cur)
	m.queueLocked(cur, now.Add(backoff.Uniform(cur.mach.p.InitialJitter, m.rng)))
	if emitted {
		monSignal(m.evWake)
	}
	return nil
}

// carryStateLocked moves the fresh machine nm to the served side of t's old
// machine and records the change, if any. It reports whether an event was
// queued.
func (m *Monitor) carryStateLocked(now time.Time, t *monTarget, nm *Machine) bool {
	from := t.mach.State()
	want := Critical
	if from.Served() {
		want = Passing
	}
	if nm.State() != want {
		nm.Override(now, want)
	}
	if t.mach.Disabled() && !nm.Disabled() {
		nm.SetDisabled(now, true)
	}
	to := nm.State()
	if to == from {
		return false
	}
	t.st.enter(now, to)
	return m.emitLocked(t, Transition{From: from, To: to, At: now, Cause: CauseOverride}, nm)
}

// Override forces a target's state at once: Critical drains it, Passing
// brings it back. The override is not permanent: probing continues on the
// same schedule and later results move the target by the policy's rules.
// Errors: ErrUnknownTarget; a state other than Passing or Critical.
func (m *Monitor) Override(id string, to State) error {
	if to != Passing && to != Critical {
		return fmt.Errorf("probe: override to %v: allowed %s", to, fielderr.OneOf(Passing.String(), Critical.String()))
	}
	return m.stepTarget(id, func(mach *Machine, now time.Time) Step { return mach.Override(now, to) })
}

// SetDisabled disables (true) or re-enables (false) a target: a disabled
// target is not served whatever its state, until re-enabled; it is still
// probed. Errors: ErrUnknownTarget.
func (m *Monitor) SetDisabled(id string, disabled bool) error {
	return m.stepTarget(id, func(mach *Machine, now time.Time) Step { return mach.SetDisabled(now, disabled) })
}

// stepTarget steps target id's machine with f under the lock, at the time
// read there, and wakes the event deliverer if that sent an event.
// Errors: ErrUnknownTarget.
func (m *Monitor) stepTarget(id string, f func(mach *Machine, now time.Time) Step) error {
	m.mu.Lock()
	t, ok := m.targets[id]
	if !ok {
		m.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrUnknownTarget, id)
	}
	sent := m.stepLocked(t, f(&t.mach, time.Now()))
	m.mu.Unlock()
	if sent {
		monSignal(m.evWake)
	}
	return nil
}

// Len returns the number of targets.
func (m *Monitor) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.targets)
}

// Stats returns one target's statistics; false when the ID is unknown.
func (m *Monitor) Stats(id string) (TargetStats, bool) {
	m.mu.Lock()
	t, ok := m.targets[id]
	if !ok {
		m.mu.Unlock()
		return TargetStats{}, false
	}
	var out TargetStats
	samples := t.fill(time.Now(), &out, nil, m.sched.queued(t))
	m.mu.Unlock()
	monPercentiles(samples, &out)
	return out, true
}

// Snapshot returns every target's statistics, sorted by ID. The counters are
// copied under the Monitor's lock; the percentiles are computed after it is
// released, so a snapshot of many targets delays probing only by the copy.
func (m *Monitor) Snapshot() []TargetStats {
	m.mu.Lock()
	now := time.Now()
	out := make([]TargetStats, 0, len(m.targets))
	n := 0
	for _, t := range m.targets {
		n += len(t.st.window)
	}
	buf := make([]time.Duration, 0, n)
	bounds := make([]int, 0, len(m.targets)+1)
	for _, t := range m.targets {
		out = append(out, TargetStats{})
		bounds = append(bounds, len(buf))
		buf = t.fill(now, &out[len(out)-1], buf, m.sched.queued(t))
	}
	bounds = append(bounds, len(buf))
	m.mu.Unlock()
	for i := range out {
		monPercentiles(buf[bounds[i]:bounds[i+1]], &out[i])
	}
	slices.SortFunc(out, func(a, b TargetStats) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// fill copies t's statistics into out and appends its latency window to buf;
// queued says whether t is in the schedule (its next probe due at t.due).
func (t *monTarget) fill(now time.Time, out *TargetStats, buf []time.Duration, queued bool) []time.Duration {
	out.ID = t.id
	t.st.fill(now, out)
	out.Served, out.Disabled = t.mach.Served(), t.mach.Disabled()
	out.InFlight = t.cancel != nil
	if queued {
		out.NextProbe = t.due
	}
	return t.st.samples(buf)
}

// queueLocked puts t in the schedule at due and wakes the scheduler if t is now
// the earliest.
func (m *Monitor) queueLocked(t *monTarget, due time.Time) {
	m.sched.push(t, due)
	if m.sched.first(t) {
		m.signal()
	}
}

// stepLocked records a machine step's transition, if any, and reports
// whether an event was queued.
func (m *Monitor) stepLocked(t *monTarget, s Step) bool {
	if !s.Changed {
		return false
	}
	t.st.enter(s.Transition.At, s.Transition.To)
	return m.emitLocked(t, s.Transition, &t.mach)
}

// emitLocked queues an event of t for the observer; false when nobody
// listens. The deliverer numbers it (Seq) when it hands it over.
func (m *Monitor) emitLocked(t *monTarget, tr Transition, mach *Machine) bool {
	if m.obs == nil {
		return false
	}
	m.events = append(m.events, monEvent{t: t, ev: Event{Target: t.id, Transition: tr, Served: mach.Served(), Disabled: mach.Disabled()}})
	return true
}

// monEvent is a queued event and the target it is about: the deliverer
// drops the events of a target no longer in the Monitor (removed, or
// removed and added again).
type monEvent struct {
	t   *monTarget
	ev  Event
	deg *DegradedEvent // instead of ev: a DegradedEvent, for the Monitor
}

// monCheckPolicy validates t's policy, as a field of the Monitor's targets.
func monCheckPolicy(t Target) error {
	err := machValidate(t.Policy)
	if err == nil {
		// The path and sentinels are built only for an error: Add runs this
		// for every target, and its garbage would stay in memory as long as
		// the heap is below the runtime's first GC goal.
		return nil
	}
	return fielderr.In(fielderr.Key("targets", t.ID)+".policy",
		fielderr.Both(ErrMonitorConfig, ErrInvalidPolicy), err)
}

func monCheckTarget(t Target) error {
	if t.ID == "" {
		return fieldErr(ErrMonitorConfig, fielderr.Key("targets", "")+".id", "", "a non-empty string")
	}
	if t.Prober == nil {
		return fieldErr(ErrMonitorConfig, fielderr.Key("targets", t.ID)+".prober", nil, "a non-nil Prober")
	}
	return nil
}

// signal wakes the scheduler, waiting on its channel or in its event loop.
func (m *Monitor) signal() {
	monSignal(m.wake)
	if lp := m.lp.Load(); lp != nil {
		lp.wake()
	}
}

// monSignal does a non-blocking send on a 1-buffered wake-up channel.
func monSignal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
