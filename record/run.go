package record

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/gslbkit/gslb/internal/backoff"
	"github.com/gslbkit/gslb/internal/errclass"
)

// Run reconciles until ctx is done: once at the start, whenever Set gives
// a new desired state, every Config.ResyncInterval (re-reading the zones
// repairs drift on owned names), and after a throttled or transient failure
// with jittered exponential back-off (RetryBase doubling up to RetryMax;
// a throttled failure backs off twice as far). While it backs off, the
// back-off holds: a Set updates the desired state but does not start a
// reconcile, nor does a resync; the pending retry applies the newest
// desired state. A permanent failure is reported (ErrorEvent) and not
// retried before the next Set or resync; the desired state stays pending
// until it is applied. Run returns nil when
// ctx is done, after its last reconcile has returned; it starts no other
// goroutines. Only one Run may be active (ErrRunning).
func (r *Reconciler) Run(ctx context.Context) error {
	if r.p == nil {
		return ErrNotConfigured
	}
	if !r.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer r.running.Store(false)
	resync := time.NewTimer(r.cfg.ResyncInterval)
	defer resync.Stop()
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	bo := backoff.Exponential{Base: r.cfg.RetryBase, Max: r.cfg.RetryMax, Factor: 2, Jitter: r.cfg.RetryJitter}
	attempt := 0
	for {
		// This reconcile applies the newest desired state: a wake-up
		// already queued by Set would only repeat it.
		select {
		case <-r.wake:
		default:
		}
		_, errs := r.reconcile(ctx)
		if ctx.Err() != nil {
			return nil
		}
		resync.Reset(r.cfg.ResyncInterval)
		retry.Stop()
		wake, resyncC := (<-chan struct{})(r.wake), resync.C
		switch c := worst(errs); {
		case c.Retryable():
			attempt++
			n := attempt - 1
			if c == errclass.Throttled {
				n++
			}
			d := bo.Delay(n, rnd{})
			retry.Reset(d)
			r.emit(RetryEvent{At: time.Now(), Attempt: attempt, Delay: d, Err: errors.Join(errs...)})
			r.log.Info("record: will retry", "attempt", attempt, "delay", d)
			// Back off: only the retry (or ctx) ends the wait.
			wake, resyncC = nil, nil
		default:
			attempt = 0
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-resyncC:
		case <-retry.C:
		}
	}
}

// worst returns the class Run reacts to: throttled if any error is
// throttled, else transient if any is, else permanent (None without
// errors).
func worst(errs []error) errclass.Class {
	c := errclass.None
	for _, err := range errs {
		switch errclass.Of(err) {
		case errclass.Throttled:
			return errclass.Throttled
		case errclass.Transient:
			c = errclass.Transient
		case errclass.Permanent:
			if c == errclass.None {
				c = errclass.Permanent
			}
		}
	}
	return c
}

// rnd draws jitter from the runtime's random source (safe for concurrent use).
type rnd struct{}

// Float64 returns a number in [0, 1).
func (rnd) Float64() float64 { return rand.Float64() }
