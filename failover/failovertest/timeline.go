package failovertest

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Zone names one of a scenario's zones: the global zone (GlobalZone) or the
// private local zone of one region (LocalZone).
type Zone struct {
	region string
}

// GlobalZone is the global zone: global and failover names, app names,
// global beats. Every controller reads and writes it. (heartbeat.Global
// is the scope of the beats written there.)
var GlobalZone = Zone{}

// LocalZone returns region's private copy of the local zone: its regional
// record and its local beats. Only the region's controllers use it, and
// only the region's clients resolve through it. (heartbeat.Local is the
// scope of the beats written there.)
func LocalZone(region string) Zone { return Zone{region: region} }

// String returns "global" or "local/<region>".
func (z Zone) String() string {
	if z.region == "" {
		return "global"
	}
	return "local/" + z.region
}

// step is one entry of the timeline: at its time, after everything due at
// that instant has run, do runs in the runner's goroutine.
type step struct {
	at   time.Duration
	what string
	do   func(t *testing.T, w *World)
	// replay says how Replay plays the step; nil: it cannot.
	replay *replayStep
}

// replayStep is what Replay needs of a step: gateways going down or up, or
// an expectation (bound < 0: Expect, exactly now).
type replayStep struct {
	gateways []string
	up       bool
	slow     bool          // a GatewaySlow step: set rtt, leave up alone
	rtt      time.Duration // with slow
	expect   bool
	bound    time.Duration
	region   string
	name     string
	want     []netip.Addr
	where    string
}

// Moment is one instant of a scenario's timeline, d after time zero (the
// end of the warm-up). Its methods add steps that run at that instant,
// once everything else due then has run (probes, beats, reconciles), in
// declaration order; each returns the Moment so calls chain.
type Moment struct {
	s  *Scenario
	at time.Duration
}

// At returns the moment d after time zero. d must not be negative.
func (s *Scenario) At(d time.Duration) Moment {
	if d < 0 {
		s.fail("at %v: time must not be negative", d)
	}
	return Moment{s: s, at: d}
}

func (m Moment) add(what string, do func(t *testing.T, w *World)) Moment {
	return m.addReplay(what, do, nil)
}

func (m Moment) addReplay(what string, do func(t *testing.T, w *World), rs *replayStep) Moment {
	m.s.steps = append(m.s.steps, step{at: m.at, what: what, do: do, replay: rs})
	return m
}

// caller returns the file:line of the first caller outside the kit's own
// (non-test) files: where the user declared the step.
func caller() string {
	var pcs [16]uintptr
	n := runtime.Callers(2, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if !strings.Contains(f.Function, "/failover/failovertest.") || strings.HasSuffix(f.File, "_test.go") {
			return filepath.Base(f.File) + ":" + strconv.Itoa(f.Line)
		}
		if !more {
			return "?"
		}
	}
}

func (m Moment) gateways(names []string) bool {
	for _, n := range names {
		if m.s.gateway(n) < 0 {
			m.s.fail("at %v: gateway %q not declared", m.at, n)
			return false
		}
	}
	return true
}

func (m Moment) clusters(names []string) bool {
	for _, n := range names {
		if m.s.cluster(n) < 0 {
			m.s.fail("at %v: cluster %q not declared", m.at, n)
			return false
		}
	}
	return true
}

func (m Moment) regions(names ...string) bool {
	for _, n := range names {
		if !slices.Contains(m.s.regions, n) {
			m.s.fail("at %v: region %q not declared", m.at, n)
			return false
		}
	}
	return true
}

// GatewayDown makes the named gateways fail every probe from now on.
func (m Moment) GatewayDown(gateways ...string) Moment {
	if !m.gateways(gateways) {
		return m
	}
	return m.addReplay("gateway down "+strings.Join(gateways, " "), func(_ *testing.T, w *World) {
		for _, g := range gateways {
			w.setGateway(g, false)
		}
	}, &replayStep{gateways: gateways})
}

