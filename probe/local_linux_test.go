//go:build linux

package probe

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The descriptor tests run a Monitor in a child process (this test binary
// again, TestLocalFDChild) whose descriptor limit is lowered, soft and
// hard, and then filled: it probes healthy targets served by the parent,
// whose limit is untouched, so every failure in the child is the child's
// own. Before local failures had a kind of their own, every target went
// critical within a few probes.

// TestLocalFailureDescriptorsExhausted runs the child through the event
// loop and through the workers.
func TestLocalFailureDescriptorsExhausted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	// The HTTP target answers and keeps the connection open until the
	// checker closes it: the checker then closes its socket, and each check
	// needs a new descriptor. (A target that closes first gets its
	// connections reset, and the event loop reuses their sockets.)
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer hl.Close()
	go func() {
		for {
			c, err := hl.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(2 * time.Minute))
				probersReadRequest(c)
				if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")); err == nil {
					_, _ = io.Copy(io.Discard, c)
				}
			}()
		}
	}()
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer tl.Close()
	go func() {
		for {
			c, err := tl.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()

	for _, mode := range []string{"loop", "workers"} {
		t.Run(mode, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // hang guard
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestLocalFDChild$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), "GSLBKIT_PROBE_FD_CHILD="+mode,
				"GSLBKIT_PROBE_FD_HTTP="+hl.Addr().String(), "GSLBKIT_PROBE_FD_TCP="+tl.Addr().String())
			out, err := cmd.CombinedOutput()
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				t.Log(l)
			}
			require.NoError(t, err, "child failed")
			require.Contains(t, string(out), "--- PASS: TestLocalFDChild", "the child ran")
		})
	}
}

// localFDRec is the child's observer.
type localFDRec struct {
	mu          sync.Mutex
	transitions []Event
	deg         chan DegradedEvent
}

func (r *localFDRec) Observe(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.transitions = append(r.transitions, e)
}

func (r *localFDRec) ObserveDegraded(e DegradedEvent) { r.deg <- e }

func (r *localFDRec) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.transitions)
}

// localOpenFDs returns the number of descriptors this process has open.
func localOpenFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(ents) - 1 // the directory's own
}

// localFiller holds descriptors until none is left.
type localFiller struct{ files []*os.File }

// fill opens /dev/null until the descriptor limit is reached.
func (f *localFiller) fill(t *testing.T) {
	for {
		fh, err := os.Open(os.DevNull)
		if err != nil {
			require.True(t, errors.Is(err, syscall.EMFILE), "filling descriptors: %v", err)
			return
		}
		f.files = append(f.files, fh)
	}
}

func (f *localFiller) free() {
	for _, fh := range f.files {
		fh.Close()
	}
	f.files = nil
}

// localWaitFor calls tick and then cond until cond holds, failing after a
// 30 s hang guard. It polls because the facts it waits for (probe counts)
// have no event.
func localWaitFor(t *testing.T, what string, tick func(), cond func() bool) {
	t.Helper()
	guard := time.Now().Add(30 * time.Second)
	for {
		if tick != nil {
			tick()
		}
		if cond() {
			return
		}
		if time.Now().After(guard) {
			t.Fatalf("hang guard: %s not within 30 s", what)
		}
		time.Sleep(2 * time.Millisecond) // a poll interval, not a wait for the fact
	}
}

// localWaitDegraded returns the next DegradedEvent (30 s hang guard).
func localWaitDegraded(t *testing.T, r *localFDRec, tick func()) DegradedEvent {
	t.Helper()
	guard := time.After(30 * time.Second)
	poll := time.NewTicker(2 * time.Millisecond)
	defer poll.Stop()
	for {
		select {
		case e := <-r.deg:
			return e
		case <-poll.C:
			if tick != nil {
				tick()
			}
		case <-guard:
			t.Fatal("hang guard: no DegradedEvent within 30 s")
		}
	}
}

