package probe

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// monMinDelay is the shortest time between a probe's start and the next one
// of the same target (Envoy's floor), whatever the policy's Step says.
const monMinDelay = time.Millisecond

// The grain of the event loop's wake-ups for due probes: a probe whose
// delay (Machine.Next) is d may start up to monGrain(d) after it is due, so
// the probes due within one grain start together, after one wake-up, and
// the kernel runs their connects back to back instead of one per wake-up.
// Deadlines keep the loop's 1 ms tick.
const (
	monGrainMin   = time.Millisecond
	monGrainMax   = 32 * time.Millisecond
	monGrainShare = 25 // the grain is at most 4 % of the delay, within [monGrainMin, monGrainMax]
)

// monGrain returns the wake-up grain of a probe whose delay is d: the
// largest of 1, 2, 4, 8, 16 and 32 ms that is at most d/25 (1 ms below
// 50 ms, 32 ms from 800 ms on).
func monGrain(d time.Duration) time.Duration {
	g := monGrainMin
	for g < monGrainMax && 2*g <= d/monGrainShare {
		g *= 2
	}
	return g
}

// monWorkerIdle is how long a worker may wait for a probe before it exits.
// Work goes to the worker that became idle last, so the workers beyond the
// recent peak of probes in flight stay idle and leave after this long; the
// goroutines (and their stacks) follow the actual concurrency, not
// MonitorConfig.Concurrency. Starting a worker again costs far less than a
// probe, so the value only needs to ride out a few probe intervals.
const monWorkerIdle = 5 * time.Second

// monWorker is one worker goroutine's mailbox. The scheduler sends it one
// job at a time (capacity 1: the send never blocks), or a job with a nil
// target to make it exit.
type monWorker struct {
	jobs      chan monJob
	idleSince time.Time // when it last became idle (while on Monitor.idle)
}

// monJob is one probe handed from the scheduler to a worker. The context
// travels with the message only; it is the probe's own, with the policy's
// timeout as its deadline.
type monJob struct {
	t      *monTarget
	gen    uint32
	prober Prober
	ctx    context.Context
	cancel context.CancelFunc
	start  time.Time
}

// Run probes the targets until ctx is done, then cancels the probes still
// running (closing those in the event loop), waits for every worker,
// delivers at most MonitorDrainEvents of the events still queued (after
// the Observe call in progress, if any), drops the rest, and returns nil. It runs one scheduler,
// which also runs the event loop's probes, and, with an Observer, one
// goroutine delivering events; workers, which run the other probes, are
// started when a probe is due and no worker is free, up to
// MonitorConfig.Concurrency, and exit after 5 s (of the Monitor's clock)
// without work; an HTTPS check in the event loop runs in a coroutine of
// its own (an iter.Pull goroutine, which runs only when the scheduler hands
// over to it) until the check ends; no other goroutine, whatever the
// number of targets. Each
// probe on a worker gets a context carrying ctx's values, the policy's
// timeout as its deadline, and cancelled when its target is removed or
// updated or when Run stops; a probe in the event loop has the same
// deadline. Targets and their state survive Run: a later Run continues
// with them.
// Errors: ErrRunning when another Run is running, ErrNotConfigured on a
// zero Monitor.
func (m *Monitor) Run(ctx context.Context) error {
	if m.targets == nil {
		return ErrNotConfigured
	}
	m.mu.Lock()
	if m.running {
		m.mu.Unlock()
		return ErrRunning
	}
	m.running = true
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.running = false
		m.mu.Unlock()
	}()

	var workers sync.WaitGroup
	start := func(w *monWorker, j monJob) { workers.Go(func() { m.work(ctx, w, j) }) }
	stopDelivery := make(chan struct{})
	var delivery sync.WaitGroup
	if m.obs != nil {
		delivery.Go(func() { m.deliver(ctx, stopDelivery) })
	}

	m.schedule(ctx, start)
	m.stopWorkers()
	workers.Wait()
	m.mu.Lock()
	m.stopping = false
	m.mu.Unlock()
	close(stopDelivery)
	delivery.Wait()
	return nil
}