// GatewaySlow makes the named gateways answer each probe after rtt from
// now on (0 restores an immediate answer); a gateway that is down still
// fails at once. A round trip as long as the probe policy's Timeout or
// longer fails the probe as a timeout (KindTimeout), as a real prober
// would. Each controller's probe monitor smooths the latencies
// (World.ProbeStats) and hands the result to its policy as
// failover.Gateway.RTT. rtt must not be negative.
func (m Moment) GatewaySlow(rtt time.Duration, gateways ...string) Moment {
	if rtt < 0 {
		m.s.fail("at %v: GatewaySlow: rtt %v must not be negative", m.at, rtt)
		return m
	}
	if !m.gateways(gateways) {
		return m
	}
	return m.addReplay(fmt.Sprintf("gateway slow %v %s", rtt, strings.Join(gateways, " ")), func(_ *testing.T, w *World) {
		for _, g := range gateways {
			w.setRTT(g, rtt)
		}
	}, &replayStep{gateways: gateways, slow: true, rtt: rtt})
}

// GatewayUp makes the named gateways pass every probe from now on.
func (m Moment) GatewayUp(gateways ...string) Moment {
	if !m.gateways(gateways) {
		return m
	}
	return m.addReplay("gateway up "+strings.Join(gateways, " "), func(_ *testing.T, w *World) {
		for _, g := range gateways {
			w.setGateway(g, true)
		}
	}, &replayStep{gateways: gateways, up: true})
}

// ControllerDown stops the named clusters' controllers (every goroutine:
// probes, beats, reads, reconciles), as a crashed process. Their gateways
// keep serving whatever the zones say.
func (m Moment) ControllerDown(clusters ...string) Moment {
	if !m.clusters(clusters) {
		return m
	}
	return m.add("controller down "+strings.Join(clusters, " "), func(t *testing.T, w *World) {
		for _, c := range clusters {
			w.stopController(t, c)
		}
	})
}

// ControllerUp starts fresh controllers for the named clusters, as a
// restarted process: new probe machines in the policy's initial state,
// new readers; it beats at once and first reconciles between half an
// interval and one interval later.
func (m Moment) ControllerUp(clusters ...string) Moment {
	if !m.clusters(clusters) {
		return m
	}
	return m.add("controller up "+strings.Join(clusters, " "), func(t *testing.T, w *World) {
		for _, c := range clusters {
			w.startController(t, c)
		}
	})
}

// RegionDown loses region whole: every gateway of the region goes down
// and every controller stops. The region's private zone still answers its
// clients (it is whatever resolver they reach).
func (m Moment) RegionDown(region string) Moment {
	if !m.regions(region) {
		return m
	}
	return m.add("region down "+region, func(t *testing.T, w *World) {
		for _, c := range w.s.clusters {
			if c.region == region {
				w.stopController(t, c.name)
			}
		}
		for _, g := range w.s.gateways {
			if w.s.clusters[w.s.cluster(g.cluster)].region == region {
				w.setGateway(g.name, false)
			}
		}
	})
}

// RegionUp brings region back: its gateways up, its controllers started.
func (m Moment) RegionUp(region string) Moment {
	if !m.regions(region) {
		return m
	}
	return m.add("region up "+region, func(t *testing.T, w *World) {
		for _, g := range w.s.gateways {
			if w.s.clusters[w.s.cluster(g.cluster)].region == region {
				w.setGateway(g.name, true)
			}
		}
		for _, c := range w.s.clusters {
			if c.region == region {
				w.startController(t, c.name)
			}
		}
	})
}

// Throttle makes every call (reads and writes) to zone fail as throttled
// (an error answering Throttled() true) for d.
func (m Moment) Throttle(zone Zone, d time.Duration) Moment {
	return m.throttle(zone, d, false)
}

// ThrottleWrites makes every write to zone fail as throttled for d; reads
// still succeed.
func (m Moment) ThrottleWrites(zone Zone, d time.Duration) Moment {
	return m.throttle(zone, d, true)
}

func (m Moment) throttle(zone Zone, d time.Duration, writesOnly bool) Moment {
	if zone.region != "" && !m.regions(zone.region) {
		return m
	}
	if d <= 0 {
		m.s.fail("at %v: throttle of %v: duration must be positive", m.at, d)
		return m
	}
	what := "throttle"
	if writesOnly {
		what = "throttle writes"
	}
	return m.add(fmt.Sprintf("%s of %s for %v", what, zone, d), func(_ *testing.T, w *World) {
		w.throttle(zone, w.now()+d, writesOnly)
	})
}

// Partition cuts regions a and b apart: controllers of each cannot read
// the other's beats (they see them FreshnessUnknown, never stale), while
// every write still succeeds. Heal undoes it.
func (m Moment) Partition(a, b string) Moment {
	if !m.regions(a, b) || a == b {
		m.s.fail("at %v: partition %q–%q: two declared regions", m.at, a, b)
		return m
	}
	return m.add("partition "+a+" | "+b, func(_ *testing.T, w *World) { w.partition(a, b, true) })
}

