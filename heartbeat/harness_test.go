package heartbeat

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/provider/memory"
)

// throttledError is what a rate-limited provider returns; it is judged by
// behaviour (Throttled), as any provider's error would be.
type throttledError struct{}

func (throttledError) Error() string   { return "test: rate exceeded" }
func (throttledError) Throttled() bool { return true }

// throttleStore passes reads through and rejects the writes reject says
// to, counting writes from 1 (and reads). reject is called under mu, so it
// may keep state of its own. Safe for concurrent use.
type throttleStore struct {
	Store
	mu     sync.Mutex
	writes int
	reads  int
	reject func(at time.Time, n int) bool
}

func (s *throttleStore) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	s.mu.Lock()
	s.reads++
	s.mu.Unlock()
	return s.Store.GetRecords(ctx, zone)
}

// calls returns the writes and reads so far.
func (s *throttleStore) calls() (writes, reads int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes, s.reads
}

func (s *throttleStore) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	s.mu.Lock()
	s.writes++
	rejected := s.reject != nil && s.reject(time.Now(), s.writes)
	s.mu.Unlock()
	if rejected {
		return nil, throttledError{}
	}
	return s.Store.SetRecords(ctx, zone, recs)
}

func newZone(t testing.TB, zones ...string) *memory.Provider {
	t.Helper()
	p := new(memory.Provider)
	for _, z := range zones {
		require.NoError(t, p.AddZone(z))
	}
	return p
}

// skewed returns a clock running d ahead of the bubble's (behind when d < 0).
func skewed(d time.Duration) func() time.Time {
	return func() time.Time { return time.Now().Add(d) }
}

// recorder is an Observer keeping every event with the bubble's time.
type recorder struct {
	mu     sync.Mutex
	events []recorded
	hook   func(Event)
}

type recorded struct {
	real time.Time // the bubble's clock when observed
	ev   Event
}

func (r *recorder) Observe(e Event) {
	r.mu.Lock()
	r.events = append(r.events, recorded{real: time.Now(), ev: e})
	h := r.hook
	r.mu.Unlock()
	if h != nil {
		h(e)
	}
}

func (r *recorder) all() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.events...)
}

// start runs f in a goroutine and returns a function that cancels it and
// waits for it to return.
func start(ctx context.Context, f func(context.Context) error) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = f(ctx) })
	return func() { cancel(); wg.Wait() }
}

const testGlobal = "global.example.test."

func testConfig(cluster, region string) Config {
	c := DefaultConfig()
	c.Cluster, c.Region, c.GlobalZone = cluster, region, testGlobal
	return c
}

// peer is a reader with its own clock, recording when it sees a cluster
// fresh and stale (in the bubble's time).
type peer struct {
	name   string
	reader *Reader
	rec    *recorder
}

func newPeer(t testing.TB, name string, store libdns.RecordGetter, readEvery, skew time.Duration, kr *Keyring) *peer {
	t.Helper()
	cfg := DefaultReaderConfig(Global, testGlobal)
	cfg.Rules.ReconcileInterval = readEvery
	rec := &recorder{}
	r, err := NewReader(cfg, store, ReaderOptions{Keyring: kr, Observer: rec, Now: skewed(skew)})
	require.NoError(t, err)
	return &peer{name: name, reader: r, rec: rec}
}

// transitions returns the bubble times at which the peer saw cluster
// become fresh (true) or stale (false), in order.
func (p *peer) transitions(cluster string) (at []time.Time, fresh []bool) {
	for _, e := range p.rec.all() {
		if c, ok := e.ev.(ClusterChanged); ok && c.Status.Cluster == cluster && !c.Forgotten {
			at = append(at, e.real)
			fresh = append(fresh, c.Status.Fresh)
		}
	}
	return at, fresh
}
