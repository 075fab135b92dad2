package probe

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// remObs is an observer for the Remove tests: it records every event,
// hands the first one to the test (got) and holds it until release is
// closed, and runs inObserve, if set, for each event.
type remObs struct {
	mu        sync.Mutex
	events    []Event
	removed   map[string]bool // targets whose Remove has returned
	late      []Event         // events of a target seen after its Remove returned
	got       chan Event
	release   chan struct{}
	first     atomic.Bool
	inObserve func(Event)
}

func newRemObs() *remObs {
	return &remObs{removed: map[string]bool{}, got: make(chan Event, 1), release: make(chan struct{})}
}

func (o *remObs) Observe(e Event) {
	o.mu.Lock()
	o.events = append(o.events, e)
	if o.removed[e.Target] {
		o.late = append(o.late, e)
	}
	o.mu.Unlock()
	if o.first.CompareAndSwap(false, true) {
		o.got <- e
		<-o.release
	}
	if o.inObserve != nil {
		o.inObserve(e)
	}
}

// remove removes id and marks it removed once Remove has returned.
func (o *remObs) remove(t *testing.T, m *Monitor, id string) {
	require.NoError(t, m.Remove(id))
	o.mu.Lock()
	o.removed[id] = true
	o.mu.Unlock()
}

func (o *remObs) snapshot() (events, late []Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]Event(nil), o.events...), append([]Event(nil), o.late...)
}

// remFlap passes and fails in turn: with thresholds of 1 every probe is a
// transition, so the target always has events to deliver.
func remFlap() Prober {
	var n atomic.Int64
	return ProberFunc(func(context.Context) Result {
		if n.Add(1)%2 == 1 {
			return Result{Status: Fail, Kind: KindRefused, Latency: time.Millisecond}
		}
		return Result{Status: Pass, Latency: time.Millisecond}
	})
}

func remPolicy() Policy {
	p := DefaultPolicy()
	p.Interval, p.Timeout = time.Second, 500*time.Millisecond
	p.WarningThreshold, p.CriticalThreshold, p.MaxBackoff = 1, 1, time.Second
	return p
}

// TestMonitorRemoveDropsQueuedEvents: events of a target queued while the
// observer is busy are not delivered once Remove has returned (they were,
// before: the deliverer handed over whatever was queued).
func TestMonitorRemoveDropsQueuedEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newRemObs()
		m := monNew(t, o, func(c *MonitorConfig) { c.NoEventLoop = true })
		for _, id := range []string{"x", "y"} {
			require.NoError(t, m.Add(Target{ID: id, Prober: remFlap(), Policy: remPolicy()}))
		}
		stop := monStart(t, m)
		held := <-o.got
		other := "x"
		if held.Target == "x" {
			other = "y"
		}
		time.Sleep(5 * time.Second) // virtual: the other target's events queue up
		synctest.Wait()
		o.remove(t, m, other)
		close(o.release)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		stop()
		events, late := o.snapshot()
		assert.Empty(t, late, "events of %q after its Remove returned", other)
		var seqs []uint64
		held2 := 0
		for _, e := range events {
			seqs = append(seqs, e.Seq)
			if e.Target == held.Target {
				held2++
			}
		}
		assert.Greater(t, held2, 3, "the remaining target's events keep coming")
		for i, s := range seqs {
			assert.Equal(t, uint64(i+1), s, "Seq has no gaps")
		}
	})
}

// TestMonitorRemoveWaitsForEventInHand: Remove from another goroutine while
// the observer holds one of the target's events returns only after that
// Observe call, and no event of the target follows.
func TestMonitorRemoveWaitsForEventInHand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newRemObs()
		m := monNew(t, o, func(c *MonitorConfig) { c.NoEventLoop = true })
		require.NoError(t, m.Add(Target{ID: "x", Prober: remFlap(), Policy: remPolicy()}))
		stop := monStart(t, m)
		<-o.got
		time.Sleep(3 * time.Second) // more events of x queue behind the one in hand
		synctest.Wait()
		var returned atomic.Bool
		done := make(chan struct{})
		go func() {
			o.remove(t, m, "x")
			returned.Store(true)
			close(done)
		}()
		synctest.Wait()
		assert.False(t, returned.Load(), "Remove returned while the observer held the target's event")
		close(o.release)
		<-done
		time.Sleep(3 * time.Second)
		synctest.Wait()
		stop()
		events, late := o.snapshot()
		assert.Len(t, events, 1, "only the event in hand was delivered")
		assert.Empty(t, late)
	})
}

