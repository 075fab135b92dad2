package main

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gslbkit/gslb/examples/internal/regionview"
	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/health"
	"github.com/gslbkit/gslb/heartbeat"
	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/record"
)

// ownerID marks the records the demo's reconcilers own; every controller of
// one deployment uses the same id, since they compute the same records.
const ownerID = "gslbkit-multiregion"

// controller is one cluster's controller, the heartbeat controller's loop:
// every interval it evaluates its gateways' gates, tells its heartbeat
// publisher the verdict, reads the local and global beats, reads back the
// shared address sets, asks the topology policy for the desired records and
// hands its share of them to its reconciler. The publisher and the
// reconciler run their own loops; run owns them.
type controller struct {
	d     *deployment
	cl    *cluster
	view  *view
	reads *regionview.Reads // what the tick reads, once per zone
	// throttle is the publisher's store; the -throttle step turns it on.
	throttle *throttleStore
	events   *publisherEvents // the publisher's observer
	gates    []*health.Gate
	pub      *heartbeat.Publisher
	local    *heartbeat.Reader
	global   *heartbeat.Reader
	rec      *record.Reconciler
	out      *printer
	met      *metrics

	dead atomic.Int32 // regions the last decision saw dead, for the script

	// Owned by the loop's goroutine.
	ticks  int
	failed map[string]bool // regions this controller last saw dead
	held   string          // why its regional record is held, "" when it is not
}

// rules are the heartbeat timings of both scopes: beats every interval,
// fresh for -healthy, one interval of clock skew tolerated.
func (d *deployment) rules() heartbeat.Rules {
	r := heartbeat.DefaultRules()
	r.ReconcileInterval = d.opts.interval
	r.HealthyDuration = d.opts.healthy
	r.SkewTolerance = d.opts.interval
	return r
}

func newController(d *deployment, cl *cluster, out *printer, met *metrics) (*controller, error) {
	c := &controller{d: d, cl: cl, view: d.views[cl.region], out: out, met: met, failed: map[string]bool{}}
	c.reads = &regionview.Reads{View: c.view.Mounts, Region: c.view.region}
	for _, g := range cl.gateways {
		gate, err := health.NewGate(
			health.GateCheck{Name: "endpoints", Check: g.endpoints},
			health.GateCheck{Name: "address", Check: g.external},
		)
		if err != nil {
			return nil, err
		}
		c.gates = append(c.gates, gate)
	}

	rules := d.rules()
	hb := heartbeat.DefaultConfig()
	hb.Cluster, hb.Region = cl.name, cl.region
	hb.LocalZone, hb.GlobalZone = d.names.local, d.names.global
	hb.Local, hb.Global = rules, rules
	hb.TTL = d.opts.ttl
	hb.RetryBackoff = d.opts.interval / 4
	// Every controller here runs this build, which reads both beat format
	// versions, so beats carry the gateway summary (format version 2) from
	// the start. A deployment upgrading from a release that reads version 1
	// only sets this once every reader is upgraded.
	hb.BeatVersion = 2
	obs := met.observer(cl.name)
	c.throttle = &throttleStore{view: c.view}
	c.events = &publisherEvents{c: c, next: obs}
	var err error
	c.pub, err = heartbeat.NewPublisher(hb, heartbeat.Options{
		Local: c.throttle, Global: c.throttle, Keyring: d.keyring, Observer: c.events,
	})
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cl.name, err)
	}
	for _, s := range []heartbeat.Scope{heartbeat.Local, heartbeat.Global} {
		rc := heartbeat.DefaultReaderConfig(s, hb.Zone(s))
		rc.Rules = rules
		r, err := heartbeat.NewReader(rc, c.reads, heartbeat.ReaderOptions{Keyring: d.keyring, Observer: obs})
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", cl.name, err)
		}
		if s == heartbeat.Local {
			c.local = r
		} else {
			c.global = r
		}
	}

	rc := record.LocalConfig(ownerID)
	rc.ResyncInterval = max(time.Second, 4*d.opts.interval)
	c.rec, err = record.New(c.view, rc, record.Options{Observer: record.ObserverFunc(c.recordEvent)})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// run drives the controller until ctx ends and waits for its loops.
func (c *controller) run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return c.pub.Run(ctx) })
	g.Go(func() error { return c.rec.Run(ctx) })
	g.Go(func() error {
		t := time.NewTicker(c.d.opts.interval)
		defer t.Stop()
		for {
			c.tick(ctx, time.Now())
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
			}
		}
	})
	return g.Wait()
}