// TestLocalFDChild is the child of TestLocalFailureDescriptorsExhausted.
func TestLocalFDChild(t *testing.T) {
	mode := os.Getenv("GSLBKIT_PROBE_FD_CHILD")
	if mode == "" {
		t.Skip("run by TestLocalFailureDescriptorsExhausted")
	}
	n0 := localOpenFDs(t)
	limit := uint64(n0 + 32)
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: limit, Max: limit}))
	t.Logf("%s: %d descriptors open, limit set to %d (soft and hard)", mode, n0, limit)

	rec := &localFDRec{deg: make(chan DegradedEvent, 16)}
	cfg := DefaultMonitorConfig()
	cfg.NoEventLoop = mode == "workers"
	m, err := NewMonitor(cfg, rec, nil)
	require.NoError(t, err)
	// A short window, so that recovery is seen half a second after the
	// last local failure rather than DegradedWindow.
	m.loc = monNewLocal(time.Now(), 500*time.Millisecond)
	// Three failures in a row go critical (the old code's fate within
	// three probes); a loaded machine's one slow probe changes nothing.
	pol := DefaultPolicy()
	pol.Interval = 50 * time.Millisecond
	pol.Timeout = pol.Interval
	pol.WarningThreshold, pol.CriticalThreshold = 3, 3
	h, err := NewHTTP(os.Getenv("GSLBKIT_PROBE_FD_HTTP"), DefaultHTTPConfig())
	require.NoError(t, err)
	tc, err := NewTCP(os.Getenv("GSLBKIT_PROBE_FD_TCP"), DefaultTCPConfig())
	require.NoError(t, err)
	ids := []string{"http", "tcp"}
	require.NoError(t, m.Add(Target{ID: "http", Prober: h, Policy: pol}))
	require.NoError(t, m.Add(Target{ID: "tcp", Prober: tc, Policy: pol}))

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	stats := func() map[string]TargetStats {
		out := map[string]TargetStats{}
		for _, id := range ids {
			out[id], _ = m.Stats(id)
		}
		return out
	}

	// Healthy first.
	localWaitFor(t, "five passes of each target", nil, func() bool {
		for _, s := range stats() {
			if s.Passes < 5 {
				return false
			}
		}
		return true
	})
	require.Equal(t, mode == "loop", m.lp.Load() != nil, "event loop open")
	require.Zero(t, rec.count(), "no transition while healthy")
	require.False(t, m.LocalStats().Degraded)

	// No descriptor left: the probes fail locally.
	var fill localFiller
	filled := time.Now()
	topUp := func() { fill.fill(t) } // a probe in flight may free one more
	fill.fill(t)
	ev := localWaitDegraded(t, rec, topUp)
	require.True(t, ev.Local.Degraded, "the first DegradedEvent says degraded")
	t.Logf("degraded %v after filling %d descriptors: %q", ev.At.Sub(filled), len(fill.files), ev.Local.LastError)
	localWaitFor(t, "ten local failures of each target", topUp, func() bool {
		for _, s := range stats() {
			if s.LocalFailures < 10 {
				return false
			}
		}
		return true
	})
	blind := stats()
	ls := m.LocalStats()
	assert.True(t, ls.Degraded)
	assert.Positive(t, ls.Share)
	assert.Contains(t, ls.LastError, "too many open files")
	assert.Zero(t, rec.count(), "no transition while no socket can be opened")
	for id, s := range blind {
		assert.Equal(t, Passing, s.State, id)
		assert.True(t, s.Served, id)
		assert.Equal(t, KindLocal, s.LastResult.Kind, "%s: %s", id, s.LastResult.Detail)
	}
	t.Logf("while blind: local failures http %d, tcp %d; Monitor-wide %d in the window (share %.2f), %d in all",
		blind["http"].LocalFailures, blind["tcp"].LocalFailures, ls.LocalFailures, ls.Share, ls.Total)

	// Descriptors freed: the Monitor recovers.
	fill.free()
	freed := time.Now()
	ev = localWaitDegraded(t, rec, nil)
	assert.False(t, ev.Local.Degraded, "the next DegradedEvent says recovered")
	t.Logf("recovered %v after freeing the descriptors (window %v)", ev.At.Sub(freed), ev.Local.Window)
	localWaitFor(t, "five more passes of each target", nil, func() bool {
		for id, s := range stats() {
			if s.Passes < blind[id].Passes+5 {
				return false
			}
		}
		return true
	})
	assert.False(t, m.LocalStats().Degraded)
	assert.Zero(t, rec.count(), "no transition after recovering")
	for id, s := range stats() {
		assert.Equal(t, Passing, s.State, id)
		assert.True(t, s.LastResult.Passed(), "%s: %s", id, s.LastResult.Detail)
		t.Logf("%s: %d probes, %d passes, %d failures, %d local failures", id, s.Probes, s.Passes, s.Failures, s.LocalFailures)
	}
}
