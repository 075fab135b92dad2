package heartbeat

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/provider/providertest"
)

// TestThrottlePatternNoPeerSeesStale: every write of cluster a is rejected
// for 15 s, then 2 of every 3 writes are rejected for 5 minutes. Peers
// reading every second, with clocks 5 s behind, equal to and 5 s ahead of
// a's, never see a stale; a self-heal beat is written and recovery ends
// once writes pass again. The outage start is swept across one reconcile
// interval (every 0.5 s, and 9.999 s), for each phase of the 2-of-3 counter
// and for the shortest, the longest and seeded random jittered delays.
//
// A peer 5 s ahead sees a beat stale once it is more than
// HealthyDuration + SkewTolerance − 5 s = 30 s old, so beats must land at
// most 30 s apart: with the default SelfHealAttempts the worst gap is
// 28.6 s (the arithmetic is in attempts.go). The same sweep with
// SelfHealAttempts = MaxAttempts (the schedule before self-heal attempts
// existed, whose worst gap is 33 s) is run with random jitter for
// comparison: its gaps, the stales its peers see and both variants'
// provider calls during the pattern are logged, not asserted.
func TestThrottlePatternNoPeerSeesStale(t *testing.T) {
	var offsets []time.Duration
	for o := time.Duration(0); o < 10*time.Second; o += 500 * time.Millisecond {
		offsets = append(offsets, o)
	}
	offsets = append(offsets, 9999*time.Millisecond)
	jitters := []struct {
		name string
		rand func(seed uint64) func() float64
	}{
		{"shortest", func(uint64) func() float64 { return func() float64 { return 0 } }},
		{"longest", func(uint64) func() float64 { return func() float64 { return math.Nextafter(1, 0) } }},
		{"random", func(seed uint64) func() float64 {
			var mu sync.Mutex
			r := rand.New(rand.NewPCG(5, seed))
			return func() float64 { mu.Lock(); defer mu.Unlock(); return r.Float64() }
		}},
	}
	variants := []struct {
		name   string
		strict bool // assert no stale and a gap of at most 30 s
		attach func(*Config)
		random bool // only with random jitter
	}{
		{"default", true, func(*Config) {}, false},
		{"without self-heal attempts", false, func(c *Config) { c.SelfHealAttempts = c.MaxAttempts }, true},
	}
	for _, v := range variants {
		for _, j := range jitters {
			if v.random && j.name != "random" {
				continue
			}
			var results []throttleResult
			for i, offset := range offsets {
				for phase := range 3 {
					name := fmt.Sprintf("%s/%s jitter/offset %v/phase %d", v.name, j.name, offset, phase)
					t.Run(name, func(t *testing.T) {
						synctest.Test(t, func(t *testing.T) {
							cfg := testConfig("a", "europe")
							v.attach(&cfg)
							res := throttleScenario(t, cfg, j.rand(uint64(i*3+phase)), offset, phase)
							results = append(results, res)
							if !v.strict {
								return
							}
							for _, p := range res.problems {
								t.Error(p)
							}
							// Under 30 s, not just at most: SelfHealAttempts 6 reaches exactly 30 s.
							assert.Less(t, res.maxGap, 30*time.Second, "longest time between two beats landing")
							assert.Positive(t, res.selfHeals, "self-heal beats written")
							assert.Positive(t, res.recoverOn)
							assert.Equal(t, res.recoverOn, res.recoverOff, "recovery ended")
							assert.False(t, res.recovering)
						})
					})
				}
			}
			logThrottleResults(t, v.name+", "+j.name+" jitter", results)
		}
	}
}

// throttleResult is what one run of the throttle pattern showed.
type throttleResult struct {
	problems              []string // stales seen by peers
	maxGap                time.Duration
	selfHeals             int
	recoverOn, recoverOff int
	recovering            bool // at the end
	writes, reads         int  // a's provider calls during the pattern
}

// logThrottleResults logs a summary of a sweep's runs.
func logThrottleResults(t *testing.T, name string, rs []throttleResult) {
	if len(rs) == 0 {
		return
	}
	var stales, sumW, sumR int
	minW, maxW, minR, maxR := rs[0].writes, rs[0].writes, rs[0].reads, rs[0].reads
	var maxGap time.Duration
	for _, r := range rs {
		if len(r.problems) > 0 {
			stales++
		}
		sumW += r.writes
		sumR += r.reads
		minW, maxW = min(minW, r.writes), max(maxW, r.writes)
		minR, maxR = min(minR, r.reads), max(maxR, r.reads)
		maxGap = max(maxGap, r.maxGap)
	}
	n := len(rs)
	t.Logf("%s: %d runs; longest gap between landed beats %v; runs in which a peer saw a stale: %d; "+
		"provider calls during the 5 min 15 s pattern: writes min %d / mean %.1f / max %d, reads min %d / mean %.1f / max %d",
		name, n, maxGap, stales, minW, float64(sumW)/float64(n), maxW, minR, float64(sumR)/float64(n), maxR)
}