// TestMonitorRemoveFromObserver: the observer contract allows Remove from
// inside Observe; it must not deadlock, and the event in hand is the last
// one of the target. Removing another target from inside drops its queue.
func TestMonitorRemoveFromObserver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newRemObs()
		close(o.release)
		m := monNew(t, o, func(c *MonitorConfig) { c.NoEventLoop = true })
		var errs []error
		o.inObserve = func(e Event) {
			if e.Target == "self" || e.Target == "other-trigger" {
				id := e.Target
				if id == "other-trigger" {
					id = "other"
				}
				if _, ok := m.Stats(id); ok {
					err := m.Remove(id)
					errs = append(errs, err)
					if err == nil {
						o.mu.Lock()
						o.removed[id] = true
						o.mu.Unlock()
					}
				}
			}
		}
		for _, id := range []string{"self", "other", "other-trigger", "keep"} {
			require.NoError(t, m.Add(Target{ID: id, Prober: remFlap(), Policy: remPolicy()}))
		}
		stop := monStart(t, m)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		stop()
		events, late := o.snapshot()
		assert.Empty(t, late)
		for _, err := range errs {
			assert.NoError(t, err)
		}
		count := map[string]int{}
		for _, e := range events {
			count[e.Target]++
		}
		assert.Equal(t, 1, count["self"], "the event in hand is the target's last")
		assert.Greater(t, count["keep"], 5)
		assert.Equal(t, 2, m.Len())
	})
}

// TestMonitorRemoveRealSockets runs the Remove rules with real probes, in
// the event loop (Linux) and on workers: x's connect is refused, so it
// goes critical; y passes and is forced critical by Override while the
// observer holds x's event; Remove(y) then drops y's queued event, and x
// is removed from inside the observer without a deadlock.
func TestMonitorRemoveRealSockets(t *testing.T) {
	for _, noLoop := range []bool{false, true} {
		name := "event loop"
		if noLoop {
			name = "workers"
		}
		t.Run(name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			refused := ln.Addr().String()
			require.NoError(t, ln.Close())
			open := probersTCPServer(t, func(net.Conn, <-chan struct{}) {})

			o := newRemObs()
			var inErr atomic.Value
			removedX := make(chan struct{})
			m := monNew(t, o, func(c *MonitorConfig) { c.NoEventLoop = noLoop })
			o.inObserve = func(e Event) {
				if e.Target == "x" {
					if err := m.Remove("x"); err != nil {
						inErr.Store(err)
					}
					close(removedX)
				}
			}
			px, err := NewTCP(refused, TCPConfig{})
			require.NoError(t, err)
			py, err := NewTCP(open, TCPConfig{})
			require.NoError(t, err)
			pol := remPolicy()
			pol.Interval = time.Hour // one probe each, then quiet
			pol.MaxBackoff = time.Hour
			require.NoError(t, m.Add(Target{ID: "x", Prober: px, Policy: pol}))
			require.NoError(t, m.Add(Target{ID: "y", Prober: py, Policy: pol}))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- m.Run(ctx) }()

			var held Event
			select {
			case held = <-o.got:
			case <-ctx.Done():
				t.Fatal("no event within the hang guard")
			}
			require.Equal(t, "x", held.Target, held)
			require.NoError(t, m.Override("y", Critical)) // y's event is queued now
			o.remove(t, m, "y")
			close(o.release)
			select {
			case <-removedX:
			case <-ctx.Done():
				t.Fatal("Remove from inside the observer did not return")
			}
			cancel()
			require.NoError(t, <-done)
			if err, _ := inErr.Load().(error); err != nil {
				t.Fatal(err)
			}
			events, late := o.snapshot()
			assert.Empty(t, late)
			require.Len(t, events, 1, "only x's event: y's was dropped by Remove")
			assert.Equal(t, Critical, events[0].Transition.To)
			assert.Zero(t, m.Len())
		})
	}
}

// TestMonitorRemoveLeavesSchedule: a removed target leaves the schedule
// (the Monitor's count of queued targets with it), and a target added
// later is scheduled and probed like any other.
func TestMonitorRemoveLeavesSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, err := NewMonitor(MonitorConfig{Seed: 1, NoEventLoop: true}, nil, nil)
		require.NoError(t, err)
		var probes atomic.Int64
		p := ProberFunc(func(context.Context) Result { probes.Add(1); return Result{Status: Pass} })
		pol := DefaultPolicy()
		pol.Interval = time.Second
		for _, id := range []string{"a", "b", "c"} {
			require.NoError(t, m.Add(Target{ID: id, Prober: p, Policy: pol}))
		}
		old := m.targets["b"]
		require.NoError(t, m.Remove("b"))
		assert.False(t, m.sched.queued(old), "a removed target is not queued")
		assert.Equal(t, 2, m.sched.Len())
		require.NoError(t, m.Add(Target{ID: "d", Prober: p, Policy: pol}))
		assert.Equal(t, 3, m.sched.Len())
		st, ok := m.Stats("d")
		require.True(t, ok)
		assert.False(t, st.NextProbe.IsZero(), "the new target is queued")

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- m.Run(ctx) }()
		time.Sleep(2500 * time.Millisecond)
		synctest.Wait()
		cancel()
		require.NoError(t, <-done)
		st, _ = m.Stats("d")
		assert.GreaterOrEqual(t, st.Probes, uint64(2), "the target added after the removal is probed on schedule")
		assert.EqualValues(t, 3*st.Probes, probes.Load(), "a, c and d alike; b no more")
	})
}