// schedule is the scheduler loop: it owns the one timer, armed for the
// earliest due target while a worker is free, and returns when ctx is done.
// Once a probe the event loop can run is due (see NoEventLoop), it opens
// the loop and from then on waits in it instead, its deadline the timer.
func (m *Monitor) schedule(ctx context.Context, start func(*monWorker, monJob)) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	base := context.WithoutCancel(ctx) // the probes' parent: values only; see stopWorkers
	useLoop := evLoopSupported && !m.cfg.NoEventLoop
	var lp *evLoop
	defer func() {
		if lp != nil {
			m.closeLoop(lp)
		}
	}()
	for {
		tlsRoom := lp == nil || lp.tlsRoom(time.Now())
		wait, grain, armed := m.dispatch(ctx, base, start, useLoop, tlsRoom)
		if len(m.loopJobs) > 0 && lp == nil {
			var err error
			if lp, err = newEvLoop(); err != nil {
				m.log.Warn("probe: no event loop; probes run on workers", "err", err)
				useLoop = false
				m.requeueLoopJobs()
				continue
			}
			m.lp.Store(lp)
			defer context.AfterFunc(ctx, lp.wake)()
		}
		if lp == nil {
			if armed {
				timer.Reset(wait)
			} else {
				timer.Stop()
			}
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			case <-m.wake:
			}
			continue
		}
		now := time.Now()
		for i, j := range m.loopJobs {
			lp.start(j, now)
			m.loopJobs[i] = loopJob{}
		}
		m.loopJobs = m.loopJobs[:0]
		lp.settle(now)
		if done := lp.takeDone(); len(done) > 0 {
			// Probes that ended at once (no socket) or expired: their
			// targets are queued again, so dispatch before waiting; wait
			// and armed no longer account for them.
			m.finishLoop(ctx, done)
			if ctx.Err() != nil {
				return
			}
			continue
		}
		// The window of the next wake-up: from the earliest deadline or due
		// probe to a tick after that deadline or a grain after that due
		// time, whichever is earlier.
		lo, has := lp.next()
		hi := lo.Add(loopTick)
		if armed {
			due := now.Add(wait)
			if !has || due.Before(lo) {
				lo = due
			}
			if end := due.Add(grain); !has || end.Before(hi) {
				hi = end
			}
			has = true
		}
		lp.wait(now, lo, hi, has)
		m.finishLoop(ctx, lp.takeDone())
		if ctx.Err() != nil {
			return
		}
	}
}

// finishLoop applies the results of probes the event loop finished.
func (m *Monitor) finishLoop(ctx context.Context, done []loopDone) {
	if len(done) == 0 {
		return
	}
	for i := range done {
		if v := done[i].panicked; v != nil {
			m.log.Error("probe: prober panicked", "target", done[i].t.id, "panic", v)
		}
	}
	sent := false
	m.mu.Lock()
	now := time.Now()
	for i := range done {
		d := &done[i]
		m.inFlight--
		_, s := m.resultLocked(ctx, d.t, d.gen, d.start, d.r, now)
		sent = sent || s
		*d = loopDone{}
	}
	m.mu.Unlock()
	if sent {
		monSignal(m.evWake)
	}
}

// closeLoop ends the event loop when Run stops: the probes in flight are
// closed without a verdict and their targets are due at once for the next
// Run, as a worker's cut-short probe is.
func (m *Monitor) closeLoop(lp *evLoop) {
	lp.abandon()
	done := lp.takeDone()
	m.mu.Lock()
	now := time.Now()
	for i := range done {
		m.unstartLocked(done[i].t, done[i].gen, now)
		done[i] = loopDone{}
	}
	m.mu.Unlock()
	m.lp.Store(nil)
	lp.close()
}

// requeueLoopJobs gives the probes dispatch handed to the event loop back
// to the schedule, due now, when the loop could not be opened.
func (m *Monitor) requeueLoopJobs() {
	m.mu.Lock()
	now := time.Now()
	for i, j := range m.loopJobs {
		m.unstartLocked(j.t, j.gen, now)
		m.loopJobs[i] = loopJob{}
	}
	m.loopJobs = m.loopJobs[:0]
	m.mu.Unlock()
}

