package heartbeat

import (
	"context"
	"fmt"
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
// reading every second, with clocks 5 s behind, equal to and 2 s ahead of
// a's, never see a stale; a self-heal beat is written and recovery ends
// once writes pass again. Run for several alignments of the throttle with the reconcile
// ticks and of the 2-of-3 counter.
//
// The margin: in the worst alignment (the outage starts at a tick just
// after a first-attempt success) seven attempts in a row fail — five in
// the outage, two after it — so the next beat lands about 33 s after the
// last, within HealthyDuration + SkewTolerance = 35 s. A peer whose clock
// runs more than 2 s ahead of a's can therefore see a stale for a moment in
// that alignment: no schedule of three attempts per 10 s interval lands a
// beat within 30 s through this pattern.
func TestThrottlePatternNoPeerSeesStale(t *testing.T) {
	for _, offset := range []time.Duration{0, 2500 * time.Millisecond, 5 * time.Second, 9999 * time.Millisecond} {
		for phase := range 3 {
			t.Run(fmt.Sprintf("offset %v phase %d", offset, phase), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) { throttleScenario(t, offset, phase) })
			})
		}
	}
}

func throttleScenario(t *testing.T, offset time.Duration, phase int) {
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
	pub, err := NewPublisher(testConfig("a", "europe"), Options{Global: ts, Observer: pubRec})
	require.NoError(t, err)
	pub.SetVerdict(Verdict{Healthy: true, Gateways: 2})
	stopPub := start(t.Context(), pub.Run)

	var peers []*peer
	var stops []func()
	for i, skew := range []time.Duration{-5 * time.Second, 0, 2 * time.Second} {
		p := newPeer(t, fmt.Sprintf("peer%d", i), zone, time.Second, skew, nil)
		peers = append(peers, p)
		stops = append(stops, start(t.Context(), p.reader.Run))
	}
	time.Sleep(throttleEnd.Add(time.Minute).Sub(begin))
	for _, s := range stops {
		s()
	}
	stopPub()

	for _, p := range peers {
		at, fresh := p.transitions("a")
		require.NotEmpty(t, fresh, "%s never saw a", p.name)
		for i, f := range fresh {
			if i == 0 && !f {
				// Before the first beat lands a peer may see nothing at all, never a stale beat.
				t.Errorf("%s: first view of a is stale at %v", p.name, at[i].Sub(begin))
			}
			if i > 0 {
				t.Errorf("%s saw a change to fresh=%v at %v (throttle from %v)", p.name, f, at[i].Sub(begin), blackoutStart.Sub(begin))
			}
		}
	}
	var selfHeals, recoverOn, recoverOff int
	var last time.Time
	var maxGap time.Duration
	for _, e := range pubRec.all() {
		switch ev := e.ev.(type) {
		case BeatWritten:
			if ev.Beat.SelfHeal {
				selfHeals++
			}
			if !last.IsZero() {
				maxGap = max(maxGap, e.real.Sub(last))
			}
			last = e.real
		case RecoveringChanged:
			if ev.Recovering {
				recoverOn++
			} else {
				recoverOff++
			}
		}
	}
	assert.LessOrEqual(t, maxGap, 33*time.Second, "longest time between two beats landing")
	t.Logf("longest time between two beats landing: %v", maxGap)
	assert.Positive(t, selfHeals, "self-heal beats written")
	assert.Positive(t, recoverOn)
	assert.Equal(t, recoverOn, recoverOff, "recovery ended")
	assert.False(t, pub.Recovering(Global))
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
		assert.GreaterOrEqual(t, seen.Sub(lastNormal), rules.HealthyDuration.D(),
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
