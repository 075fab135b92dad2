package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// localDialErr is the error package net returns for a dial that failed in
// syscall sc with e, towards addr.
func localDialErr(sc string, e syscall.Errno, addr string) error {
	a, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		panic(err)
	}
	return &net.OpError{Op: "dial", Net: "tcp", Addr: a, Err: os.NewSyscallError(sc, e)}
}

func TestKindOfLocal(t *testing.T) {
	const up = "127.0.0.1:9" // this host always has a route to it
	cases := []struct {
		name string
		err  error
		want Kind
	}{
		{"EMFILE at socket", localDialErr("socket", syscall.EMFILE, up), KindLocal},
		{"ENFILE at socket", localDialErr("socket", syscall.ENFILE, up), KindLocal},
		{"ENOBUFS at connect", localDialErr("connect", syscall.ENOBUFS, up), KindLocal},
		{"ENOMEM at socket", localDialErr("socket", syscall.ENOMEM, up), KindLocal},
		{"EADDRNOTAVAIL at connect (ports exhausted)", localDialErr("connect", syscall.EADDRNOTAVAIL, up), KindLocal},
		{"EAGAIN at connect", localDialErr("connect", syscall.EAGAIN, up), KindLocal},
		{"EPERM at connect (host firewall)", localDialErr("connect", syscall.EPERM, up), KindLocal},
		{"EACCES at connect", localDialErr("connect", syscall.EACCES, up), KindLocal},
		{"ENOBUFS at write", &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.ENOBUFS)}, KindLocal},
		{"wrapped by url.Error-like text", fmt.Errorf("request: %w", localDialErr("socket", syscall.EMFILE, up)), KindLocal},
		{"EAGAIN at read is a timeout", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.EAGAIN)}, KindTimeout},
		{"ENETUNREACH with a route: the network's", localDialErr("connect", syscall.ENETUNREACH, up), KindNetwork},
		{"EHOSTUNREACH with a route: the network's", localDialErr("connect", syscall.EHOSTUNREACH, up), KindNetwork},
		{"ENETUNREACH without an address: the target's", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ENETUNREACH)}, KindNetwork},
		{"refused", localDialErr("connect", syscall.ECONNREFUSED, up), KindRefused},
		{"reset", localDialErr("read", syscall.ECONNRESET, up), KindReset},
		{"ETIMEDOUT", localDialErr("connect", syscall.ETIMEDOUT, up), KindTimeout},
		{"deadline", context.DeadlineExceeded, KindTimeout},
		{"EOF", io.EOF, KindReset},
		{"other", errors.New("x"), KindOther},
		{"nil", nil, KindNone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, KindOf(c.err), "%v", c.err)
		})
	}
	assert.Equal(t, "local", KindLocal.String())
	assert.True(t, Result{Status: Fail, Kind: KindLocal}.IsLocal())
	assert.False(t, Result{Status: Fail, Kind: KindNetwork}.IsLocal())
}

// The prober wrappers keep the local kind of the errors they classify.
func TestProberKindsKeepLocal(t *testing.T) {
	err := localDialErr("socket", syscall.EMFILE, "127.0.0.1:9")
	assert.Equal(t, KindLocal, httpFailed("connect", err).Kind)
	assert.Equal(t, KindLocal, tcpErrKind(err))
}

// A local failure leaves every machine as it was, in any state, under
// every preset.
func TestMachineDoesNotCountLocal(t *testing.T) {
	presets := map[string]Policy{
		"recordService": RecordService(), "envoy": Envoy(), "proxySync": ProxySync(),
		"consul": Consul(1, 1, 3), "route53": Route53(3, false), "gdnsd": Gdnsd(2, 3, 3),
	}
	inputs := []Result{
		{Status: Pass}, {Status: Fail, Kind: KindRefused}, {Status: Fail, Kind: KindTimeout},
		{Status: FailNow, Kind: KindStatus}, {Status: Pass}, {Status: Pass}, {Status: Fail, Kind: KindReset},
		{Status: Fail, Kind: KindReset}, {Status: Fail, Kind: KindReset}, {Status: Fail, Kind: KindReset}, {Status: Pass},
	}
	now := time.Unix(1000, 0)
	for name, p := range presets {
		t.Run(name, func(t *testing.T) {
			m, err := NewMachine(p)
			require.NoError(t, err)
			for i := 0; i <= len(inputs); i++ {
				for _, local := range []Result{
					{Status: Fail, Kind: KindLocal, Detail: "socket: too many open files"},
					{Status: FailNow, Kind: KindLocal}, // the kind decides, whatever the status
				} {
					before := *m
					st := m.Observe(now, local)
					assert.False(t, st.Changed, "step %d", i)
					assert.Equal(t, before.Next(), st.Next, "next probe on the normal schedule, step %d", i)
					assert.Equal(t, before, *m, "machine unchanged, step %d (%v)", i, m.State())
				}
				if i < len(inputs) {
					m.Observe(now, inputs[i])
				}
			}
		})
	}
}

// localRec is an Observer and a DegradedObserver.
type localRec struct {
	monRec
	dmu sync.Mutex
	deg []DegradedEvent
}

func (r *localRec) ObserveDegraded(e DegradedEvent) {
	r.dmu.Lock()
	defer r.dmu.Unlock()
	r.deg = append(r.deg, e)
}

func (r *localRec) degraded() []DegradedEvent {
	r.dmu.Lock()
	defer r.dmu.Unlock()
	return append([]DegradedEvent(nil), r.deg...)
}