// unstartLocked undoes the dispatch of t's probe of generation gen, which
// gave no result: t, unless removed or updated since, is due at now.
func (m *Monitor) unstartLocked(t *monTarget, gen uint32, now time.Time) {
	m.inFlight--
	if t.gen == gen {
		t.cancel = nil
		m.sched.push(t, now)
	}
}

// stopWorkers cancels every probe dispatched and not finished and tells
// every idle worker to exit; busy workers exit when their probe finishes.
// Probe contexts do not derive their cancellation from Run's context (that
// would cost a registration in the parent per probe), so stopping cancels
// them here.
func (m *Monitor) stopWorkers() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stopping = true
	for _, t := range m.targets {
		if t.cancel != nil {
			t.cancel()
		}
	}
	for i, w := range m.idle {
		w.jobs <- monJob{}
		m.idle[i] = nil
	}
	m.idle = m.idle[:0]
}

// dispatch hands every due target to a worker while fewer than Concurrency
// probes run: to the worker that became idle last, or to a new one. It also
// retires workers idle for monWorkerIdle. It returns how long until the
// earliest target is due or the longest-idle worker is to retire, the
// event loop's wake-up grain for it (see monGrain), and false when no timer
// is needed (nothing queued and no idle worker, or every
// worker busy: a finishing or exiting worker wakes the scheduler). base
// is the parent of the probes' contexts. With useLoop, the probes the event
// loop can run go to m.loopJobs instead of a worker; HTTPS probes only
// with tlsRoom too (see evLoop.tlsRoom).
func (m *Monitor) dispatch(ctx, base context.Context, start func(*monWorker, monJob), useLoop, tlsRoom bool) (time.Duration, time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ctx.Err() != nil {
		return 0, 0, false
	}
	now := time.Now()
	m.retireLocked(now)
	var wait time.Duration
	grain := monGrainMin
	armed := false
	for m.inFlight < m.cfg.Concurrency {
		t := m.sched.peek()
		if t == nil {
			break
		}
		if t.due.After(now) {
			wait, armed = t.due.Sub(now), true
			grain = monGrain(t.mach.next)
			break
		}
		if useLoop {
			if lt, ok := t.loop.target(t.prober); ok && (tlsRoom || t.loop.flags&loopRefTLS == 0) {
				m.sched.pop()
				t.cancel = monLoopRunning
				m.inFlight++
				m.loopJobs = append(m.loopJobs, loopJob{t: t, lt: lt, start: now, timeout: t.mach.p.Timeout, gen: t.gen})
				continue
			}
		}
		var w *monWorker
		if n := len(m.idle); n > 0 {
			w = m.idle[n-1]
			m.idle[n-1] = nil
			m.idle = m.idle[:n-1]
		} else if m.workers >= m.cfg.Concurrency {
			break // workers told to retire have not exited yet; each wakes the scheduler when it does
		}
		m.sched.pop()
		pctx, cancel := context.WithTimeout(base, t.mach.p.Timeout)
		t.cancel = cancel
		m.inFlight++
		j := monJob{t: t, gen: t.gen, prober: t.prober, ctx: pctx, cancel: cancel, start: now}
		if w != nil {
			w.jobs <- j
			continue
		}
		m.workers++
		m.peakWorkers = max(m.peakWorkers, m.workers)
		start(&monWorker{jobs: make(chan monJob, 1)}, j)
	}
	if len(m.idle) > 0 {
		// Retire in batches: a quarter of monWorkerIdle after the first is
		// due, so a shrinking pool wakes the scheduler a few times per
		// monWorkerIdle, not once per worker.
		r := m.idle[0].idleSince.Add(monWorkerIdle + monWorkerIdle/4).Sub(now)
		if !armed || r < wait {
			wait, armed, grain = r, true, monGrainMin
		}
	}
	return wait, grain, armed
}

// retireLocked tells the workers idle for monWorkerIdle or longer to exit.
// m.idle is in the order the workers became idle, so they are a prefix.
func (m *Monitor) retireLocked(now time.Time) {
	k := 0
	for k < len(m.idle) && now.Sub(m.idle[k].idleSince) >= monWorkerIdle {
		m.idle[k].jobs <- monJob{}
		k++
	}
	if k == 0 {
		return
	}
	n := copy(m.idle, m.idle[k:])
	clear(m.idle[n:])
	m.idle = m.idle[:n]
}

