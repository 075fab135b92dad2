package record

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/provider/providertest"
)

// switchable sends calls through a fault-injecting provider while on is
// set, and straight to the zone otherwise.
type switchable struct {
	faulty, clean ZoneEditor
	on            atomic.Bool
}

func (s *switchable) pick() ZoneEditor {
	if s.on.Load() {
		return s.faulty
	}
	return s.clean
}

func (s *switchable) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	return s.pick().GetRecords(ctx, zone)
}

func (s *switchable) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	return s.pick().SetRecords(ctx, zone, recs)
}

func (s *switchable) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	return s.pick().DeleteRecords(ctx, zone, recs)
}

// TestRunConvergesUnderFaults runs the loop in virtual time against the
// memory zone behind providertest.Faulty (throttling, transient and
// permanent errors, partial batches, latency) while the desired state keeps
// changing, then stops the faults: the zone must reach the last desired
// state and stay there without writes.
func TestRunConvergesUnderFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := newMemory(t, "a.test.", "b.test.")
		fy, err := providertest.NewFaulty(mem, providertest.FaultConfig{
			Seed: 7, ThrottleRate: 0.15, TransientRate: 0.15, PermanentRate: 0.05, PartialRate: 0.1,
			Latency: 50 * time.Millisecond, LatencyJitter: 200 * time.Millisecond,
		})
		require.NoError(t, err)
		sw := &switchable{faulty: fy, clean: mem}
		sw.on.Store(true)
		cfg := LocalConfig("dep-1")
		cfg.ResyncInterval = time.Duration(20 * time.Second)
		cfg.RetryBase = time.Duration(200 * time.Millisecond)
		cfg.RetryMax = time.Duration(5 * time.Second)
		rec := &recorder{}
		r, err := New(sw, cfg, Options{Observer: rec})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()

		rng := rand.New(rand.NewPCG(1, 2))
		var last Desired
		for i := 0; i < 200; i++ {
			var d Desired
			for j, zone := range []string{"a.test.", "b.test."} {
				for k := 0; k < 5; k++ {
					var vals []string
					for v := 0; v < rng.IntN(4); v++ {
						vals = append(vals, fmt.Sprintf("192.0.2.%d", 1+rng.IntN(9)))
					}
					d.Sets = append(d.Sets, RRSet{Zone: zone, Name: fmt.Sprintf("n%d-%d", j, k), Type: "A", TTL: 30 * time.Second, Values: vals})
				}
			}
			require.NoError(t, r.Set(d))
			last = d
			time.Sleep(time.Duration(rng.IntN(3000)) * time.Millisecond)
		}
		sw.on.Store(false)
		settle(t, r, 2*time.Minute)
		for _, s := range last.Sets {
			got := Group(s.Zone, mustGet(t, mem, s.Zone))
			var now RRSet
			for _, g := range got {
				if g.Name == s.Name && g.Type == "A" {
					now = g
				}
			}
			if len(s.Values) > 0 {
				assert.True(t, now.Equal(s), "%s: %v, want %v", s.Key(), now.Values, s.Values)
			}
		}
		assert.NotEmpty(t, eventsOf[RetryEvent](rec), "faults were injected and retried")
		assert.NotEmpty(t, eventsOf[HeldStale](rec), "empty sets were held")
		before := len(eventsOf[WriteEvent](rec))
		time.Sleep(10 * cfg.ResyncInterval)
		synctest.Wait()
		assert.Equal(t, before, len(eventsOf[WriteEvent](rec)), "steady state writes nothing")
		cancel()
		require.NoError(t, <-done)
	})
}

func mustGet(t *testing.T, p libdns.RecordGetter, zone string) []libdns.Record {
	t.Helper()
	recs, err := p.GetRecords(context.Background(), zone)
	require.NoError(t, err)
	return recs
}