// A Monitor whose probes fail locally for a minute makes no transition,
// keeps probing on the normal schedule, counts the failures per target
// and Monitor-wide, and reports itself degraded until DegradedWindow
// after the last one.
func TestMonitorLocalFailuresAreNotVerdicts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &localRec{monRec: *monNewRec()}
		m := monNew(t, rec, nil)
		const blind = 60 * time.Second
		local := func(kind Kind) Prober {
			return ProberFunc(func(context.Context) Result {
				d := time.Since(rec.base)
				rec.mu.Lock()
				rec.probes["a"] = append(rec.probes["a"], d)
				rec.mu.Unlock()
				if d < blind {
					return Result{Status: Fail, Kind: kind, Detail: "connect: socket: too many open files"}
				}
				return Result{Status: Pass}
			})
		}
		pol := DefaultPolicy()
		pol.Interval = time.Second
		require.NoError(t, m.Add(Target{ID: "a", Prober: local(KindLocal), Policy: pol}))
		require.NoError(t, m.Add(Target{ID: "b", Prober: rec.prober("b", func(time.Duration) Status { return Pass }), Policy: pol}))
		stop := monStart(t, m)
		time.Sleep(blind / 2)
		synctest.Wait()
		mid := m.LocalStats()
		time.Sleep(blind/2 + DegradedWindow + 10*time.Second)
		synctest.Wait()
		end := m.LocalStats()
		stop()

		assert.Empty(t, rec.eventList(), "no transition")
		a, _ := m.Stats("a")
		assert.Equal(t, Passing, a.State)
		assert.Equal(t, uint64(60), a.LocalFailures, "one local failure a second for a minute")
		assert.Zero(t, a.Failures)
		assert.Zero(t, a.FailuresByKind[KindLocal])
		assert.Equal(t, a.Probes, a.Passes)
		probes := rec.probesOf("a")
		for i := 1; i < len(probes); i++ {
			assert.Equal(t, time.Second, probes[i]-probes[i-1], "probe %d on the normal schedule, no back-off", i)
		}

		assert.True(t, mid.Degraded, "degraded while probes fail locally")
		assert.InDelta(t, 0.5, mid.Share, 0.05, "half the probes (one target of two) fail locally")
		assert.Contains(t, mid.LastError, "too many open files")
		assert.False(t, end.Degraded, "not degraded a window after the last local failure")
		assert.Zero(t, end.LocalFailures)
		assert.Zero(t, end.Share)
		assert.Equal(t, uint64(60), end.Total)
		assert.Equal(t, DegradedWindow, end.Window)

		deg := rec.degraded()
		require.Len(t, deg, 2, "degraded, then recovered")
		assert.True(t, deg[0].Local.Degraded)
		assert.Equal(t, uint64(1), deg[0].Local.Total)
		assert.False(t, deg[1].Local.Degraded)
		last := probes[59] // the last local failure
		assert.GreaterOrEqual(t, deg[1].At.Sub(rec.base), last+DegradedWindow*(monLocalBuckets-1)/monLocalBuckets)
		assert.LessOrEqual(t, deg[1].At.Sub(rec.base), last+DegradedWindow+time.Second)
	})
}

// The same scenario with an ordinary failure kind goes critical: what the
// probes of a process out of descriptors did before local failures had a
// kind of their own.
func TestMonitorOrdinaryFailuresAreVerdicts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := monNewRec()
		m := monNew(t, rec, nil)
		pol := DefaultPolicy()
		pol.Interval = time.Second
		require.NoError(t, m.Add(Target{ID: "a", Prober: rec.prober("a", func(d time.Duration) Status {
			if d < time.Minute {
				return Fail
			}
			return Pass
		}), Policy: pol}))
		stop := monStart(t, m)
		time.Sleep(10 * time.Second)
		stop()
		assert.NotEmpty(t, rec.eventList())
		a, _ := m.Stats("a")
		assert.Equal(t, Critical, a.State)
		assert.False(t, m.LocalStats().Degraded)
	})
}

// A probe a worker reaches only after its deadline is a local failure: the
// prober is not called and the machine counts nothing.
func TestWorkerLateStartIsLocal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := monNew(t, nil, nil)
		called := false
		require.NoError(t, m.Add(Target{ID: "a", Prober: ProberFunc(func(context.Context) Result {
			called = true
			return Result{Status: Pass}
		}), Policy: DefaultPolicy()}))
		// Dispatch by hand, as the scheduler does, then let the worker be
		// late.
		m.mu.Lock()
		tg := m.targets["a"]
		m.sched.remove(tg)
		start := time.Now()
		pctx, cancel := context.WithTimeout(context.Background(), time.Second)
		tg.cancel = cancel
		m.inFlight++
		m.workers++
		m.mu.Unlock()
		time.Sleep(2 * time.Second)
		w := &monWorker{jobs: make(chan monJob, 1)}
		w.jobs <- monJob{} // after its one job, the worker exits
		m.work(context.Background(), w, monJob{t: tg, gen: tg.gen, prober: tg.prober, ctx: pctx, cancel: cancel, start: start})
		assert.False(t, called, "the prober is not called after the deadline")
		st, _ := m.Stats("a")
		assert.Equal(t, uint64(1), st.LocalFailures)
		assert.Zero(t, st.Probes)
		assert.Equal(t, KindLocal, st.LastResult.Kind)
		assert.Contains(t, st.LastError, "after its deadline")
		assert.True(t, m.LocalStats().Degraded)
	})
}
