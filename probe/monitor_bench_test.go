package probe

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkMonitorCycle measures the Monitor's own cost per probe (schedule,
// dispatch to the pool, the machine, statistics, rescheduling) with an
// in-memory prober that answers at once: 1,000 targets due every
// millisecond, one op per probe.
func BenchmarkMonitorCycle(b *testing.B) {
	for _, workers := range []int{1, 8, 64} {
		b.Run(fmt.Sprint("workers=", workers), func(b *testing.B) {
			var count atomic.Int64
			reached := make(chan struct{})
			target := int64(b.N)
			p := ProberFunc(func(context.Context) Result {
				if count.Add(1) == target {
					close(reached)
				}
				return Result{Status: Pass, Latency: time.Microsecond}
			})
			cfg := DefaultMonitorConfig()
			cfg.Concurrency = workers
			cfg.Seed = 1
			m, err := NewMonitor(cfg, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			pol := DefaultPolicy()
			pol.Interval = time.Millisecond
			pol.Timeout = time.Millisecond
			pol.MaxBackoff = time.Millisecond
			for i := range 1000 {
				if err := m.Add(Target{ID: fmt.Sprint("t", i), Prober: p, Policy: pol}); err != nil {
					b.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			b.ReportAllocs()
			cpu0 := monCPUTime()
			b.ResetTimer()
			go func() { done <- m.Run(ctx) }()
			<-reached
			b.StopTimer()
			b.ReportMetric(float64(monCPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
			cancel()
			<-done
		})
	}
}

// BenchmarkMonitorSnapshot measures a snapshot of 10,000 targets with full
// latency windows.
func BenchmarkMonitorSnapshot(b *testing.B) {
	m, err := NewMonitor(DefaultMonitorConfig(), nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	p := ProberFunc(func(context.Context) Result { return Result{Status: Pass} })
	now := time.Now()
	for i := range 10000 {
		id := fmt.Sprint("t", i)
		if err := m.Add(Target{ID: id, Prober: p, Policy: DefaultPolicy()}); err != nil {
			b.Fatal(err)
		}
		t := m.targets[id]
		for j := range 64 {
			t.st.record(now, Result{Status: Pass, Latency: time.Duration(j) * time.Millisecond}, 0.2)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		m.Snapshot()
	}
}

// BenchmarkMonitorSchedule measures the scheduler's and the per-target
// state's cost per check at N = 1,000, 10,000 and 100,000 targets, without
// goroutines, sockets or the clock: one op takes the earliest target off
// the schedule and gives it a passing result at its due time (resultLocked:
// the machine, the statistics, the local-failure window, the next due time
// and the push back). With jitter=0 every next due time is the latest; with
// 10 % interval jitter it lands anywhere within ±1 s of it. ns/op and
// allocs/op must stay flat (the schedule is a calendar: a push is an append
// to a bucket, a pop a sift in a heap of one bucket's entries); growth in
// ns/op beyond the instructions is the cache (a target's record is one miss
// at 100,000).
func BenchmarkMonitorSchedule(b *testing.B) {
	for _, jitter := range []int{0, 10} {
		for _, n := range []int{1000, 10000, 100000} {
			b.Run(fmt.Sprintf("jitter=%d%%/N=%d", jitter, n), func(b *testing.B) {
				cfg := DefaultMonitorConfig()
				cfg.Seed = 1
				m, err := NewMonitor(cfg, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				p := ProberFunc(func(context.Context) Result { return Result{Status: Pass} })
				pol := DefaultPolicy()
				pol.Interval = time.Duration(n/10) * time.Millisecond // 10,000 checks a second
				pol.InitialJitter = pol.Interval
				pol.Timeout = min(time.Second, pol.Interval)
				pol.IntervalJitterPercent = float64(jitter)
				for i := range n {
					if err := m.Add(Target{ID: fmt.Sprint("t", i), Prober: p, Policy: pol}); err != nil {
						b.Fatal(err)
					}
				}
				ctx := context.Background()
				r := Result{Status: Pass, Latency: 300 * time.Microsecond}
				check := func() {
					m.mu.Lock()
					t := m.sched.pop()
					m.resultLocked(ctx, t, t.gen, t.due, r, t.due.Add(r.Latency))
					m.mu.Unlock()
				}
				// Two rounds first: every target has its latency window
				// and a due time set by a result, as in a running Monitor.
				for range 2 * n {
					check()
				}
				runtime.GC() // no collection of the set-up's garbage inside the loop
				b.ReportAllocs()
				for b.Loop() {
					check()
				}
			})
		}
	}
}

// BenchmarkMonitorAdd measures what setting up one target costs, as
// gslbprobe does it: NewHTTP or NewTCP for a loopback address, then
// Monitor.Add with a shared policy. B/op is everything allocated, kept or
// not: before the heap first reaches the runtime's GC goal, set-up garbage
// stays in the process's memory as much as the targets' records do.
func BenchmarkMonitorAdd(b *testing.B) {
	for _, mode := range []string{"http", "tcp"} {
		b.Run(mode, func(b *testing.B) {
			addrs := make([]string, b.N)
			for i := range addrs {
				addrs[i] = fmt.Sprintf("127.1.%d.%d:%d", i/1024%256, i/4%256, 20000+i%4)
			}
			m, err := NewMonitor(DefaultMonitorConfig(), nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			pol := DefaultPolicy()
			hc, tc := DefaultHTTPConfig(), DefaultTCPConfig()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				var p Prober
				if mode == "http" {
					p, err = NewHTTP(addrs[i], hc)
				} else {
					p, err = NewTCP(addrs[i], tc)
				}
				if err != nil {
					b.Fatal(err)
				}
				if err := m.Add(Target{ID: addrs[i], Prober: p, Policy: pol}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
