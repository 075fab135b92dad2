package record

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// settle lets the bubble run until the reconciler has applied everything,
// advancing virtual time by steps of one second, at most limit.
func settle(t *testing.T, r *Reconciler, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		synctest.Wait()
		if !r.Pending() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still pending after %v of virtual time", limit)
		}
		time.Sleep(time.Second)
	}
}

func TestRunRetriesAndRepairs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(testZone)
		throttles := 0
		f.fault = func(op string) fault {
			if op == "set" && throttles < 3 {
				throttles++
				return fault{err: throttled()}
			}
			return fault{}
		}
		cfg := localConfig()
		cfg.RetryBase = time.Duration(time.Second)
		cfg.RetryMax = time.Duration(time.Minute)
		cfg.ResyncInterval = time.Duration(30 * time.Second)
		rec := &recorder{}
		r, err := New(f, cfg, Options{Observer: rec})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()

		synctest.Wait()
		assert.Equal(t, 0, f.writeCount(), "nothing to do before a desired state")
		require.ErrorIs(t, r.Run(ctx), ErrRunning)

		start := time.Now()
		require.NoError(t, r.Set(Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2.1")}}))
		settle(t, r, 5*time.Minute)
		retries := eventsOf[RetryEvent](rec)
		require.Len(t, retries, 3)
		var total time.Duration
		for i, e := range retries {
			assert.Equal(t, i+1, e.Attempt)
			// Throttled: twice the back-off of a transient failure, jittered down to half.
			hi := time.Second << (i + 1)
			assert.GreaterOrEqual(t, e.Delay, hi/2, "attempt %d", e.Attempt)
			assert.LessOrEqual(t, e.Delay, hi, "attempt %d", e.Attempt)
			total += e.Delay
		}
		assert.GreaterOrEqual(t, time.Since(start), total)
		assert.Equal(t, lines("_gslb-owner.www TXT 300 dep-1", "www A 60 192.0.2.1"), f.dump(testZone))

		// Drift on an owned name is repaired at the next resync.
		f.put(testZone, libdns.RR{Name: "www", Type: "A", TTL: time.Minute, Data: "203.0.113.66"})
		time.Sleep(cfg.ResyncInterval)
		synctest.Wait()
		assert.Equal(t, lines("_gslb-owner.www TXT 300 dep-1", "www A 60 192.0.2.1"), f.dump(testZone))

		// Newer replaces older: only the last of a burst of Sets matters.
		// The provider is held during the burst, so the reconcile the first
		// Set starts cannot finish before the last (a burst is quicker than
		// a reconcile): at most that one and one more for the newest state.
		before := f.writeCount()
		f.mu.Lock()
		for i := 2; i <= 9; i++ {
			require.NoError(t, r.Set(Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2."+string(rune('0'+i)))}}))
		}
		f.mu.Unlock()
		synctest.Wait()
		assert.Equal(t, lines("_gslb-owner.www TXT 300 dep-1", "www A 60 192.0.2.9"), f.dump(testZone))
		assert.LessOrEqual(t, f.writeCount()-before, 2)

		// A steady state costs no writes, however long it lasts.
		before = f.writeCount()
		time.Sleep(10 * cfg.ResyncInterval)
		synctest.Wait()
		assert.Equal(t, before, f.writeCount())

		cancel()
		require.NoError(t, <-done)
	})
}

func TestRunPermanentErrorWaitsForResync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(testZone)
		var fail atomic.Bool
		fail.Store(true)
		f.fault = func(op string) fault {
			if op == "set" && fail.Load() {
				return fault{err: errorString("fake: 403 forbidden")}
			}
			return fault{}
		}
		cfg := localConfig()
		cfg.ResyncInterval = time.Duration(time.Minute)
		rec := &recorder{}
		r, err := New(f, cfg, Options{Observer: rec})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		require.NoError(t, r.Set(Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2.1")}}))
		time.Sleep(30 * time.Second)
		synctest.Wait()
		assert.Empty(t, eventsOf[RetryEvent](rec), "permanent errors are not retried")
		errs := eventsOf[ErrorEvent](rec)
		require.NotEmpty(t, errs)
		assert.False(t, errs[0].Retryable())
		assert.True(t, r.Pending())
		fail.Store(false)
		time.Sleep(30 * time.Second)
		synctest.Wait()
		assert.False(t, r.Pending(), "the resync applied the pending state")
		cancel()
		require.NoError(t, <-done)
	})
}

func TestRateLimitCapsWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake("a.test.", "b.test.", "c.test.")
		cfg := localConfig()
		cfg.WritesPerSecond = 1
		cfg.WriteBurst = 1
		rec := &recorder{}
		r, err := New(f, cfg, Options{Observer: rec})
		require.NoError(t, err)
		var d Desired
		for _, z := range []string{"a.test.", "b.test.", "c.test."} {
			d.Sets = append(d.Sets, RRSet{Zone: z, Name: "www", Type: "A", TTL: time.Minute, Values: []string{"192.0.2.1"}})
		}
		start := time.Now()
		rep, err := r.Apply(t.Context(), d)
		require.NoError(t, err)
		assert.Equal(t, 6, rep.Writes)
		ws := eventsOf[WriteEvent](rec)
		require.Len(t, ws, 6)
		for i := 1; i < len(ws); i++ {
			assert.GreaterOrEqual(t, ws[i].At.Sub(ws[i-1].At), time.Second)
		}
		// Reads count against the limit too: 3 zone reads, 6 writes and
		// one read-back are 10 calls, one per second after the first.
		assert.Equal(t, 9*time.Second, time.Since(start))
	})
}

type errorString string

func (e errorString) Error() string { return string(e) }
