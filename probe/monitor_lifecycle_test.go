package probe

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// slowObs takes a second of the bubble's clock per event.
type slowObs struct {
	mu     sync.Mutex
	events []Event
	first  chan struct{} // closed when the first Observe call starts
	once   sync.Once
}

func (o *slowObs) Observe(e Event) {
	o.once.Do(func() { close(o.first) })
	time.Sleep(time.Second)
	o.mu.Lock()
	o.events = append(o.events, e)
	o.mu.Unlock()
}

// TestMonitorRunStopBound: with 100 events queued and an observer that
// takes 1 s per event, Run returns after the call in hand and at most
// MonitorDrainEvents more (17 s of the bubble's clock, not 100 s), drops
// the rest and counts them; Seq stays gap-free, so a later Run continues
// from the last delivered number.
func TestMonitorRunStopBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := &slowObs{first: make(chan struct{})}
		m := monNew(t, o, func(c *MonitorConfig) { c.NoEventLoop = true })
		const n = 100
		p := DefaultPolicy()
		p.Interval, p.Timeout, p.MaxBackoff = time.Hour, time.Second, time.Hour
		blocked := ProberFunc(func(ctx context.Context) Result { <-ctx.Done(); return Result{Status: Fail} })
		for i := range n {
			id := string(rune('A'+i/26)) + string(rune('a'+i%26))
			require.NoError(t, m.Add(Target{ID: id, Prober: blocked, Policy: p}))
			require.NoError(t, m.Override(id, Critical)) // one event each, queued
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- m.Run(ctx) }()
		<-o.first
		time.Sleep(500 * time.Millisecond) // the first event is in hand
		cancel()
		cancelled := time.Now()
		require.NoError(t, <-done)
		took := time.Since(cancelled)

		o.mu.Lock()
		got := len(o.events)
		o.mu.Unlock()
		require.Equal(t, 1+MonitorDrainEvents, got, "the event in hand and MonitorDrainEvents more")
		require.Equal(t, uint64(n-got), m.DroppedEvents())
		require.LessOrEqual(t, took, time.Duration(1+MonitorDrainEvents)*time.Second)
		for i, e := range o.events {
			require.Equal(t, uint64(i+1), e.Seq)
		}
	})
}

// TestZeroValues: the zero value of every exported struct type with
// methods returns an error (or works), never panics.
func TestZeroValues(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tgt := Target{ID: "x", Prober: ProberFunc(func(context.Context) Result { return Result{Status: Pass} })}
	var m Monitor
	require.ErrorIs(t, m.Add(tgt), ErrNotConfigured)
	require.ErrorIs(t, m.Run(ctx), ErrNotConfigured)
	require.ErrorIs(t, m.Update(tgt), ErrUnknownTarget)
	require.ErrorIs(t, m.Remove("x"), ErrUnknownTarget)
	require.ErrorIs(t, m.Override("x", Critical), ErrUnknownTarget)
	require.ErrorIs(t, m.SetDisabled("x", true), ErrUnknownTarget)
	require.Zero(t, m.Len())
	require.Empty(t, m.Snapshot())
	_, ok := m.Stats("x")
	require.False(t, ok)
	require.Zero(t, m.DroppedEvents())
	require.True(t, m.Owns("x"))

	var mach Machine
	require.NotPanics(t, func() {
		_ = mach.State()
		mach.Observe(time.Now(), Result{Status: Pass})
		mach.Override(time.Now(), Critical)
	})
	var h HTTP
	require.NotPanics(t, func() { _ = h.Probe(ctx) })
	var tc TCP
	require.NotPanics(t, func() { _ = tc.Probe(ctx) })
	require.NotPanics(t, func() {
		_, _ = mach.Next(), mach.Served()
		mach.SetDisabled(time.Now(), true)
		_, _ = h.Addr(), tc.Addr()
		_ = m.LocalStats()
		_ = m.Config()
	})
	// Zero configs take their defaults and are valid.
	for name, v := range map[string]interface{ Validate() error }{
		"Policy": Policy{}, "MonitorConfig": MonitorConfig{}, "TLSConfig": &TLSConfig{},
		"TCPConfig": TCPConfig{}, "Shard": Shard{},
	} {
		require.NoError(t, v.Validate(), name)
	}
	require.NoError(t, HTTPConfig{Path: "/"}.Validate())
	require.Error(t, Payload{}.Validate(), "a zero Payload is documented as empty, which Validate refuses")
}

// TestFieldErrorFormat: the exact message of a few fields, one shape.
func TestFieldErrorFormat(t *testing.T) {
	bad := Policy{Interval: -time.Second}
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"policy duration", bad.Validate(), "probe: invalid policy: interval = -1s: allowed [1ms, 24h]"},
		{"policy threshold", Policy{CriticalThreshold: 70000}.Validate(), "probe: invalid policy: criticalThreshold = 70000: allowed [1, 65535]"},
		{"monitor", MonitorConfig{Concurrency: -1}.Validate(), "probe: invalid monitor config: concurrency = -1: allowed [1, 65536], or 0 for the default"},
		{"shard nested", MonitorConfig{Shard: Shard{Count: 2, Index: 5}}.Validate(), "probe: invalid monitor config: shard.index = 5: allowed [0, 1] (below count)"},
		{"tcp", TCPConfig{Port: 70000}.Validate(), "probe: invalid tcp config: port = 70000: allowed [1, 65535], or 0 for the target's port"},
		{"tls nested in http", HTTPConfig{Path: "/", TLS: &TLSConfig{CertFile: "c.pem"}}.Validate(), `probe: invalid http config: tls.certFile = "c.pem": allowed set together with keyFile`},
		{"target policy", func() error {
			m := monNew(t, nil, nil)
			return m.Add(Target{ID: "x", Prober: ProberFunc(func(context.Context) Result { return Result{} }), Policy: bad})
		}(), `probe: invalid monitor config: targets["x"].policy.interval = -1s: allowed [1ms, 24h]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.EqualError(t, c.err, c.want)
			var fe *FieldError
			require.True(t, errors.As(c.err, &fe))
		})
	}
	err := cases[len(cases)-1].err
	require.ErrorIs(t, err, ErrMonitorConfig)
	require.ErrorIs(t, err, ErrInvalidPolicy)
}
