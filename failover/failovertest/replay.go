package failovertest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"time"

	"golang.org/x/time/rate"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/record"
)

// ErrExpectation is wrapped by every failed expectation Replay reports.
var ErrExpectation = errors.New("failovertest: expectation not met")

// Replay plays the scenario's gateway timeline against its policy (the
// Topology, or the one given to Policy) in simulated time, with no
// goroutine, no testing/synctest bubble and no *testing.T, so that an
// Example or a quick check can run it; it writes one line per expectation
// to out (nil: nowhere) and returns an error joining the failed ones
// (each wraps ErrExpectation), nil when all hold.
//
// Its world is simpler than Run's: one controller observes every gateway
// through a probe.Machine with Config.Probe (base delays, no jitter; a
// gateway that is down fails each probe at once); a cluster's beats are
// fresh while one of its gateways is served and stale otherwise (no
// heartbeat timing), and its Reported summary counts its served gateways
// of all of them, as a version-2 beat does; a slow gateway (GatewaySlow)
// answers each probe at once with its scripted latency (a timeout when
// that reaches the probe Timeout), smoothed into failover.Gateway.RTT as a
// probe.Monitor with the default LatencySmoothing does; the controller decides every reconcile interval and
// at once after a gateway changes state, and its whole Desired (every
// writer's part, each view into its region's private zone) is published
// through a record.Reconciler at that instant. So an answer changes at
// most a probe detection after the gateway does, inside
// Config.GatewayBound. The warm-up runs first, every gateway up.
//
// Only GatewayDown, GatewayUp, GatewaySlow, Expect and ExpectWithin steps
// can be replayed; a scenario with other steps (controllers, partitions, faults,
// Do) gives an error wrapping ErrInvalid: use Run. Always conditions and
// Until are Run's only; Replay ends at the last step or deadline. A
// Scenario may be replayed any number of times, and run once as well.
func (s *Scenario) Replay(out io.Writer) error {
	if s.err != nil {
		return s.err
	}
	if s.topo == nil {
		return ErrNotConfigured
	}
	if out == nil {
		out = io.Discard
	}
	steps := s.sorted()
	for _, st := range steps {
		if st.replay == nil {
			return fmt.Errorf("%w: at %v: %s: Replay plays gateway and expectation steps only; use Run", ErrInvalid, st.at, st.what)
		}
	}
	if len(s.clusters) == 0 {
		return fmt.Errorf("%w: no cluster declared", ErrInvalid)
	}
	w, err := newWorld(s, time.Time{})
	if err != nil {
		return err
	}
	r, err := newReplayer(s, w)
	if err != nil {
		return err
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	warm := s.cfg.warmUp()
	r.clock = base.Add(-warm)
	for i := range r.gws {
		r.gws[i].next = r.clock
	}
	r.nextDecide = r.clock
	var errs []error
	type open struct {
		rs      *replayStep
		start   time.Duration
		matched bool
		at      time.Duration
	}
	var watches []*open
	check := func(now time.Duration) {
		for _, o := range watches {
			if !o.matched && slices.Equal(w.Resolve(o.rs.region, o.rs.name), o.rs.want) {
				o.matched, o.at = true, now-o.start
			}
		}
	}
	type deadline struct {
		at time.Duration
		o  *open
	}
	var deadlines []deadline
	since := func(t time.Time) time.Duration { return t.Sub(base) }
	advance := func(to time.Duration) error {
		for {
			next := r.nextEvent()
			if since(next) > to {
				r.clock = base.Add(to)
				return nil
			}
			r.clock = next
			changed, err := r.stepProbes()
			if err != nil {
				return err
			}
			if changed || !r.nextDecide.After(r.clock) {
				if err := r.decide(); err != nil {
					return err
				}
				check(since(r.clock))
			}
		}
	}
	for i := 0; i < len(steps) || len(deadlines) > 0; {
		// The next instant: a step or a deadline, whichever comes first.
		at := time.Duration(1<<62 - 1)
		if i < len(steps) {
			at = steps[i].at
		}
		if len(deadlines) > 0 && deadlines[0].at < at {
			at = deadlines[0].at
		}
		if err := advance(at); err != nil {
			return err
		}
		for len(deadlines) > 0 && deadlines[0].at == at {
			o := deadlines[0].o
			deadlines = deadlines[1:]
			got := w.Resolve(o.rs.region, o.rs.name)
			label := fmt.Sprintf("%s in %s from %v", o.rs.name, o.rs.region, o.start)
			switch {
			case !o.matched:
				errs = append(errs, fmt.Errorf("%w: %s: %s: never got %v within %v; now %v", ErrExpectation, o.rs.where, label, o.rs.want, o.rs.bound, got))
				fmt.Fprintf(out, "at %v: %s in %s: NOT %v within %v (got %v)\n", o.start, o.rs.name, o.rs.region, o.rs.want, o.rs.bound, got)
			case !slices.Equal(got, o.rs.want):
				errs = append(errs, fmt.Errorf("%w: %s: %s: got %v after %v but %v at the bound %v", ErrExpectation, o.rs.where, label, o.rs.want, o.at, got, o.rs.bound))
				fmt.Fprintf(out, "at %v: %s in %s: %v after %v, lost by %v\n", o.start, o.rs.name, o.rs.region, o.rs.want, o.at, o.rs.bound)
			default:
				fmt.Fprintf(out, "at %v: %s in %s: %v after %v (bound %v)\n", o.start, o.rs.name, o.rs.region, o.rs.want, o.at, o.rs.bound)
			}
		}
		for i < len(steps) && steps[i].at == at {
			rs := steps[i].replay
			i++
			switch {
			case rs.slow:
				for _, g := range rs.gateways {
					r.rtt[g] = rs.rtt
				}
			case len(rs.gateways) > 0:
				for _, g := range rs.gateways {
					r.up[g] = rs.up
				}
			case rs.expect && rs.bound < 0:
				if got := w.Resolve(rs.region, rs.name); !slices.Equal(got, rs.want) {
					errs = append(errs, fmt.Errorf("%w: %s: at %v: %s in %s: got %v, want %v", ErrExpectation, rs.where, at, rs.name, rs.region, got, rs.want))
					fmt.Fprintf(out, "at %v: %s in %s: %v, NOT %v\n", at, rs.name, rs.region, got, rs.want)
				} else {
					fmt.Fprintf(out, "at %v: %s in %s: %v\n", at, rs.name, rs.region, got)
				}
			case rs.expect:
				o := &open{rs: rs, start: at}
				watches = append(watches, o)
				check(at)
				deadlines = append(deadlines, deadline{at: at + rs.bound, o: o})
				slices.SortStableFunc(deadlines, func(a, b deadline) int { return cmp.Compare(a.at, b.at) })
			}
		}
	}
	return errors.Join(errs...)
}

// replayer is Replay's simulated controller.
type replayer struct {
	s          *Scenario
	w          *World
	clock      time.Time
	nextDecide time.Time
	gws        []replayGateway
	up         map[string]bool
	rtt        map[string]time.Duration
	alpha      float64 // the probe monitor's default latency smoothing
	global     *record.Reconciler
	locals     map[string]*record.Reconciler
}

type replayGateway struct {
	decl   gatewayDecl
	m      *probe.Machine
	next   time.Time
	probes int
	ewma   float64 // smoothed latency, nanoseconds
}

func newReplayer(s *Scenario, w *World) (*replayer, error) {
	r := &replayer{s: s, w: w, up: map[string]bool{}, rtt: map[string]time.Duration{}, locals: map[string]*record.Reconciler{},
		alpha: probe.DefaultMonitorConfig().LatencySmoothing}
	opts := record.Options{Limiter: rate.NewLimiter(rate.Inf, 1)}
	var err error
	if r.global, err = record.New(w.global, record.LocalConfig(ownerID), opts); err != nil {
		return nil, err
	}
	for _, reg := range s.regions {
		if r.locals[reg], err = record.New(w.locals[reg], record.LocalConfig(ownerID), opts); err != nil {
			return nil, err
		}
	}
	for _, g := range s.gateways {
		m, err := probe.NewMachine(s.cfg.Probe)
		if err != nil {
			return nil, nested("probe", err)
		}
		r.gws = append(r.gws, replayGateway{decl: g, m: m})
		r.up[g.name] = true
	}
	return r, nil
}

// nextEvent is the earliest probe or decision.
func (r *replayer) nextEvent() time.Time {
	t := r.nextDecide
	for _, g := range r.gws {
		if g.next.Before(t) {
			t = g.next
		}
	}
	return t
}

// stepProbes runs the probes due now and reports whether a state changed.
func (r *replayer) stepProbes() (bool, error) {
	changed := false
	for i := range r.gws {
		g := &r.gws[i]
		if g.next.After(r.clock) {
			continue
		}
		res := probe.Result{Status: probe.Pass, Latency: r.rtt[g.decl.name]}
		if timeout := time.Duration(r.s.cfg.Probe.Timeout); timeout > 0 && res.Latency >= timeout {
			res = probe.Result{Status: probe.Fail, Kind: probe.KindTimeout, Latency: timeout, Detail: "scripted round trip reaches the timeout"}
		}
		if !r.up[g.decl.name] {
			res = probe.Result{Status: probe.Fail, Kind: probe.KindRefused, Detail: "scripted down"}
		}
		g.probes++
		if g.probes == 1 {
			g.ewma = float64(res.Latency)
		} else {
			g.ewma += r.alpha * (float64(res.Latency) - g.ewma)
		}
		st := g.m.Observe(r.clock, res)
		changed = changed || st.Changed
		g.next = r.clock.Add(st.Next)
	}
	return changed, nil
}

// decide builds the omniscient snapshot, decides and publishes.
func (r *replayer) decide() error {
	s := r.s
	r.nextDecide = r.clock.Add(s.cfg.interval())
	ctx := context.Background()
	var snap failover.Snapshot
	for _, reg := range s.regions {
		snap.Regions = append(snap.Regions, failover.Region{Name: reg, Zone: s.cfg.localZone(),
			Regional: readBack(ctx, r.w.locals[reg], s.cfg.localZone(), s.topo.RegionalName())})
	}
	for _, k := range s.clusters {
		fc := failover.Cluster{Name: k.name, Region: k.region, Local: failover.Stale, Global: failover.Stale}
		for _, g := range r.gws {
			if g.decl.cluster != k.name {
				continue
			}
			h := failover.Health(g.m.State())
			if h.Served() {
				fc.Local, fc.Global = failover.Fresh, failover.Fresh
				fc.Reported.Healthy++
			}
			fc.Reported.Total++
			fc.Gateways = append(fc.Gateways, failover.Gateway{Name: g.decl.name, Addrs: g.decl.addrs, Health: h,
				RTT: time.Duration(g.ewma)})
		}
		if fc.Global != failover.Fresh {
			fc.Reported = failover.GatewaySummary{} // no fresh beat, no summary
		}
		snap.Clusters = append(snap.Clusters, fc)
	}
	snap.Failover = readBack(ctx, r.w.global, s.cfg.globalZone(), s.topo.FailoverName())
	dec, err := s.decider().Decide(r.clock, snap)
	if err != nil {
		return fmt.Errorf("failovertest: replay at %v: decide: %w", r.clock, err)
	}
	if _, err := r.global.Apply(ctx, record.FromSource(dec.Desired, "")); err != nil {
		return fmt.Errorf("failovertest: replay: publish to the global zone: %w", err)
	}
	for _, reg := range s.regions {
		if _, err := r.locals[reg].Apply(ctx, record.FromSource(dec.Desired, reg)); err != nil {
			return fmt.Errorf("failovertest: replay: publish to local/%s: %w", reg, err)
		}
	}
	return nil
}

// readBack reads the addresses at name in zone from a provider.
func readBack(ctx context.Context, p record.ZoneEditor, zone, name string) failover.Published {
	recs, err := p.GetRecords(ctx, zone)
	if err != nil {
		return failover.Published{}
	}
	out := failover.Published{Read: true}
	for _, rec := range recs {
		rr := rec.RR()
		if (rr.Type == "A" || rr.Type == "AAAA") && sameName(rr.Name, zone, name) {
			if ip, err := netip.ParseAddr(rr.Data); err == nil {
				out.Addrs = append(out.Addrs, ip.Unmap())
			}
		}
	}
	return out
}