// work is one worker: it runs the job it was started with, then the jobs
// the scheduler sends it, until it is told to exit or Run stops.
func (m *Monitor) work(ctx context.Context, w *monWorker, j monJob) {
	for {
		var r Result
		if err := j.ctx.Err(); errors.Is(err, context.Canceled) {
			// Removed, updated or stopping since it was dispatched: do not
			// start it; finish drops the result.
			r = Result{Status: Fail, Kind: KindOther, Detail: "cancelled before it started"}
		} else if err != nil {
			// The worker ran it only after its deadline: not the target's doing.
			dl, _ := j.ctx.Deadline()
			r = probeLate(time.Since(dl))
		} else {
			r = m.probe(j)
		}
		j.cancel()
		if !m.finish(ctx, w, j, r) {
			return
		}
		if j = <-w.jobs; j.t == nil {
			m.mu.Lock()
			m.workers--
			m.mu.Unlock()
			m.signal() // the scheduler may wait for a worker slot
			return
		}
	}
}

// probe runs one probe, turning a panic of the prober into a failure.
func (m *Monitor) probe(j monJob) (r Result) {
	defer func() {
		if v := recover(); v != nil {
			m.log.Error("probe: prober panicked", "target", j.t.id, "panic", v)
			r = Result{Status: Fail, Kind: KindOther, Detail: fmt.Sprintf("prober panicked: %v", v)}
		}
	}()
	return j.prober.Probe(j.ctx)
}

// finish gives a result to the target's machine, records it, queues any
// transition and schedules the next probe. Results of removed or updated
// targets, and of probes cut short because Run is stopping, are dropped.
// It then puts worker w on the idle list and reports true, or, when Run is
// stopping, counts w out and reports false: w must exit.
func (m *Monitor) finish(ctx context.Context, w *monWorker, j monJob, r Result) bool {
	m.mu.Lock()
	full := m.inFlight == m.cfg.Concurrency
	m.inFlight--
	now := time.Now()
	stay := m.idleLocked(w, now)
	queued, sent := m.resultLocked(ctx, j.t, j.gen, j.start, r, now)
	wake := full || queued && m.sched.first(j.t)
	m.mu.Unlock()
	if wake {
		m.signal()
	}
	if sent {
		monSignal(m.evWake)
	}
	return stay
}

// resultLocked gives the result of t's probe of generation gen, started at
// start, to its machine, records it, queues any transition and schedules
// the next probe. Results of removed or updated targets, and of probes cut
// short because Run is stopping, are dropped (a stopping Run leaves the
// target due at once, for the next Run). It reports whether t was queued
// and whether an event was.
func (m *Monitor) resultLocked(ctx context.Context, t *monTarget, gen uint32, start time.Time, r Result, now time.Time) (queued, sent bool) {
	if t.gen != gen { // removed or updated since
		return false, false
	}
	t.cancel = nil
	if ctx.Err() != nil {
		// Stopping: the result is an artefact of the cancellation.
		m.sched.push(t, now)
		return true, false
	}
	if r.Latency <= 0 {
		r.Latency = now.Sub(start)
	}
	// The next delay runs from when this probe was due, t.due (still the
	// due time it was dispatched at), if it started at most two grains
	// after it: the event loop's grain and the timer's own lateness do not
	// add up, round after round. A probe that started later than that (no
	// free worker, a busy machine) counts from its start: being late does
	// not make the next probe come sooner.
	origin := start
	if late := start.Sub(t.due); late >= 0 && late <= 2*monGrain(t.mach.next) {
		origin = t.due
	}
	step := t.mach.Observe(now, r)
	t.st.record(now, r, m.cfg.LatencySmoothing)
	sent = m.stepLocked(t, step)
	sent = m.recordLocalLocked(now, r) || sent
	d := max(t.mach.p.jitter().Apply(step.Next, m.rng), monMinDelay)
	due := origin.Add(d)
	if due.Before(now) {
		due = now
	}
	m.sched.push(t, due)
	return true, sent
}