// Heal ends the partition between regions a and b.
func (m Moment) Heal(a, b string) Moment {
	if !m.regions(a, b) {
		return m
	}
	return m.add("heal "+a+" | "+b, func(_ *testing.T, w *World) { w.partition(a, b, false) })
}

// Unreadable makes zone fail every read by region's controllers (a
// transient error: the listing fails) until Readable; their writes still
// reach it.
func (m Moment) Unreadable(region string, zone Zone) Moment {
	if !m.regions(region) {
		return m
	}
	return m.add(fmt.Sprintf("%s unreadable by %s", zone, region), func(_ *testing.T, w *World) {
		w.setUnreadable(region, zone, true)
	})
}

// Readable ends Unreadable.
func (m Moment) Readable(region string, zone Zone) Moment {
	if !m.regions(region) {
		return m
	}
	return m.add(fmt.Sprintf("%s readable by %s", zone, region), func(_ *testing.T, w *World) {
		w.setUnreadable(region, zone, false)
	})
}

// Skew sets cluster's clock to run d ahead of true (virtual) time (behind
// when d is negative): its beats are stamped, and the beats it reads are
// judged, on that clock.
func (m Moment) Skew(cluster string, d time.Duration) Moment {
	if !m.clusters([]string{cluster}) {
		return m
	}
	return m.add(fmt.Sprintf("skew %s by %v", cluster, d), func(_ *testing.T, w *World) { w.setSkew(cluster, d) })
}

// Expect asserts that a resolver in region gets exactly addrs (IPv4 and
// IPv6 together, any order) for name now. No addrs asserts an empty
// answer.
func (m Moment) Expect(region, name string, addrs ...string) Moment {
	want, ok := m.want(region, addrs)
	if !ok {
		return m
	}
	where := caller()
	return m.addReplay(fmt.Sprintf("expect %s in %s: %v", name, region, addrs), func(t *testing.T, w *World) {
		t.Helper()
		if got := w.Resolve(region, name); !slices.Equal(got, want) {
			t.Errorf("%s: at %v: %s in %s: got %v, want %v (chain %v)", where, m.at, name, region, got, want, w.Chain(region, name))
		}
	}, &replayStep{expect: true, bound: -1, region: region, name: name, want: want, where: where})
}

// ExpectWithin asserts that, starting now, a resolver in region gets
// exactly addrs for name within bound, and still gets them at now +
// bound. The answer is watched at every zone write, so the time it took
// is measured exactly; it is logged beside the bound (t.Logf), and the
// measured time is available from World.Measured.
func (m Moment) ExpectWithin(bound time.Duration, region, name string, addrs ...string) Moment {
	want, ok := m.want(region, addrs)
	if !ok {
		return m
	}
	if bound < 0 {
		m.s.fail("at %v: bound %v: not negative", m.at, bound)
		return m
	}
	label := fmt.Sprintf("%s in %s from %v", name, region, m.at)
	where := caller()
	var wt *watch
	m.addReplay(fmt.Sprintf("expect %s in %s within %v: %v", name, region, bound, addrs), func(_ *testing.T, w *World) {
		wt = w.watch(label, region, name, want)
	}, &replayStep{expect: true, bound: bound, region: region, name: name, want: want, where: where})
	end := Moment{s: m.s, at: m.at + bound}
	end.addReplay(fmt.Sprintf("deadline of %s", label), func(t *testing.T, w *World) {
		t.Helper()
		w.checkWatch(t, where, wt, bound)
	}, &replayStep{}) // Replay checks its own deadlines
	return m
}

// Do runs f at this moment with the running world: resolve names, count
// writes, read a controller's last decision, and assert with t.
func (m Moment) Do(what string, f func(t *testing.T, w *World)) Moment {
	if f == nil {
		m.s.fail("at %v: do %q: nil function", m.at, what)
		return m
	}
	return m.add("do "+what, f)
}

func (m Moment) want(region string, addrs []string) ([]netip.Addr, bool) {
	if !m.regions(region) {
		return nil, false
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		ip, err := netip.ParseAddr(a)
		if err != nil {
			m.s.fail("at %v: expected address %q: %w", m.at, a, err)
			return nil, false
		}
		out = append(out, ip.Unmap())
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return slices.Compact(out), true
}
