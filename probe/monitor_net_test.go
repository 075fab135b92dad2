package probe

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMonitorRealNetwork probes 200 loopback HTTP servers with the package's
// HTTP prober and short real intervals, kills every fifth one mid-run, and checks that each killed
// target is seen going critical, in order, and that every target's events
// chain consistently. It asserts order only, under a hang guard.
func TestMonitorRealNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("real network")
	}
	const n = 200
	const guard = 60 * time.Second
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	servers := make([]*httptest.Server, n)
	for i := range servers {
		servers[i] = httptest.NewServer(handler)
	}
	defer func() {
		for _, s := range servers {
			s.Close()
		}
	}()

	var mu sync.Mutex
	var events []Event
	killed := map[string]bool{}
	critical := map[string]bool{}
	allCritical := make(chan struct{})
	obs := ObserverFunc(func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
		if e.Transition.To == Critical && killed[e.Target] && !critical[e.Target] {
			critical[e.Target] = true
			if len(critical) == len(killed) {
				close(allCritical)
			}
		}
	})
	cfg := DefaultMonitorConfig()
	cfg.Concurrency = 32
	m, err := NewMonitor(cfg, obs, nil)
	require.NoError(t, err)

	pol := DefaultPolicy()
	pol.Interval = 200 * time.Millisecond
	pol.Timeout = 200 * time.Millisecond
	pol.MaxBackoff = 400 * time.Millisecond
	pol.CriticalThreshold = 2
	pol.InitialJitter = 200 * time.Millisecond

	var firstPass sync.WaitGroup
	firstPass.Add(n)
	for i, s := range servers {
		var once sync.Once
		hc := DefaultHTTPConfig()
		hc.Path = "/healthz"
		inner, err := NewHTTP(s.Listener.Addr().String(), hc)
		require.NoError(t, err)
		p := ProberFunc(func(ctx context.Context) Result {
			r := inner.Probe(ctx)
			if r.Passed() {
				once.Do(firstPass.Done)
			}
			return r
		})
		require.NoError(t, m.Add(Target{ID: fmt.Sprintf("http-%03d", i), Prober: p, Policy: pol}))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- m.Run(ctx) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			require.NoError(t, <-done)
		}
	}
	defer stop()

	waitOrGuard(t, guard, "every target passing once", func() { firstPass.Wait() })
	mu.Lock()
	for i := 0; i < n; i += 5 {
		killed[fmt.Sprintf("http-%03d", i)] = true
	}
	mu.Unlock()
	for i := 0; i < n; i += 5 {
		servers[i].Close()
	}
	killedAt := time.Now()
	select {
	case <-allCritical:
	case <-time.After(guard):
		t.Fatalf("hang guard: not every killed target went critical within %v", guard)
	}
	t.Logf("all %d killed targets critical %v after the kill (policy bound %v); run took %v",
		len(killed), time.Since(killedAt), WorstCaseDetection(pol), time.Since(start))
	stop()

	mu.Lock()
	defer mu.Unlock()
	last := map[string]State{}
	spurious := 0
	for i, e := range events {
		require.Equal(t, uint64(i+1), e.Seq)
		if s, ok := last[e.Target]; ok {
			require.Equal(t, s, e.Transition.From, "%s: events chain", e.Target)
		} else {
			require.Equal(t, Passing, e.Transition.From, "%s: first event leaves the initial state", e.Target)
		}
		last[e.Target] = e.Transition.To
		if !killed[e.Target] {
			spurious++
		}
	}
	for _, st := range m.Snapshot() {
		if s, ok := last[st.ID]; ok {
			assert.Equal(t, s, st.State, "%s: snapshot agrees with the last event", st.ID)
		} else {
			assert.Equal(t, Passing, st.State, st.ID)
		}
		if killed[st.ID] {
			assert.False(t, st.Served, st.ID)
			assert.NotZero(t, st.FailuresByKind[KindRefused], "%s: refused after the kill", st.ID)
		}
		assert.NotZero(t, st.Passes, st.ID)
	}
	t.Logf("%d events; %d on live targets (timeouts on a loaded machine)", len(events), spurious)
}

// waitOrGuard runs wait and fails the test if it has not returned within
// guard.
func waitOrGuard(t *testing.T, guard time.Duration, what string, wait func()) {
	t.Helper()
	ch := make(chan struct{})
	go func() { wait(); close(ch) }()
	select {
	case <-ch:
	case <-time.After(guard):
		t.Fatalf("hang guard: %s took longer than %v", what, guard)
	}
}
