package heartbeat

import (
	"context"
	"log/slog"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/provider/providertest"
)

const testLocal = "europe.local.example.test."

func TestPublisherWritesEveryInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		zone := newZone(t, testGlobal, testLocal)
		kr := mustKeyring(t, testKey)
		cfg := testConfig("eu-1", "europe")
		cfg.LocalZone = testLocal
		rec := &recorder{}
		pub, err := NewPublisher(cfg, Options{Local: zone, Global: zone, Keyring: kr, Observer: rec})
		require.NoError(t, err)
		pub.SetVerdict(Verdict{Healthy: true, Gateways: 2})
		begin := time.Now()
		stop := start(t.Context(), pub.Run)
		time.Sleep(35 * time.Second)
		stop()

		perScope := map[Scope][]time.Duration{}
		for _, e := range rec.all() {
			if bw, ok := e.ev.(BeatWritten); ok {
				perScope[bw.Scope] = append(perScope[bw.Scope], e.real.Sub(begin))
				assert.Equal(t, 1, bw.Attempt)
				assert.Equal(t, "k1", bw.Beat.KeyID)
				assert.False(t, bw.Beat.SelfHeal)
			}
			if ob, ok := e.ev.(OwnBeatRead); ok {
				assert.True(t, ob.Found, "read back %+v", ob)
				assert.Zero(t, ob.Age)
			}
		}
		want := []time.Duration{0, 10 * time.Second, 20 * time.Second, 30 * time.Second}
		assert.Equal(t, want, perScope[Local])
		assert.Equal(t, want, perScope[Global])

		for _, z := range []struct {
			zone  string
			scope Scope
		}{{testLocal, Local}, {testGlobal, Global}} {
			recs, err := zone.GetRecords(context.Background(), z.zone)
			require.NoError(t, err)
			var found int
			for _, r := range recs {
				rr := r.RR()
				if rr.Name != "health-001-eu-1" {
					continue
				}
				found++
				assert.Equal(t, "TXT", rr.Type)
				assert.Equal(t, 5*time.Second, rr.TTL)
				b, err := kr.Open(z.scope, rr.Data)
				require.NoError(t, err)
				assert.Equal(t, Beat{Cluster: "eu-1", Region: "europe", Time: begin.Add(30 * time.Second), Gateways: 2, KeyID: "k1"}, b)
			}
			assert.Equal(t, 1, found, "one beat record in %s", z.zone)
		}
	})
}

func TestPublisherRetries(t *testing.T) {
	cases := []struct {
		name         string
		faults       []providertest.FaultKind
		wantFailures []bool // Throttled, per failed attempt
		wantAttempt  int    // attempt that succeeds in the first interval; 0 = none
	}{
		{"throttled twice", []providertest.FaultKind{providertest.Throttle, providertest.Throttle}, []bool{true, true}, 3},
		{"transient once", []providertest.FaultKind{providertest.Transient}, []bool{false}, 2},
		{"permanent: no retry", []providertest.FaultKind{providertest.Permanent}, []bool{false}, 0},
		{"three throttles: interval lost", []providertest.FaultKind{providertest.Throttle, providertest.Throttle, providertest.Throttle}, []bool{true, true, true}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				zone := newZone(t, testGlobal)
				f, err := providertest.NewFaulty(zone, providertest.FaultConfig{Seed: 1})
				require.NoError(t, err)
				f.Inject(c.faults...)
				rec := &recorder{}
				pub, err := NewPublisher(testConfig("a", "europe"), Options{Global: f, Observer: rec, Logger: slog.New(slog.DiscardHandler)})
				require.NoError(t, err)
				pub.SetVerdict(Verdict{Healthy: true})
				begin := time.Now()
				stop := start(t.Context(), pub.Run)
				time.Sleep(9 * time.Second)
				stop()

				var fails []WriteFailed
				var failAt []time.Duration
				var written []BeatWritten
				for _, e := range rec.all() {
					switch ev := e.ev.(type) {
					case WriteFailed:
						fails = append(fails, ev)
						failAt = append(failAt, e.real.Sub(begin))
					case BeatWritten:
						written = append(written, ev)
					}
				}
				require.Len(t, fails, len(c.wantFailures))
				for i, f := range fails {
					assert.Equal(t, i+1, f.Attempt)
					assert.Equal(t, c.wantFailures[i], f.Throttled)
					assert.ErrorIs(t, f.Err, providertest.ErrInjected)
					assert.Equal(t, i+1 < 3 && c.faults[i] != providertest.Permanent, f.Retrying)
					if i > 0 { // jittered 2.7–3 s apart
						gap := failAt[i] - failAt[i-1]
						assert.True(t, gap >= 2700*time.Millisecond && gap <= 3*time.Second, "gap %v", gap)
					}
				}
				if c.wantAttempt == 0 {
					assert.Empty(t, written)
				} else {
					require.Len(t, written, 1)
					assert.Equal(t, c.wantAttempt, written[0].Attempt)
				}
			})
		})
	}
}