func throttleScenario(t *testing.T, cfg Config, rnd func() float64, offset time.Duration, phase int) (res throttleResult) {
	zone := newZone(t, testGlobal)
	begin := time.Now()
	blackoutStart := begin.Add(60*time.Second + offset)
	blackoutEnd := blackoutStart.Add(15 * time.Second)
	throttleEnd := blackoutEnd.Add(5 * time.Minute)
	var phaseWrites int // touched only under throttleStore.mu
	ts := &throttleStore{Store: zone, reject: func(at time.Time, _ int) bool {
		switch {
		case at.Before(blackoutStart):
			return false
		case at.Before(blackoutEnd):
			return true
		case at.Before(throttleEnd):
			phaseWrites++
			return (phaseWrites+phase)%3 != 0
		}
		return false
	}}
	pubRec := &recorder{}
	pub, err := NewPublisher(cfg, Options{Global: ts, Observer: pubRec, Rand: rnd})
	require.NoError(t, err)
	pub.SetVerdict(Verdict{Healthy: true, Gateways: 2})
	stopPub := start(t.Context(), pub.Run)

	var peers []*peer
	var stops []func()
	for i, skew := range []time.Duration{-5 * time.Second, 0, 5 * time.Second} {
		p := newPeer(t, fmt.Sprintf("peer%d (clock %+v)", i, skew), zone, time.Second, skew, nil)
		peers = append(peers, p)
		stops = append(stops, start(t.Context(), p.reader.Run))
	}
	// Count a's calls from the outage to the end of the pattern; Wait lets
	// the calls made at those instants happen first.
	time.Sleep(blackoutStart.Sub(begin))
	synctest.Wait()
	w0, r0 := ts.calls()
	time.Sleep(throttleEnd.Sub(blackoutStart))
	synctest.Wait()
	w1, r1 := ts.calls()
	res.writes, res.reads = w1-w0, r1-r0
	time.Sleep(time.Minute)
	for _, s := range stops {
		s()
	}
	stopPub()

	for _, p := range peers {
		at, fresh := p.transitions("a")
		if len(fresh) == 0 {
			res.problems = append(res.problems, p.name+" never saw a")
		}
		for i, f := range fresh {
			if i == 0 && !f {
				// Before the first beat lands a peer may see nothing at all, never a stale beat.
				res.problems = append(res.problems, fmt.Sprintf("%s: first view of a is stale at %v", p.name, at[i].Sub(begin)))
			}
			if i > 0 {
				res.problems = append(res.problems, fmt.Sprintf("%s saw a change to fresh=%v at %v (throttle from %v)",
					p.name, f, at[i].Sub(begin), blackoutStart.Sub(begin)))
			}
		}
	}
	var last time.Time
	for _, e := range pubRec.all() {
		switch ev := e.ev.(type) {
		case BeatWritten:
			if ev.Beat.SelfHeal {
				res.selfHeals++
			}
			if !last.IsZero() {
				res.maxGap = max(res.maxGap, e.real.Sub(last))
			}
			last = e.real
		case RecoveringChanged:
			if ev.Recovering {
				res.recoverOn++
			} else {
				res.recoverOff++
			}
		}
	}
	res.recovering = pub.Recovering(Global)
	return res
}

// deathCase describes how cluster a dies in TestDeadControllerSeenStale.
type deathCase struct {
	name string
	// pubSkew and peerSkews are the clocks' offsets from the bubble's.
	pubSkew   time.Duration
	peerSkews []time.Duration
	// afterSelfHeal kills a right after its first self-heal beat lands
	// (writes are rejected from 60 s to 72 s to cause one).
	afterSelfHeal bool
	// unhealthy stops a through its verdict instead of stopping its loop.
	unhealthy bool
}