// tick is one reconcile of the controller.
func (c *controller) tick(ctx context.Context, now time.Time) {
	c.ticks++
	c.reads.Reset()
	// 1. The gateways' verdicts, and the cluster's for the heartbeat.
	own := make([]failover.Gateway, len(c.cl.gateways))
	healthy := 0
	for i, g := range c.cl.gateways {
		v := c.gates[i].Evaluate(now)
		h := failover.Critical
		if v.Healthy {
			h = failover.Passing
			healthy++
		}
		if v.Changed && c.ticks > 1 {
			c.out.event(c.cl.name, fmt.Sprintf("gateway %s (%s) %s", g.name, g.addr, v))
		}
		own[i] = failover.Gateway{Name: g.name, Addrs: []netip.Addr{g.addr}, Health: h}
	}
	// Below the panic threshold the cluster stops beating, so every
	// controller fails its region over (the topology has already moved the
	// region's own clients on).
	beat := healthy > 0
	if th := c.d.opts.panic; th > 0 && float64(100*healthy/len(own)) < th {
		beat = false
	}
	c.pub.SetVerdict(heartbeat.Verdict{Healthy: beat, Gateways: healthy, Total: len(own)})

	// 2. The beats, and the shared sets as published.
	ls, lerr := c.local.Read(ctx, now)
	gs, gerr := c.global.Read(ctx, now)
	names := c.d.names
	snap := failover.Snapshot{Failover: c.readBack(ctx, names.global, c.d.topo.FailoverName())}
	for _, r := range c.d.regions {
		reg := failover.Region{Name: r.name, Zone: names.local}
		if r.name == c.cl.region {
			reg.Regional = c.readBack(ctx, names.local, c.d.topo.RegionalName())
		}
		snap.Regions = append(snap.Regions, reg)
		for _, k := range r.clusters {
			fc := failover.Cluster{Name: k.name, Region: k.region, Global: freshness(gs, gerr, k.name)}
			if k.region == c.cl.region {
				fc.Local = freshness(ls, lerr, k.name)
			}
			// What a fresh beat says of the cluster's gateways (how many
			// of how many are healthy), for policies that weigh regions.
			if fc.Global == failover.Fresh {
				if st, ok := gs.Cluster(k.name); ok {
					if h, n, ok := st.Beat.Summary(); ok {
						fc.Reported = failover.GatewaySummary{Healthy: h, Total: n}
					}
				}
			}
			for _, g := range k.gateways {
				fc.Gateways = append(fc.Gateways, failover.Gateway{Name: g.name, Addrs: []netip.Addr{g.addr}})
			}
			if k == c.cl {
				fc.Gateways = own
			}
			snap.Clusters = append(snap.Clusters, fc)
		}
	}

	// 3. The policy's decision; this controller writes its share.
	dec, err := c.d.topo.Decide(time.Now(), snap)
	if err != nil {
		c.out.event(c.cl.name, "policy: "+err.Error())
		return
	}
	c.noteRegions(dec)
	// The region's provider holds the global zone and the region's private
	// copy of the local zone: both views, read as they are (record.Source).
	if err := c.rec.Set(record.FromSource(dec.Desired.WrittenBy(c.cl.region), "", c.cl.region)); err != nil {
		c.out.event(c.cl.name, "reconciler: "+err.Error())
	}
}

// freshness turns one scope's read into the policy's view of a cluster:
// only a successful read is evidence (a failed one is unknown), and a
// cluster missing from a successful listing is stale.
func freshness(s heartbeat.Snapshot, err error, cluster string) failover.Freshness {
	if err != nil {
		return failover.FreshnessUnknown
	}
	if st, ok := s.Cluster(cluster); ok && st.Fresh {
		return failover.Fresh
	}
	return failover.Stale
}

// readBack reads the addresses published at name; a failed read is "not
// read", which the policy never takes as evidence.
func (c *controller) readBack(ctx context.Context, zone, name string) failover.Published {
	recs, err := c.reads.GetRecords(ctx, zone)
	if err != nil {
		return failover.Published{}
	}
	rel, _ := dnsname.Relative(name, zone)
	p := failover.Published{Read: true}
	for _, r := range recs {
		rr := r.RR()
		if !strings.EqualFold(rr.Name, rel) || (rr.Type != "A" && rr.Type != "AAAA") {
			continue
		}
		if a, err := netip.ParseAddr(rr.Data); err == nil {
			p.Addrs = append(p.Addrs, a)
		}
	}
	return p
}

// noteRegions prints the regions this controller starts or stops seeing
// dead (its reason to fail over), once the deployment has settled.
func (c *controller) noteRegions(dec failover.Decision) {
	n := int32(0)
	for _, r := range dec.Regions {
		if r.State == failover.RegionDead {
			n++
		}
	}
	c.dead.Store(n)
	held := ""
	for _, h := range dec.Held {
		if h.View == c.cl.region && h.Name == c.d.topo.RegionalName() {
			held = h.Reason.String()
		}
	}
	if held != c.held {
		c.held = held
		if c.d.settled.Load() {
			what := "stops holding " + c.d.names.short(c.d.topo.RegionalName())
			if held != "" {
				what = "holds " + c.d.names.short(c.d.topo.RegionalName()) + " (" + held + "): the last set stays published, never an empty one"
			}
			c.out.event(c.cl.name, what)
		}
	}
	for _, r := range dec.Regions {
		dead := r.State == failover.RegionDead
		if dead == c.failed[r.Name] {
			continue
		}
		c.failed[r.Name] = dead
		if !c.d.settled.Load() {
			continue
		}
		target := dec.GlobalTarget
		if target == "" {
			target = "held"
		}
		what := "sees region " + r.Name + " alive again"
		if dead {
			what = "sees region " + r.Name + " dead (every global beat stale)"
		}
		c.out.event(c.cl.name, fmt.Sprintf("%s → %s points at %s", what,
			c.d.names.short(c.d.topo.GlobalName()), c.d.names.short(target)))
	}
}

// recordEvent prints the reconciler's failures.
func (c *controller) recordEvent(e record.Event) {
	if ev, ok := e.(record.ErrorEvent); ok {
		c.out.event(c.cl.name, fmt.Sprintf("write failed (%s): %v", ev.Class(), ev.Err))
	}
}
