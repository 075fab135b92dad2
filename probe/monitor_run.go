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

// monJob is one probe handed from the scheduler to a worker. The context
// travels with the message only; it is the probe's own, with the policy's
// timeout as its deadline.
type monJob struct {
	t      *monTarget
	gen    uint64
	prober Prober
	ctx    context.Context
	cancel context.CancelFunc
	start  time.Time
}

// Run probes the targets until ctx is done, then cancels the probes still
// running, waits for every worker, delivers the events still queued, and
// returns nil. It starts MonitorConfig.Concurrency workers, one scheduler
// and, with an Observer, one goroutine delivering events; no other
// goroutine, whatever the number of targets. Each probe gets a context
// carrying ctx's values, the policy's timeout as its deadline, and cancelled
// when its target is removed or updated or when Run stops. Targets and their state survive Run: a later Run continues with them.
// Errors: ErrMonitorRunning when another Run is running.
func (m *Monitor) Run(ctx context.Context) error {
	m.mu.Lock()
	if m.running {
		m.mu.Unlock()
		return ErrMonitorRunning
	}
	m.running = true
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.running = false
		m.mu.Unlock()
	}()

	jobs := make(chan monJob, m.cfg.Concurrency)
	var workers sync.WaitGroup
	for range m.cfg.Concurrency {
		workers.Go(func() { m.work(ctx, jobs) })
	}
	stopDelivery := make(chan struct{})
	var delivery sync.WaitGroup
	if m.obs != nil {
		delivery.Go(func() { m.deliver(stopDelivery) })
	}

	m.schedule(ctx, jobs)
	m.cancelRunning()
	close(jobs)
	workers.Wait()
	close(stopDelivery)
	delivery.Wait()
	return nil
}

// schedule is the scheduler loop: it owns the one timer, armed for the
// earliest due target while a worker is free, and returns when ctx is done.
func (m *Monitor) schedule(ctx context.Context, jobs chan<- monJob) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		if wait, armed := m.dispatch(ctx, jobs); armed {
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
	}
}

// cancelRunning cancels every probe dispatched and not finished. Probe
// contexts do not derive their cancellation from Run's context (that would
// cost a registration in the parent per probe), so stopping cancels them here.
func (m *Monitor) cancelRunning() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range m.targets {
		if t.cancel != nil {
			t.cancel()
		}
	}
}

// dispatch hands every due target to the pool while workers are free. It
// returns how long until the earliest target is due, and false when no timer
// is needed (no target, or every worker busy: a finishing worker wakes the
// scheduler). The jobs channel has one slot per worker and at most
// Concurrency jobs are out, so the send never blocks.
func (m *Monitor) dispatch(ctx context.Context, jobs chan<- monJob) (time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ctx.Err() != nil {
		return 0, false
	}
	now := time.Now()
	base := context.WithoutCancel(ctx) // values only; see cancelRunning
	for m.inFlight < m.cfg.Concurrency {
		t := m.heap.peek()
		if t == nil {
			return 0, false
		}
		if t.due.After(now) {
			return t.due.Sub(now), true
		}
		m.heap.pop()
		pctx, cancel := context.WithTimeout(base, t.timeout)
		t.cancel, t.inFlight = cancel, true
		m.inFlight++
		jobs <- monJob{t: t, gen: t.gen, prober: t.prober, ctx: pctx, cancel: cancel, start: now}
	}
	return 0, false
}

// work is one worker of the pool: it runs the probes it is handed and feeds
// their results back until jobs is closed.
func (m *Monitor) work(ctx context.Context, jobs <-chan monJob) {
	for j := range jobs {
		var r Result
		if errors.Is(j.ctx.Err(), context.Canceled) {
			// Removed, updated or stopping since it was dispatched: do not
			// start it; finish drops the result.
			r = Result{Status: Fail, Kind: KindOther, Detail: "cancelled before it started"}
		} else {
			r = m.probe(j)
		}
		j.cancel()
		m.finish(ctx, j, r)
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
func (m *Monitor) finish(ctx context.Context, j monJob, r Result) {
	t := j.t
	m.mu.Lock()
	full := m.inFlight == m.cfg.Concurrency
	m.inFlight--
	if t.removed || t.gen != j.gen {
		m.mu.Unlock()
		if full {
			monSignal(m.wake)
		}
		return
	}
	t.cancel, t.inFlight = nil, false
	now := time.Now()
	if ctx.Err() != nil {
		// Stopping: the result is an artefact of the cancellation. Keep the
		// target due at once for the next Run.
		m.heap.push(t, now)
		m.mu.Unlock()
		return
	}
	if r.Latency <= 0 {
		r.Latency = now.Sub(j.start)
	}
	step := t.mach.Observe(now, r)
	t.st.record(now, r, m.cfg.LatencySmoothing)
	sent := m.stepLocked(t, step)
	d := max(t.jitter.Apply(step.Next, m.rng), monMinDelay)
	due := j.start.Add(d)
	if due.Before(now) {
		due = now
	}
	m.heap.push(t, due)
	wake := full || t.idx == 0
	m.mu.Unlock()
	if wake {
		monSignal(m.wake)
	}
	if sent {
		monSignal(m.evWake)
	}
}

// deliver hands queued events to the observer, in order, outside the lock,
// until stop is closed and the queue is empty.
func (m *Monitor) deliver(stop <-chan struct{}) {
	var batch []Event
	for {
		m.mu.Lock()
		batch, m.events = m.events, batch[:0]
		m.mu.Unlock()
		for i := range batch {
			m.obs.Observe(batch[i])
			batch[i] = Event{}
		}
		if len(batch) > 0 {
			continue
		}
		select {
		case <-m.evWake:
		case <-stop:
			m.mu.Lock()
			empty := len(m.events) == 0
			m.mu.Unlock()
			if empty {
				return
			}
		}
	}
}
