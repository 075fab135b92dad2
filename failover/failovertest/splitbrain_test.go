package failovertest_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/gslbkit/gslb/failover/failovertest"
)

// sharedWrites counts the writes to the names every controller writes.
func sharedWrites(s *failovertest.Scenario, w *failovertest.World) map[string]int {
	return map[string]int{
		s.AppName():      w.Writes(s.AppName()),
		s.GlobalName():   w.Writes(s.GlobalName()),
		s.FailoverName(): w.Writes(s.FailoverName()),
	}
}

// TestSplitBrain: eu and us cannot read each other's beats for five
// minutes but every write still lands (the failover package's split-brain rules). Each region
// keeps serving its own healthy gateways — a gateway failing in eu during
// the partition leaves eu's answer — the shared names are not rewritten
// back and forth (the only shared write is eu removing its own failed
// gateway from the failover set, once), and after healing everyone
// converges within one reconcile, with no write after that.
func TestSplitBrain(t *testing.T) {
	cfg := failovertest.DefaultConfig()
	s := neverEmpty(twoRegions(cfg), "eu", "us")
	app := s.AppName()
	us := s.RegionAddrs("us")
	interval := time.Duration(cfg.Heartbeat.ReconcileInterval)
	var atPartition, atHeal map[string]int

	s.At(30*time.Second).Partition("eu", "us").
		Do("count shared writes", func(_ *testing.T, w *failovertest.World) { atPartition = sharedWrites(s, w) })
	s.At(60*time.Second).GatewayDown("eu-a").
		ExpectWithin(cfg.GatewayBound(), "eu", app, s.Addrs("eu-b")...)
	for _, at := range []time.Duration{2 * time.Minute, 4 * time.Minute, 6 * time.Minute} {
		s.At(at).
			Expect("eu", app, s.Addrs("eu-b")...).
			Expect("us", app, us...).
			Expect("eu", s.GlobalName(), s.Addrs("eu-b")...).
			Expect("us", s.GlobalName(), us...)
	}
	s.At(6*time.Minute).Do("no oscillation", func(t *testing.T, w *failovertest.World) {
		now := sharedWrites(s, w)
		assert.Equal(t, atPartition[app], now[app], "app name rewritten during the partition")
		assert.Equal(t, atPartition[s.GlobalName()], now[s.GlobalName()], "global name rewritten during the partition")
		assert.Equal(t, atPartition[s.FailoverName()]+1, now[s.FailoverName()],
			"failover name: one write (eu removes its own failed gateway), no flip-flop")
		for _, c := range []string{"eu-1", "us-1"} {
			d, ok := w.Decision(c)
			assert.True(t, ok)
			assert.False(t, d.FailingOver, "%s fails over on a partition", c)
		}
	})
	s.At(6*time.Minute+time.Second).Heal("eu", "us").
		ExpectWithin(interval, "us", s.FailoverName(), cat(s.Addrs("eu-b"), us)...).
		ExpectWithin(interval, "eu", s.FailoverName(), cat(s.Addrs("eu-b"), us)...).
		ExpectWithin(interval, "eu", app, s.Addrs("eu-b")...).
		ExpectWithin(interval, "us", app, us...).
		Do("count shared writes", func(_ *testing.T, w *failovertest.World) { atHeal = sharedWrites(s, w) })
	s.At(6*time.Minute+time.Second+interval).Do("converged in one reconcile", func(_ *testing.T, w *failovertest.World) {
		atHeal = sharedWrites(s, w)
	})
	s.At(10*time.Minute).Do("steady after healing", func(t *testing.T, w *failovertest.World) {
		assert.Equal(t, atHeal, sharedWrites(s, w), "shared names written after the first reconcile since healing")
	})
	s.Run(t)
}

// TestPartitionHidesDeath: while eu cannot read us's beats, us's
// controllers die. Unknown is no evidence, so eu does not fail us over
// (the global name is held; us's clients keep us's regional record, whose
// gateways still serve). Once the partition heals, eu reads us's beats
// stale and fails us over within one reconcile.
func TestPartitionHidesDeath(t *testing.T) {
	cfg := failovertest.DefaultConfig()
	s := neverEmpty(twoRegions(cfg), "eu", "us")
	app := s.AppName()
	eu, us := s.RegionAddrs("eu"), s.RegionAddrs("us")
	interval := time.Duration(cfg.Heartbeat.ReconcileInterval)
	var before int
	s.At(30*time.Second).Partition("eu", "us")
	s.At(time.Minute).ControllerDown("us-1").
		Do("count", func(_ *testing.T, w *failovertest.World) { before = w.Writes(s.GlobalName()) })
	s.At(4*time.Minute).
		Expect("eu", app, eu...).
		Expect("us", app, us...).
		Do("global name held", func(t *testing.T, w *failovertest.World) {
			assert.Equal(t, before, w.Writes(s.GlobalName()))
			d, ok := w.Decision("eu-1")
			assert.True(t, ok)
			assert.False(t, d.FailingOver)
			assert.Empty(t, d.GlobalTarget, "held")
		})
	s.At(4*time.Minute).Heal("eu", "us").
		ExpectWithin(interval, "us", app, eu...).
		ExpectWithin(interval, "eu", app, eu...)
	s.Run(t)
}
