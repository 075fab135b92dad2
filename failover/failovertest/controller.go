package failovertest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/heartbeat"
	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/record"
)

// ownerID is the deployment-wide owner id every controller writes under.
const ownerID = "gslbkit-failovertest"

// controller is one cluster's controller, wired the way a heartbeat
// controller is: a probe monitor over the cluster's gateways (in-memory
// probers that obey the script), a heartbeat publisher writing local and
// global beats while some gateway is served, a reader per scope, the
// CNAME-topology policy and one reconciler per zone it writes.
type controller struct {
	w       *World
	t       *testing.T
	name    string
	region  string
	gws     []gatewayDecl
	now     func() time.Time
	local   *store
	global  *store
	mon     *probe.Monitor
	pub     *heartbeat.Publisher
	lread   *heartbeat.Reader
	gread   *heartbeat.Reader
	lrec    *record.Reconciler
	grec    *record.Reconciler
	kick    chan struct{}
	phase   time.Duration // delay of the first reconcile
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	health  map[string]probe.State
	last    failover.Decision
	decided bool
	lastOut string
}

func newController(t *testing.T, w *World, name string) (*controller, error) {
	s := w.s
	decl := s.clusters[s.cluster(name)]
	c := &controller{w: w, t: t, name: name, region: decl.region, now: w.clock(name),
		kick: make(chan struct{}, 1), health: map[string]probe.State{}}
	var err error
	if c.local, err = w.newStore(decl.region, LocalZone(decl.region)); err != nil {
		return nil, err
	}
	if c.global, err = w.newStore(decl.region, GlobalZone); err != nil {
		return nil, err
	}
	for _, g := range s.gateways {
		if g.cluster == name {
			c.gws = append(c.gws, g)
		}
	}

	mcfg := probe.DefaultMonitorConfig()
	mcfg.Seed = w.seed()
	mcfg.Concurrency = max(1, len(c.gws))
	var mon *probe.Monitor
	mon, err = probe.NewMonitor(mcfg, probe.ObserverFunc(c.observeProbe), nil)
	if err != nil {
		return nil, err
	}
	for _, g := range c.gws {
		gname := g.name
		prober := probe.ProberFunc(func(ctx context.Context) probe.Result {
			if !w.gatewayUp(gname) {
				return probe.Result{Status: probe.Fail, Kind: probe.KindRefused, Detail: "scripted down"}
			}
			return scriptedRoundTrip(ctx, w.gatewayRTT(gname), time.Duration(s.cfg.Probe.Timeout))
		})
		if err := mon.Add(probe.Target{ID: gname, Prober: prober, Policy: s.cfg.Probe}); err != nil {
			return nil, err
		}
		c.health[gname] = s.cfg.Probe.InitialState
	}
	c.mon = mon

	hc := s.cfg.publisher(name, decl.region)
	rng := &lockedRand{r: rand.New(rand.NewPCG(w.seed(), 0x6661696c))}
	iv := s.cfg.interval()
	c.phase = iv/2 + time.Duration(rng.Float64()*float64(iv/2))
	pub, err := heartbeat.NewPublisher(hc, heartbeat.Options{Local: c.local, Global: c.global, Now: c.now, Rand: rng.Float64})
	if err != nil {
		return nil, err
	}
	pub.SetVerdict(c.verdict())
	c.pub = pub

	lcfg := heartbeat.DefaultReaderConfig(heartbeat.Local, s.cfg.localZone())
	lcfg.Rules = s.cfg.Heartbeat
	gcfg := heartbeat.DefaultReaderConfig(heartbeat.Global, s.cfg.globalZone())
	gcfg.Rules = s.cfg.Heartbeat
	if c.lread, err = heartbeat.NewReader(lcfg, c.local, heartbeat.ReaderOptions{}); err != nil {
		return nil, err
	}
	if c.gread, err = heartbeat.NewReader(gcfg, c.global, heartbeat.ReaderOptions{}); err != nil {
		return nil, err
	}

	rc := record.LocalConfig(ownerID)
	if c.lrec, err = record.New(c.local, rc, record.Options{}); err != nil {
		return nil, err
	}
	if c.grec, err = record.New(c.global, rc, record.Options{}); err != nil {
		return nil, err
	}
	return c, nil
}

// lockedRand makes a seeded generator safe for concurrent use.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

// Float64 returns a uniform float in [0, 1).
func (l *lockedRand) Float64() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Float64()
}