// TestDeadControllerSeenStale: a controller that dies is seen stale by
// every peer within HealthyDuration + SkewTolerance + the peer's read
// interval after its death (plus SelfHealInterval when its last beat was a
// self-heal beat, plus the clocks' offset when they differ), and never
// before HealthyDuration has passed since its last normal beat. Clocks
// skewed by ±5 s change neither the absence of false stales nor the lower
// bound.
func TestDeadControllerSeenStale(t *testing.T) {
	cases := []deathCase{
		{name: "loop stops", peerSkews: []time.Duration{0, 0}},
		{name: "verdict unhealthy", peerSkews: []time.Duration{0, 0}, unhealthy: true},
		{name: "after a self-heal beat", peerSkews: []time.Duration{0, 0}, afterSelfHeal: true},
		{name: "peers skewed ±5s", peerSkews: []time.Duration{-5 * time.Second, 5 * time.Second}},
		{name: "publisher 5s ahead", pubSkew: 5 * time.Second, peerSkews: []time.Duration{0, 0}},
		{name: "publisher 5s behind", pubSkew: -5 * time.Second, peerSkews: []time.Duration{0, 0}},
	}
	for _, c := range cases {
		for _, readOffset := range []time.Duration{0, 3300 * time.Millisecond, 7 * time.Second} {
			t.Run(fmt.Sprintf("%s read offset %v", c.name, readOffset), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) { deathScenario(t, c, readOffset) })
			})
		}
	}
}

func deathScenario(t *testing.T, c deathCase, readOffset time.Duration) {
	rules := DefaultRules()
	const readEvery = 10 * time.Second
	zone := newZone(t, testGlobal)
	begin := time.Now()
	ts := &throttleStore{Store: zone}
	if c.afterSelfHeal {
		ts.reject = func(at time.Time, _ int) bool {
			return !at.Before(begin.Add(60*time.Second)) && at.Before(begin.Add(72*time.Second))
		}
	}
	ctx, kill := context.WithCancel(t.Context())
	defer kill()
	var (
		mu         sync.Mutex // guards the three below, shared with a's loop
		lastNormal time.Time  // bubble time of a's last normal beat
		lastHeal   bool
		died       time.Time
	)
	pubRec := &recorder{hook: func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		bw, ok := e.(BeatWritten)
		if !ok || !died.IsZero() {
			return
		}
		lastHeal = bw.Beat.SelfHeal
		if !bw.Beat.SelfHeal {
			lastNormal = time.Now()
		}
		if c.afterSelfHeal && bw.Beat.SelfHeal {
			died = time.Now()
			kill()
		}
	}}
	pub, err := NewPublisher(testConfig("a", "europe"), Options{Global: ts, Observer: pubRec, Now: skewed(c.pubSkew)})
	require.NoError(t, err)
	pub.SetVerdict(Verdict{Healthy: true})
	stopPub := start(ctx, pub.Run)
	// A second, healthy cluster keeps its region... in another region.
	other, err := NewPublisher(testConfig("b", "america"), Options{Global: zone})
	require.NoError(t, err)
	other.SetVerdict(Verdict{Healthy: true})
	stopOther := start(t.Context(), other.Run)

	time.Sleep(readOffset)
	var peers []*peer
	var stops []func()
	for i, skew := range c.peerSkews {
		p := newPeer(t, fmt.Sprintf("peer%d", i), zone, readEvery, skew, nil)
		peers = append(peers, p)
		stops = append(stops, start(t.Context(), p.reader.Run))
	}
	if !c.afterSelfHeal {
		time.Sleep(95*time.Second - readOffset)
		mu.Lock()
		died = time.Now()
		mu.Unlock()
		if c.unhealthy {
			pub.SetVerdict(Verdict{Healthy: false})
		} else {
			kill()
		}
	}
	time.Sleep(6 * time.Minute)
	for _, s := range stops {
		s()
	}
	stopPub()
	stopOther()
	mu.Lock() // every goroutine has stopped; taken for the race detector's sake
	defer mu.Unlock()
	require.False(t, died.IsZero(), "a never died")
	require.Equal(t, c.afterSelfHeal, lastHeal, "last beat a self-heal beat")

	for i, p := range peers {
		at, fresh := p.transitions("a")
		require.GreaterOrEqual(t, len(fresh), 2, "%s: saw a fresh then stale", p.name)
		require.True(t, fresh[0], "%s first saw a fresh", p.name)
		require.Len(t, fresh, 2, "%s: exactly one change after the first view: %v at %v", p.name, fresh, at)
		require.False(t, fresh[1])
		seen := at[1]
		// Offset of the peer's clock from the publisher's.
		d := c.peerSkews[i] - c.pubSkew
		bound := rules.DetectionBound(lastHeal, readEvery) + max(-d, 0)
		t.Logf("%s (clock %+v from a's) saw a stale %v after its death (bound %v), %v after its last normal beat",
			p.name, d, seen.Sub(died), bound, seen.Sub(lastNormal))
		assert.LessOrEqual(t, seen.Sub(died), bound, "%s saw a stale %v after its death, bound %v", p.name, seen.Sub(died), bound)
		assert.GreaterOrEqual(t, seen.Sub(lastNormal), rules.HealthyDuration,
			"%s saw a stale only %v after its last normal beat", p.name, seen.Sub(lastNormal))
		// The region fails over once its only cluster is stale, while america is healthy.
		assert.True(t, p.reader.Last().Healthy("america"))
		eu, ok := p.reader.Last().Region("europe")
		require.True(t, ok)
		assert.False(t, eu.Healthy)
		assert.True(t, eu.FailoverInProgress)
	}
}

