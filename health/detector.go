package health

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// OutlierObserver receives a Detector's events.
type OutlierObserver interface {
	Observe(OutlierEvent)
}

// OutlierObserverFunc adapts a function to OutlierObserver.
type OutlierObserverFunc func(OutlierEvent)

// Observe calls f(e).
func (f OutlierObserverFunc) Observe(e OutlierEvent) { f(e) }

// Detector makes an Outlier safe for concurrent use and hands its events to
// an observer: in the order they happened, outside the detector's lock, one
// at a time (an observer may call back into the Detector; its events are
// delivered after the current one). Methods take the current time, like the
// core, so tests stay in virtual time.
type Detector struct {
	mu         sync.Mutex
	core       *Outlier
	obs        OutlierObserver
	queue      []OutlierEvent
	delivering bool
	buf        []OutlierEvent
	running    atomic.Bool
}

// NewDetector returns a concurrency-safe detector; obs may be nil.
func NewDetector(cfg OutlierConfig, obs OutlierObserver) (*Detector, error) {
	core, err := NewOutlier(cfg)
	if err != nil {
		return nil, err
	}
	return &Detector{core: core, obs: obs}, nil
}

// Add adds an endpoint.
func (d *Detector) Add(ep string) {
	d.mu.Lock()
	d.c().Add(ep)
	d.mu.Unlock()
}

// Remove forgets an endpoint.
func (d *Detector) Remove(ep string) {
	d.mu.Lock()
	d.c().Remove(ep)
	d.mu.Unlock()
}

// Ejected reports whether ep is ejected now.
func (d *Detector) Ejected(ep string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.c().Ejected(ep)
}

// Healthy reports whether ep passes both its active checks (activeServed)
// and the detector.
func (d *Detector) Healthy(ep string, activeServed bool) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.c().Healthy(ep, activeServed)
}

// Report records one outcome (see Outlier.Report) and reports whether it
// ejected the endpoint.
func (d *Detector) Report(now time.Time, ep string, o Outcome) bool {
	d.mu.Lock()
	ev, ok := d.c().Report(now, ep, o)
	if ok && d.obs != nil {
		d.queue = append(d.queue, ev)
	}
	d.deliverLocked()
	return ok
}

// ActiveCheckPassed ends ep's ejection early (see Outlier.ActiveCheckPassed).
func (d *Detector) ActiveCheckPassed(now time.Time, ep string) bool {
	d.mu.Lock()
	ev, ok := d.c().ActiveCheckPassed(now, ep)
	if ok && d.obs != nil {
		d.queue = append(d.queue, ev)
	}
	d.deliverLocked()
	return ok
}

// Tick runs the periodic analysis (see Outlier.Tick) and returns how many
// events it produced.
func (d *Detector) Tick(now time.Time) int {
	d.mu.Lock()
	d.buf = d.c().Tick(now, d.buf[:0])
	n := len(d.buf)
	if d.obs != nil {
		d.queue = append(d.queue, d.buf...)
	}
	d.deliverLocked()
	return n
}

// Run calls Tick every configured interval until ctx is done; it reads the
// clock with time.Now and returns nil when ctx ends.
func (d *Detector) Run(ctx context.Context) error {
	if !d.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer d.running.Store(false)
	d.mu.Lock()
	iv := d.c().Config().Interval
	d.mu.Unlock()
	t := time.NewTicker(iv)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			d.Tick(now)
		}
	}
}

// deliverLocked is called with d.mu held and returns with it released. The
// first caller to find events queued delivers them, and any queued while it
// does, outside the lock; others leave theirs for it.
func (d *Detector) deliverLocked() {
	if d.delivering || len(d.queue) == 0 {
		d.mu.Unlock()
		return
	}
	d.delivering = true
	for len(d.queue) > 0 {
		batch := d.queue
		d.queue = nil
		d.mu.Unlock()
		for _, ev := range batch {
			d.obs.Observe(ev)
		}
		d.mu.Lock()
	}
	d.delivering = false
	d.mu.Unlock()
}

// c returns the core, made with the default OutlierConfig for a zero
// Detector (which is usable: no observer, the defaults). Called with d.mu
// held.
func (d *Detector) c() *Outlier {
	if d.core == nil {
		d.core = &Outlier{}
	}
	return d.core
}