// verdict is the cluster's local verdict: healthy while a gateway is
// served and, with a panic threshold, while at least that share of its
// gateways is (so peers fail a panicking region over). The caller holds
// no lock.
func (c *controller) verdict() heartbeat.Verdict {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, st := range c.health {
		if st.Served() {
			n++
		}
	}
	healthy := n > 0
	if th := c.w.s.cfg.Topology.PanicThreshold; th > 0 && len(c.health) > 0 && float64(100*n/len(c.health)) < th {
		healthy = false
	}
	return heartbeat.Verdict{Healthy: healthy, Gateways: n, Total: len(c.health)}
}

// scriptedRoundTrip is an up gateway's answer to a probe after rtt (see
// Moment.GatewaySlow): a pass with that latency, or a timeout when rtt is
// the probe timeout or longer (decided up front, so a round trip equal to
// the timeout does not race it).
func scriptedRoundTrip(ctx context.Context, rtt, timeout time.Duration) probe.Result {
	if rtt <= 0 {
		return probe.Result{Status: probe.Pass}
	}
	if timeout > 0 && rtt >= timeout {
		<-ctx.Done()
		return probe.Result{Status: probe.Fail, Kind: probe.KindTimeout, Detail: "scripted round trip " + rtt.String() + " reaches the timeout"}
	}
	t := time.NewTimer(rtt)
	defer t.Stop()
	select {
	case <-t.C:
		return probe.Result{Status: probe.Pass, Latency: rtt}
	case <-ctx.Done():
		return probe.Result{Status: probe.Fail, Kind: probe.KindTimeout, Detail: "stopped"}
	}
}

