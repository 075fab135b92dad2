package main

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/record"
)

// TestConcurrentPublishesLeaveTheLatestState: publish runs from several
// goroutines (the Monitor's deliverer, the startup hold's end, operator
// calls). One that read the addresses' health before a change and handed
// its desired state to the reconciler after the changed one's must not
// win: the zone then answered a dead address until the next change (the
// torture walk's item03 once, I1 on the controller: a backend that died
// as the startup hold ended stayed answered). Here one goroutine publishes
// while another marks an address critical (then passing again) and
// publishes; after both, the zone must answer what the last health says.
func TestConcurrentPublishesLeaveTheLatestState(t *testing.T) {
	c := newTestController(t, apiYAML)
	// The embedded reconciler at its highest write rate, not 100 a second,
	// writing to the zone directly: a round writes once, and past
	// maxSerialLead's worth of writes leadCapped would take one a second.
	lc := record.LocalConfig(c.cfg.OwnerID)
	lc.AllowTypeSwitch = true
	lc.WritesPerSecond, lc.WriteBurst = 10000, 10000
	var err error
	if c.local, err = record.New(c.zone, lc, record.Options{}); err != nil {
		t.Fatal(err)
	}
	a := c.records[0].addrs[0] // 192.0.2.1
	ctx := context.Background()
	for i := range 2000 {
		to := probe.Critical
		if i%2 == 1 {
			to = probe.Passing
		}
		var wg sync.WaitGroup
		started := make(chan struct{})
		wg.Go(func() {
			close(started)
			c.publish()
		})
		<-started
		c.mu.Lock()
		a.state, a.health = to, failover.Health(to)
		c.mu.Unlock()
		c.publish()
		wg.Wait()
		if _, err := c.local.ReconcileOnce(ctx); err != nil {
			t.Fatal(err)
		}
		got := zoneAnswer(c.zone, "app.example.test.")
		if served := slices.Contains(got, "192.0.2.1"); served != to.Served() {
			t.Fatalf("round %d: 192.0.2.1 is %v, the zone answers %v: an older publication overwrote the latest", i, to, got)
		}
	}
}