// TestSelfHealLeadMatters: writes fail for two minutes except one that
// lands 15 s in. With the default rules that write is already a self-heal
// beat (the beat was older than HealthyDuration − 2 × ReconcileInterval), so
// no peer sees a stale; with the reference controller's rules (self-heal only
// once stale) it is a normal beat, and peers see the cluster stale before the
// outage ends.
func TestSelfHealLeadMatters(t *testing.T) {
	cases := []struct {
		name      string
		cfg       Config
		wantStale bool
	}{
		{"default rules", DefaultConfig(), false},
		{"reference rules", ReferenceConfig(), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				zone := newZone(t, testGlobal)
				begin := time.Now()
				outage, letThrough, end := begin.Add(60*time.Second), begin.Add(75*time.Second), begin.Add(180*time.Second)
				let := false
				ts := &throttleStore{Store: zone, reject: func(at time.Time, _ int) bool {
					if at.Before(outage) || !at.Before(end) {
						return false
					}
					if !let && !at.Before(letThrough) {
						let = true
						return false
					}
					return true
				}}
				cfg := c.cfg
				cfg.Cluster, cfg.Region, cfg.GlobalZone = "a", "europe", testGlobal
				pub, err := NewPublisher(cfg, Options{Global: ts})
				require.NoError(t, err)
				pub.SetVerdict(Verdict{Healthy: true})
				stopPub := start(t.Context(), pub.Run)
				p := newPeer(t, "peer", zone, time.Second, 0, nil)
				stopPeer := start(t.Context(), p.reader.Run)
				time.Sleep(4 * time.Minute)
				stopPeer()
				stopPub()
				_, fresh := p.transitions("a")
				require.NotEmpty(t, fresh)
				assert.True(t, fresh[0])
				assert.Equal(t, c.wantStale, len(fresh) > 1, "changes seen: %v", fresh)
			})
		})
	}
}

// TestRandomFaultsNoPeerSeesStale: through providertest.Faulty, a fifth of
// a's writes are throttled and a tenth fail transiently, for an hour of
// virtual time; a peer reading every second never sees a stale, and the
// failures are all reported.
func TestRandomFaultsNoPeerSeesStale(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		zone := newZone(t, testGlobal)
		f, err := providertest.NewFaulty(zone, providertest.FaultConfig{Seed: 7, ThrottleRate: 0.2, TransientRate: 0.1})
		require.NoError(t, err)
		rec := &recorder{}
		pub, err := NewPublisher(testConfig("a", "europe"), Options{Global: f, Observer: rec})
		require.NoError(t, err)
		pub.SetVerdict(Verdict{Healthy: true})
		stopPub := start(t.Context(), pub.Run)
		p := newPeer(t, "peer", zone, time.Second, 0, nil)
		stopPeer := start(t.Context(), p.reader.Run)
		time.Sleep(time.Hour)
		stopPeer()
		stopPub()
		_, fresh := p.transitions("a")
		assert.Equal(t, []bool{true}, fresh)
		var failed, throttled int
		for _, e := range rec.all() {
			if wf, ok := e.ev.(WriteFailed); ok {
				failed++
				if wf.Throttled {
					throttled++
				}
			}
		}
		assert.Positive(t, throttled)
		assert.Greater(t, failed, throttled)
		t.Logf("%d provider calls, %d write failures (%d throttled)", f.Calls(), failed, throttled)
	})
}