// TestPublisherSelfHealAttempts: the extra attempts are made only while
// the beat being attempted is a self-heal beat; they all start within
// their interval, and the first success ends it. Writes fail from 5 s to
// 32 s and from 40 s on. Per tick, n and s are failed normal and self-heal
// attempts, N and S successful ones:
//   - 0 s: N.
//   - 10 s: the first attempt is normal (the beat is exactly 10 s old, not
//     older than the threshold); the next, 2.7–3 s later, is a self-heal
//     attempt, and the count goes on from 2 up to SelfHealAttempts (7)
//     about 1.29–1.43 s apart, or until the next would start after 20 s.
//   - 20 s: seven self-heal attempts, the last at 27.7–28.6 s.
//   - 30 s: the third attempt (32.6–32.9 s) lands a self-heal beat: ssS.
//   - 40 s and 50 s: the self-heal beat is in the zone, so beats are
//     normal again and only MaxAttempts (3) are made: nnn.
func TestPublisherSelfHealAttempts(t *testing.T) {
	cases := []struct {
		name  string
		rand  float64
		ticks []string // per tick from 0 s
	}{
		{"shortest delays", 0, []string{"N", "nssssss", "sssssss", "ssS", "nnn", "nnn"}},
		{"longest delays", math.Nextafter(1, 0), []string{"N", "nsssss", "sssssss", "ssS", "nnn", "nnn"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				zone := newZone(t, testGlobal)
				begin := time.Now()
				ts := &throttleStore{Store: zone, reject: func(at time.Time, _ int) bool {
					d := at.Sub(begin)
					return d >= 5*time.Second && d < 32*time.Second || d >= 40*time.Second
				}}
				rec := &recorder{}
				cfg := testConfig("a", "europe")
				require.Equal(t, 7, cfg.SelfHealAttempts)
				pub, err := NewPublisher(cfg, Options{Global: ts, Observer: rec, Rand: func() float64 { return c.rand }})
				require.NoError(t, err)
				pub.SetVerdict(Verdict{Healthy: true})
				stop := start(t.Context(), pub.Run)
				time.Sleep(59 * time.Second)
				stop()

				// Each event lands in the tick its attempt starts in (writes
				// take no time in the bubble): an attempt starting after its
				// interval would show up in the next tick out of sequence.
				ticks := make([]string, 6)
				retrying := make([][]bool, 6) // per failure
				var prevAt time.Duration      // the previous attempt's time, when it was a self-heal one
				healGap := 10 * time.Second / 7
				for _, e := range rec.all() {
					var (
						attempt  int
						selfHeal bool
						mark     byte
					)
					since := e.real.Sub(begin)
					tick := int(since / (10 * time.Second))
					switch ev := e.ev.(type) {
					case WriteFailed:
						attempt, selfHeal, mark = ev.Attempt, ev.SelfHeal, 'n'
						require.Less(t, tick, len(ticks), "attempt at %v", since)
						retrying[tick] = append(retrying[tick], ev.Retrying)
					case BeatWritten:
						attempt, selfHeal, mark = ev.Attempt, ev.Beat.SelfHeal, 'N'
					default:
						continue
					}
					require.Less(t, tick, len(ticks), "attempt at %v", since)
					assert.Equal(t, len(ticks[tick])+1, attempt, "attempt number at %v", since)
					if attempt > 1 && prevAt > 0 { // a retry after a failed self-heal attempt
						gap := since - prevAt
						assert.True(t, gap >= healGap*9/10 && gap <= healGap, "self-heal retry %v after the last", gap)
					}
					prevAt = 0
					if selfHeal {
						prevAt = since
					}
					if selfHeal {
						mark += 's' - 'n'
					}
					ticks[tick] += string(mark)
				}
				assert.Equal(t, c.ticks, ticks)
				for i, r := range retrying {
					// Every failure but a tick's last announces a retry; the
					// last does when a success follows.
					for j, got := range r {
						want := j < len(r)-1 || strings.ContainsAny(ticks[i], "NS")
						assert.Equal(t, want, got, "tick %d failure %d: Retrying", i, j+1)
					}
				}
				assert.True(t, pub.Recovering(Global), "no normal beat has landed since the self-heal beat")
			})
		})
	}
}