// observeProbe records a gateway's new state, updates the beat verdict and
// asks for a reconcile at once.
func (c *controller) observeProbe(e probe.Event) {
	c.mu.Lock()
	c.health[e.Target] = e.Transition.To
	c.mu.Unlock()
	c.w.moved(e.Target, e.Transition.To)
	c.pub.SetVerdict(c.verdict())
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// start runs the controller's loops until stop.
func (c *controller) start() {
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.wg.Add(3)
	go func() { defer c.wg.Done(); _ = c.mon.Run(ctx) }()
	go func() { defer c.wg.Done(); _ = c.pub.Run(ctx) }()
	go func() { defer c.wg.Done(); c.loop(ctx) }()
}

// stop cancels every loop and waits for them.
func (c *controller) stop() {
	c.cancel()
	c.wg.Wait()
}

// loop reconciles every interval and at once after a gateway changes
// state. Its first reconcile comes a seeded random phase after start,
// between half an interval and one interval (so the beats of peers started
// at the same time are there, and controllers started together do not
// reconcile at the same virtual instants, which no real deployment does).
func (c *controller) loop(ctx context.Context) {
	first := time.NewTimer(c.phase)
	defer first.Stop()
	select {
	case <-ctx.Done():
		return
	case <-first.C:
	}
	tick := time.NewTicker(c.w.s.cfg.interval())
	defer tick.Stop()
	for {
		c.reconcile(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-c.kick:
		}
	}
}

// reconcile reads, decides and publishes once.
func (c *controller) reconcile(ctx context.Context) {
	snap := c.snapshot(ctx)
	dec, err := c.w.s.decider().Decide(c.now(), snap)
	if err != nil {
		c.t.Errorf("controller %s: decide: %v", c.name, err)
		return
	}
	c.mu.Lock()
	c.last, c.decided = dec, true
	c.mu.Unlock()
	mine := dec.Desired.WrittenBy(c.region)
	if c.w.s.cfg.Trace {
		if out := mine.String(); out != c.lastOut {
			c.lastOut = out
			c.t.Logf("%v %s writes:\n%s", c.w.now(), c.name, out)
		}
	}
	// The region's private copy of the local zone holds the sets of its
	// view; the global zone the shared ones.
	local, global := record.FromSource(mine, c.region), record.FromSource(mine)
	// Errors (throttling, an unreadable zone) leave the desired state
	// pending; the next reconcile retries, as a controller's loop does.
	if len(local.Sets)+len(local.Withdraw) > 0 {
		_, err := c.lrec.Apply(ctx, local)
		c.trace(LocalZone(c.region), err)
	}
	if len(global.Sets)+len(global.Withdraw) > 0 {
		_, err := c.grec.Apply(ctx, global)
		c.trace(GlobalZone, err)
	}
}

// trace logs a failed publication when Config.Trace is set.
func (c *controller) trace(z Zone, err error) {
	if err != nil && c.w.s.cfg.Trace && ctxAlive(err) {
		c.t.Logf("%v %s: publishing to %s: %v", c.w.now(), c.name, z, err)
	}
}

// ctxAlive reports whether err is not just the controller being stopped.
func ctxAlive(err error) bool { return !errors.Is(err, context.Canceled) }

func (c *controller) lastDecision() (failover.Decision, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last, c.decided
}

// snapshot builds what this controller knows, by the rules of the
// failover package's documentation ("Feeding the snapshot").
func (c *controller) snapshot(ctx context.Context) failover.Snapshot {
	s := c.w.s
	now := c.now()
	lsnap, lerr := c.lread.Read(ctx, now)
	gsnap, gerr := c.gread.Read(ctx, now)
	var snap failover.Snapshot
	for _, r := range s.regions {
		reg := failover.Region{Name: r, Zone: s.cfg.localZone()}
		if r == c.region {
			reg.Regional = c.published(ctx, c.local, s.cfg.localZone(), s.topo.RegionalName())
		}
		snap.Regions = append(snap.Regions, reg)
	}
	c.mu.Lock()
	health := make(map[string]probe.State, len(c.health))
	for k, v := range c.health {
		health[k] = v
	}
	c.mu.Unlock()
	for _, k := range s.clusters {
		fc := failover.Cluster{Name: k.name, Region: k.region,
			Global: freshness(gsnap, gerr, k.name)}
		if k.region == c.region {
			fc.Local = freshness(lsnap, lerr, k.name)
		} else if c.w.partitioned(c.region, k.region) {
			fc.Global = failover.FreshnessUnknown
		}
		switch {
		case fc.Global == failover.Fresh:
			fc.Reported = summary(gsnap, k.name)
		case fc.Local == failover.Fresh:
			fc.Reported = summary(lsnap, k.name)
		}
		for _, g := range s.gateways {
			if g.cluster != k.name {
				continue
			}
			fg := failover.Gateway{Name: g.name, Addrs: g.addrs}
			if k.name == c.name {
				fg.Health = failover.Health(health[g.name])
				if st, ok := c.mon.Stats(g.name); ok {
					fg.RTT = st.SmoothedLatency
				}
			}
			fc.Gateways = append(fc.Gateways, fg)
		}
		snap.Clusters = append(snap.Clusters, fc)
	}
	snap.Failover = c.published(ctx, c.global, s.cfg.globalZone(), s.topo.FailoverName())
	return snap
}

// freshness turns one cluster's entry in a heartbeat read into the
// policy's terms: unknown when the read failed, stale when it is not
// fresh or absent from a listing that succeeded.
func freshness(snap heartbeat.Snapshot, err error, cluster string) failover.Freshness {
	if err != nil {
		return failover.FreshnessUnknown
	}
	if st, ok := snap.Cluster(cluster); ok && st.Fresh {
		return failover.Fresh
	}
	return failover.Stale
}

// summary is the gateway summary of cluster's beat in a heartbeat read
// (unknown for a version-1 beat); the caller has judged it fresh.
func summary(snap heartbeat.Snapshot, cluster string) failover.GatewaySummary {
	st, _ := snap.Cluster(cluster)
	h, n, _ := st.Beat.Summary()
	return failover.GatewaySummary{Healthy: h, Total: n}
}

// published reads back the addresses at name in zone; a failed read is
// "not read".
func (c *controller) published(ctx context.Context, st *store, zone, name string) failover.Published {
	recs, err := st.GetRecords(ctx, zone)
	if err != nil {
		return failover.Published{}
	}
	p := failover.Published{Read: true}
	for _, r := range recs {
		rr := r.RR()
		if rr.Type != "A" && rr.Type != "AAAA" || !dnsname.Equal(libdns.AbsoluteName(rr.Name, zone), name) {
			continue
		}
		if ip, err := netip.ParseAddr(rr.Data); err == nil {
			p.Addrs = append(p.Addrs, ip.Unmap())
		}
	}
	return p
}

// String names the controller in messages.
func (c *controller) String() string { return fmt.Sprintf("controller %s (%s)", c.name, c.region) }

// sameName reports whether rel, relative to zone, is name.
func sameName(rel, zone, name string) bool {
	return dnsname.Equal(libdns.AbsoluteName(rel, zone), name)
}
