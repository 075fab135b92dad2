package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/heartbeat"
)

// errThrottled is what the simulated provider answers while it throttles
// a controller: an error judged by behaviour (Throttled), as any
// provider's rate-limit error would be.
type errThrottled struct{}

func (errThrottled) Error() string   { return "simulated provider: rate exceeded" }
func (errThrottled) Throttled() bool { return true }

// throttleStore is a controller's heartbeat store: its view, whose writes
// the script can make fail as throttled (the -throttle step). Reads always
// pass. Safe for concurrent use.
type throttleStore struct {
	*view
	on atomic.Bool
}

// SetRecords fails with a throttled error while the throttle is on.
func (s *throttleStore) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	if s.on.Load() {
		return nil, errThrottled{}
	}
	return s.view.SetRecords(ctx, zone, recs)
}

// publisherEvents prints what a publisher does about throttling: the first
// throttled write of a spell, self-heal beats, and the recovering state.
type publisherEvents struct {
	c         *controller
	next      heartbeat.Observer
	throttled [3]bool // by scope: inside a spell of throttled writes
	// recovering is each scope's state as last observed, set after the
	// metrics saw the event (so a script waiting on it scrapes them right).
	recovering [3]atomic.Bool
}

// anyRecovering reports whether either scope was last seen recovering.
func (p *publisherEvents) anyRecovering() bool {
	return p.recovering[heartbeat.Local].Load() || p.recovering[heartbeat.Global].Load()
}

func (p *publisherEvents) Observe(e heartbeat.Event) {
	if p.next != nil {
		p.next.Observe(e)
	}
	if rc, ok := e.(heartbeat.RecoveringChanged); ok && rc.Scope.Valid() {
		p.recovering[rc.Scope].Store(rc.Recovering)
	}
	if !p.c.d.settled.Load() {
		return
	}
	switch e := e.(type) {
	case heartbeat.WriteFailed:
		if e.Throttled && !p.throttled[e.Scope] {
			p.throttled[e.Scope] = true
			p.c.out.event(p.c.cl.name, fmt.Sprintf("%s beat: write throttled (%v); retrying", e.Scope, e.Err))
		}
	case heartbeat.BeatWritten:
		if p.throttled[e.Scope] || e.Beat.SelfHeal {
			p.throttled[e.Scope] = false
			what := "beat written again"
			if e.Beat.SelfHeal {
				what = fmt.Sprintf("self-heal beat written, stamped %s ahead", e.Beat.Time.Sub(e.At).Round(time.Second))
			}
			p.c.out.event(p.c.cl.name, fmt.Sprintf("%s %s", e.Scope, what))
		}
	case heartbeat.RecoveringChanged:
		what := "recovering from rate limiting"
		if !e.Recovering {
			what = "recovered from rate limiting (a normal beat read back)"
		}
		p.c.out.event(p.c.cl.name, fmt.Sprintf("%s heartbeat %s", e.Scope, what))
	}
}
