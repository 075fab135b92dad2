package record

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// collapsing is a provider that accepts a whole RRset and keeps only its
// first record, answering nil: what a libdns adapter that updates one
// record per call does with a set of several.
type collapsing struct{ *fakeZones }

func (c collapsing) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	seen := map[[2]string]bool{}
	var keep []libdns.Record
	for _, r := range recs {
		k := [2]string{r.RR().Name, r.RR().Type}
		if !seen[k] {
			seen[k] = true
			keep = append(keep, r)
		}
	}
	return c.fakeZones.SetRecords(ctx, zone, keep)
}

func pair() Desired {
	return Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2.1", "192.0.2.2")}}
}

// A provider that collapses sets is caught by the read-back: the
// difference is reported ConflictAfter applies in a row, then as a
// conflict naming the provider, the set and both values, and the set is
// not rewritten on every apply after that.
func TestReadBackReportsCollapsedSet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := collapsing{newFake(testZone)}
		rec := &recorder{}
		r, err := New(f, localConfig(), Options{Observer: rec, ProviderName: "collapser"})
		require.NoError(t, err)
		for i := 1; i <= DefaultConflictAfter; i++ {
			_, err := r.Apply(t.Context(), pair())
			rb := eventsOf[ReadBackEvent](rec)
			require.Len(t, rb, i)
			assert.Equal(t, i, rb[i-1].Err.Times)
			assert.Equal(t, []string{"192.0.2.1"}, rb[i-1].Err.Got.Values)
			assert.Equal(t, []string{"192.0.2.1", "192.0.2.2"}, rb[i-1].Err.Want.Values)
			assert.True(t, r.Pending(), "apply %d: a set that did not stick is not applied", i)
			if i < DefaultConflictAfter {
				assert.NoError(t, err, "apply %d", i)
				assert.Empty(t, r.Conflicts())
				assert.False(t, rb[i-1].Conflict)
				continue
			}
			require.ErrorIs(t, err, ErrReadBack)
			assert.True(t, rb[i-1].Conflict)
			msg := err.Error()
			for _, s := range []string{"collapser", "www.example.com. A", "192.0.2.1", "192.0.2.2"} {
				assert.Contains(t, msg, s)
			}
		}
		cs := r.Conflicts()
		require.Len(t, cs, 1)
		var rbe *ReadBackError
		require.ErrorAs(t, cs[0].Err, &rbe)
		assert.Equal(t, "collapser", rbe.Provider)
		assert.Equal(t, Key{Zone: testZone, Name: "www", Type: "A"}, cs[0].Key)

		// Held: the next applies write nothing and refuse the set.
		writes := f.writeCount()
		rep, err := r.Apply(t.Context(), pair())
		require.NoError(t, err)
		assert.Equal(t, writes, f.writeCount(), "a set in conflict is not rewritten")
		require.NotEmpty(t, rep.Changes.Refused)
		assert.ErrorIs(t, rep.Changes.Refused[0].Err, ErrReadBack)
		assert.Len(t, r.Conflicts(), 1)

		// After the back-off it is tried (and read back) once more.
		time.Sleep(localConfig().RetryMax)
		_, err = r.Apply(t.Context(), pair())
		require.ErrorIs(t, err, ErrReadBack)
		assert.Greater(t, f.writeCount(), writes)
		rb := eventsOf[ReadBackEvent](rec)
		assert.Equal(t, DefaultConflictAfter+1, rb[len(rb)-1].Err.Times)

		// A desired value the provider can keep ends the conflict.
		_, err = r.Apply(t.Context(), Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2.7")}})
		require.NoError(t, err)
		assert.Empty(t, r.Conflicts())
		assert.False(t, r.Pending())
	})
}

// Under Run with a 10 s resync, a collapsing provider costs a bounded
// number of writes, not one per resync forever.
func TestReadBackBacksOffUnderRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := collapsing{newFake(testZone)}
		cfg := localConfig() // 10 s resync, retries 100 ms to 10 s
		cfg.RetryMax = 5 * time.Minute
		r, err := New(f, cfg, Options{})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		require.NoError(t, r.Set(pair()))
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		// 60 resyncs; without the hold each would rewrite the set.
		assert.Less(t, f.writeCount(), 20, "writes in 10 minutes of resyncs")
		assert.Len(t, r.Conflicts(), 1)
		cancel()
		require.NoError(t, <-done)
	})
}