func TestPublisherStopsWhileUnhealthy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		zone := newZone(t, testGlobal)
		rec := &recorder{}
		pub, err := NewPublisher(testConfig("a", "europe"), Options{Global: zone, Observer: rec})
		require.NoError(t, err)
		assert.Equal(t, Verdict{}, pub.Verdict(), "starts unhealthy")
		begin := time.Now()
		stop := start(t.Context(), pub.Run)
		time.Sleep(15 * time.Second) // ticks at 0 and 10: nothing written
		pub.SetVerdict(Verdict{Healthy: true, Gateways: 1 << 20})
		assert.Equal(t, MaxGateways, pub.Verdict().Gateways, "clamped")
		time.Sleep(10 * time.Second) // tick at 20 writes
		pub.SetVerdict(Verdict{Healthy: false})
		time.Sleep(20 * time.Second) // ticks at 30 and 40: nothing
		pub.SetVerdict(Verdict{Healthy: true})
		time.Sleep(10 * time.Second) // tick at 50: a normal beat, not a self-heal one
		stop()

		var log []string
		for _, e := range rec.all() {
			switch ev := e.ev.(type) {
			case PublishingChanged:
				log = append(log, e.real.Sub(begin).String()+" publishing="+map[bool]string{true: "on", false: "off"}[ev.Publishing])
			case BeatWritten:
				log = append(log, e.real.Sub(begin).String()+" beat")
				assert.False(t, ev.Beat.SelfHeal)
			case RecoveringChanged:
				t.Errorf("recovering changed: %+v", ev)
			}
		}
		assert.Equal(t, []string{"0s publishing=off", "20s publishing=on", "20s beat", "30s publishing=off", "50s publishing=on", "50s beat"}, log)
	})
}

// TestPublisherReadBack: a record overwritten by someone else is reported,
// and a beat older than the threshold (writes failing) turns the next
// attempt into a self-heal beat.
func TestPublisherReadBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		zone := newZone(t, testGlobal)
		rec := &recorder{}
		ts := &throttleStore{Store: zone}
		pub, err := NewPublisher(testConfig("a", "europe"), Options{Global: ts, Observer: rec})
		require.NoError(t, err)
		pub.SetVerdict(Verdict{Healthy: true})
		// Garbage at our name before we start: reported, then overwritten.
		_, err = zone.SetRecords(t.Context(), testGlobal, []libdns.Record{libdns.TXT{Name: "health-001-a", TTL: time.Second, Text: "v=gslb1;garbage"}})
		require.NoError(t, err)
		ts.reject = func(_ time.Time, n int) bool { return n <= 3 } // the first interval is lost
		stop := start(t.Context(), pub.Run)
		time.Sleep(9 * time.Second)
		var reads []OwnBeatRead
		for _, e := range rec.all() {
			if ob, ok := e.ev.(OwnBeatRead); ok {
				reads = append(reads, ob)
			}
		}
		require.Len(t, reads, 1)
		assert.False(t, reads[0].Found)
		assert.ErrorIs(t, reads[0].Err, ErrMalformed)
		// The tick at 10 s writes a normal beat; from 15 s on every write
		// fails, so once the beat is older than 10 s the next attempt is a
		// self-heal beat (which fails too).
		ts.mu.Lock()
		ts.reject = func(at time.Time, _ int) bool { return at.Sub(reads[0].At) > 5*time.Second }
		ts.mu.Unlock()
		time.Sleep(25 * time.Second)
		stop()
		var healAttempts int
		for _, e := range rec.all() {
			if wf, ok := e.ev.(WriteFailed); ok && wf.SelfHeal {
				healAttempts++
			}
		}
		assert.Positive(t, healAttempts)
		assert.True(t, pub.Recovering(Global))
		assert.False(t, pub.Recovering(Local))
	})
}

func TestNewPublisherErrors(t *testing.T) {
	zone := newZone(t, testGlobal)
	cases := []struct {
		name string
		cfg  func() Config
		opts Options
	}{
		{"invalid config", func() Config { c := testConfig("a", "r"); c.Cluster = ""; return c }, Options{Global: zone}},
		{"no global store", func() Config { return testConfig("a", "r") }, Options{Local: zone}},
		{"no local store", func() Config { c := testConfig("a", "r"); c.LocalZone = testLocal; return c }, Options{Global: zone}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewPublisher(c.cfg(), c.opts)
			assert.Error(t, err)
		})
	}
}

func TestPublisherRunTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pub, err := NewPublisher(testConfig("a", "r"), Options{Global: newZone(t, testGlobal)})
		require.NoError(t, err)
		stop := start(t.Context(), pub.Run)
		synctest.Wait()
		assert.ErrorIs(t, pub.Run(t.Context()), ErrRunning)
		stop()
	})
}
