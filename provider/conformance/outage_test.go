package conformance_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/provider"
	"github.com/gslbkit/gslb/record"
)

// calls records the time and outcome of every provider call, and checks
// that no write asks for an empty set.
type calls struct {
	provider.Provider
	mu  sync.Mutex
	log []call
	bad []string
}

type call struct {
	op  string
	at  time.Time
	err error
}

func (c *calls) note(op string, err error) {
	c.mu.Lock()
	c.log = append(c.log, call{op, time.Now(), err})
	c.mu.Unlock()
}

func (c *calls) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	r, err := c.Provider.GetRecords(ctx, zone)
	c.note("get", err)
	return r, err
}

func (c *calls) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	if len(recs) == 0 {
		c.mu.Lock()
		c.bad = append(c.bad, "SetRecords with no records")
		c.mu.Unlock()
	}
	r, err := c.Provider.SetRecords(ctx, zone, recs)
	c.note("set", err)
	return r, err
}

func (c *calls) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	for _, r := range recs {
		if r.RR().Name == "www" && r.RR().Type == "A" {
			c.mu.Lock()
			c.bad = append(c.bad, "DeleteRecords of the owned set www A")
			c.mu.Unlock()
		}
	}
	r, err := c.Provider.DeleteRecords(ctx, zone, recs)
	c.note("delete", err)
	return r, err
}

func (c *calls) since(t time.Time) []call {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []call
	for _, x := range c.log {
		if !x.at.Before(t) {
			out = append(out, x)
		}
	}
	return out
}

// events hands the reconciler's events to the test.
type events chan record.Event

func (e events) Observe(ev record.Event) { e <- ev }

// TestOutage stops a real RFC 2136 server (BIND, Knot, PowerDNS) under a
// running reconciler, changes the
// desired state several times during the outage, and starts the server
// again on the same port with the same data.
// It checks that no write ever asks for an empty set, that during the
// outage the reconciler calls the server only at the times its back-off
// schedule allows (each attempt at least the announced delay after the
// failure before it; Sets do not start extra attempts), and that it
// converges at the first attempt after the server is back: within one
// back-off delay, at most Config.RetryMax.
func TestOutage(t *testing.T) {
	for _, c := range []struct {
		name  string
		start func(*testing.T, string) *server
	}{{"bind", startBIND}, {"knot", startKnot}, {"pdns", startPDNS}} {
		t.Run(c.name, func(t *testing.T) { outage(t, c.start(t, zone)) })
	}
}

func outage(t *testing.T, s *server) {
	p := &calls{Provider: rfc(t, s)}
	cfg := record.LocalConfig("outage")
	cfg.RetryBase, cfg.RetryMax, cfg.RetryJitter = 100*time.Millisecond, 1600*time.Millisecond, 0.5
	cfg.ResyncInterval = time.Hour
	evs := make(events, 1024)
	r, err := record.New(p, cfg, record.Options{Observer: evs})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() { cancel(); <-done }()
	hang := time.NewTimer(2 * time.Minute)
	defer hang.Stop()
	// wait returns the next event of type T (skipping others).
	wait := func(what string, ok func(record.Event) bool) record.Event {
		t.Helper()
		for {
			select {
			case e := <-evs:
				if ok(e) {
					return e
				}
			case <-hang.C:
				t.Fatalf("hang guard: no %s", what)
			}
		}
	}
	applied := func(e record.Event) bool { _, ok := e.(record.AppliedEvent); return ok }
	desired := func(ips ...string) record.Desired {
		return record.Desired{Sets: []record.RRSet{{Zone: zone, Name: "www", Type: "A", TTL: time.Minute, Values: ips}}}
	}
	if err := r.Set(desired("192.0.2.1", "192.0.2.2")); err != nil {
		t.Fatal(err)
	}
	wait("first apply", applied)

	// The outage.
	s.stop()
	down := time.Now()
	if err := r.Set(desired("192.0.2.1", "192.0.2.3")); err != nil {
		t.Fatal(err)
	}
	var retries []record.RetryEvent
	for len(retries) < 5 {
		e := wait("retry", func(e record.Event) bool { _, ok := e.(record.RetryEvent); return ok })
		retries = append(retries, e.(record.RetryEvent))
		// New desired states during the back-off must not start attempts.
		if err := r.Set(desired("192.0.2.1", "192.0.2."+string(rune('3'+len(retries))))); err != nil {
			t.Fatal(err)
		}
	}
	want := desired("192.0.2.1", "192.0.2.9")
	if err := r.Set(want); err != nil {
		t.Fatal(err)
	}
	during := p.since(down)
	s.restart(t)
	up := time.Now()
	var lateRetries int
	wait("apply after the outage", func(e record.Event) bool {
		if rt, ok := e.(record.RetryEvent); ok && rt.At.After(up) {
			lateRetries++
		}
		return applied(e)
	})
	converged := time.Since(up)
	// Convergence is the first attempt after the server is back: no
	// failure after the restart, so it came within the pending back-off
	// delay (at most RetryMax).
	if lateRetries > 0 {
		t.Errorf("%d failed attempts after the server was back", lateRetries)
	}

	// During the outage: one read per attempt, each attempt at least the
	// announced back-off after the previous failure.
	var attempts []call
	for _, c := range during {
		if c.err == nil {
			t.Errorf("a call succeeded while the server was down: %+v", c)
		}
		attempts = append(attempts, c)
	}
	if len(attempts) > len(retries)+1 {
		t.Errorf("%d calls during the outage for %d scheduled retries: attempts beyond the back-off schedule", len(attempts), len(retries))
	}
	for i := 1; i < len(attempts) && i <= len(retries); i++ {
		gap := attempts[i].at.Sub(attempts[i-1].at)
		if gap < retries[i-1].Delay {
			t.Errorf("attempt %d came %v after the previous one; the back-off announced %v", i+1, gap, retries[i-1].Delay)
		}
	}
	t.Logf("outage: %d attempts, delays %v; converged %v after the restart (bound: the pending back-off delay, at most %v)",
		len(attempts), delays(retries), converged.Round(time.Millisecond), cfg.RetryMax)

	// Never an empty set, and the server holds the newest desired state.
	p.mu.Lock()
	bad := p.bad
	p.mu.Unlock()
	if len(bad) > 0 {
		t.Errorf("writes that empty a set: %v", bad)
	}
	recs, err := p.Provider.GetRecords(context.Background(), zone)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rec := range recs {
		if a, ok := rec.(libdns.Address); ok && a.Name == "www" {
			got = append(got, a.IP.String())
		}
	}
	if len(got) != 2 || !contains(got, "192.0.2.1") || !contains(got, "192.0.2.9") {
		t.Errorf("www A after the outage = %v; want %v", got, want.Sets[0].Values)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func delays(rs []record.RetryEvent) []time.Duration {
	out := make([]time.Duration, len(rs))
	for i, r := range rs {
		out[i] = r.Delay.Round(time.Millisecond)
	}
	return out
}