// The read-back reads one zone per apply, only after writes, and can be
// turned off.
func TestReadBackCost(t *testing.T) {
	f := newFake(testZone, "other.com.")
	r, err := New(f, localConfig(), Options{})
	require.NoError(t, err)
	d := Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2.1"), {Zone: "other.com.", Name: "www", Type: "A", TTL: time.Minute, Values: []string{"192.0.2.1"}}}}
	_, err = r.Apply(t.Context(), d)
	require.NoError(t, err)
	assert.Equal(t, 3, f.reads, "two zones read, one read back")
	_, err = r.Apply(t.Context(), d)
	require.NoError(t, err)
	assert.Equal(t, 5, f.reads, "nothing written, nothing read back")

	g := newFake(testZone)
	r, err = New(g, localConfig(), Options{NoReadBack: true})
	require.NoError(t, err)
	_, err = r.Apply(t.Context(), pair())
	require.NoError(t, err)
	assert.Equal(t, 1, g.reads)

	_, err = New(g, localConfig(), Options{ConflictAfter: -1})
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "ConflictAfter")
}

// A zone that cannot be read gives no plan event (an empty plan would
// claim the zone matches).
func TestNoPlanWhenZoneUnreadable(t *testing.T) {
	f := newFake(testZone)
	f.fault = func(op string) fault {
		if op == "get" {
			return fault{err: timeout()}
		}
		return fault{}
	}
	rec := &recorder{}
	r, err := New(f, localConfig(), Options{Observer: rec})
	require.NoError(t, err)
	_, err = r.Apply(t.Context(), pair())
	require.Error(t, err)
	assert.Empty(t, eventsOf[PlanEvent](rec))
	assert.Len(t, eventsOf[ErrorEvent](rec), 1)
}

// throttling is a provider whose every call fails as throttled while down
// is set, recording the time of each call.
type throttling struct {
	*fakeZones
	mu    sync.Mutex
	down  bool
	calls []time.Time
}

func (p *throttling) hit() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, time.Now())
	if p.down {
		return throttled()
	}
	return nil
}

func (p *throttling) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	if err := p.hit(); err != nil {
		return nil, err
	}
	return p.fakeZones.GetRecords(ctx, zone)
}

func (p *throttling) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	if err := p.hit(); err != nil {
		return nil, err
	}
	return p.fakeZones.SetRecords(ctx, zone, recs)
}

func (p *throttling) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	if err := p.hit(); err != nil {
		return nil, err
	}
	return p.fakeZones.DeleteRecords(ctx, zone, recs)
}

// Set during a back-off updates the desired state but waits for the
// pending retry: 10 Sets in 2 s of a throttling outage make no calls
// beyond the back-off schedule, and the retry after it applies the newest
// state.
func TestSetDuringBackOffWaitsForRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &throttling{fakeZones: newFake(testZone), down: true}
		cfg := localConfig()
		cfg.RetryBase = time.Second
		cfg.RetryMax = time.Minute
		cfg.RetryJitter = 0
		rec := &recorder{}
		r, err := New(p, cfg, Options{Observer: rec})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()

		require.NoError(t, r.Set(Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2.1")}}))
		synctest.Wait() // first attempt: throttled, back off 2 s
		for i := range 10 {
			time.Sleep(200 * time.Millisecond)
			require.NoError(t, r.Set(Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2."+string(rune('1'+i%9)))}}))
			synctest.Wait()
		}
		// Throttled: delays 2 s, 4 s, 8 s, ... (jitter off). In 2 s: the
		// first attempt and at most the retry at 2 s.
		p.mu.Lock()
		calls := len(p.calls)
		p.mu.Unlock()
		assert.LessOrEqual(t, calls, 2, "calls in the first 2 s of a throttling outage")
		retries := eventsOf[RetryEvent](rec)
		require.NotEmpty(t, retries)
		var sched []time.Duration
		for _, e := range retries {
			sched = append(sched, e.Delay)
		}
		assert.Equal(t, []time.Duration{2 * time.Second, 4 * time.Second}[:len(sched)], sched)

		// The outage ends: the next retry applies the newest desired state.
		p.mu.Lock()
		p.down = false
		p.mu.Unlock()
		settle(t, r, time.Minute)
		assert.Contains(t, strings.Join(p.dump(testZone), "\n"), "www A 60 192.0.2.1")
		cancel()
		require.NoError(t, <-done)
	})
}