// idleLocked puts w, whose probe just finished, on the idle list and
// reports true; when Run is stopping it counts w out instead and reports
// false.
func (m *Monitor) idleLocked(w *monWorker, now time.Time) bool {
	if m.stopping {
		m.workers--
		return false
	}
	w.idleSince = now
	m.idle = append(m.idle, w)
	return true
}

// MonitorDrainEvents bounds how long Run takes to return once its context
// is done: after that moment the observer is handed at most this many
// more events (Event and DegradedEvent alike), beyond the Observe call
// already in progress; the events still queued after them, and those
// queued while Run winds down, are dropped, the oldest delivered first and
// the newest dropped. DroppedEvents counts them and the Monitor's logger
// reports each Run's count at Warn level. A dropped event's change is not
// lost to the Monitor: Stats and Snapshot report every target's current
// state, which is what an observer that resumes should read.
const MonitorDrainEvents = 16

// deliver hands queued events to the observer, one at a time, in order,
// outside the lock, until stop is closed and the queue is empty. Once ctx
// is done it hands over at most MonitorDrainEvents more and drops the rest
// (see MonitorDrainEvents). An event is handed over only if its target is still in the Monitor, checked under
// the lock at the moment it is taken off the queue; while the observer
// holds it, m.delivering names its target so that Remove can wait for the
// hand-over to end (see Remove).
func (m *Monitor) deliver(ctx context.Context, stop <-chan struct{}) {
	g := monGoroutine()
	m.mu.Lock()
	m.deliverGo = g
	m.mu.Unlock()
	budget := -1 // events left to deliver after ctx is done; -1 until then
	done := ctx.Done()
	var dropped uint64
	defer func() {
		if dropped > 0 {
			m.log.Warn("probe: events dropped when Run stopped (observer too slow)",
				"dropped", dropped, "delivered after stop", MonitorDrainEvents)
		}
	}()
	for {
		if budget < 0 && ctx.Err() != nil {
			budget, done = MonitorDrainEvents, nil
		}
		m.mu.Lock()
		if m.delivering != nil {
			m.delivering = nil
			m.delivered.Broadcast()
		}
		if budget == 0 {
			dropped += m.dropQueuedLocked()
		}
		var ev Event
		var deg *DegradedEvent
		found := false
		for m.evHead < len(m.events) && !found {
			e := m.events[m.evHead]
			m.events[m.evHead] = monEvent{}
			m.evHead++
			if e.deg != nil {
				deg, found = e.deg, true
			} else if m.targets[e.ev.Target] == e.t {
				m.seq++
				ev, found = e.ev, true
				ev.Seq = m.seq
				m.delivering = e.t
			}
		}
		if m.evHead == len(m.events) {
			m.events, m.evHead = m.events[:0], 0
		}
		m.mu.Unlock()
		if found && budget > 0 {
			budget--
		}
		if deg != nil {
			m.dobs.ObserveDegraded(*deg)
			continue
		}
		if found {
			m.obs.Observe(ev)
			continue
		}
		select {
		case <-m.evWake:
		case <-done:
		case <-stop:
			m.mu.Lock()
			empty := m.evHead == len(m.events)
			if empty {
				m.deliverGo = 0
			}
			m.mu.Unlock()
			if empty {
				return
			}
		}
	}
}

// dropQueuedLocked empties the event queue and returns how many events it
// held that would have been delivered (those of removed targets would not).
func (m *Monitor) dropQueuedLocked() uint64 {
	var n uint64
	for i := m.evHead; i < len(m.events); i++ {
		if e := m.events[i]; e.deg != nil || m.targets[e.ev.Target] == e.t {
			n++
		}
		m.events[i] = monEvent{}
	}
	m.events, m.evHead = m.events[:0], 0
	m.dropped += n
	return n
}

// DroppedEvents returns how many events the Monitor dropped, since
// NewMonitor, because its observer had not taken them when a Run stopped
// (see MonitorDrainEvents).
func (m *Monitor) DroppedEvents() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dropped
}
