package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/kubernetes"

	"github.com/gslbkit/gslb/examples/internal/regionview"
	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/health"
	"github.com/gslbkit/gslb/heartbeat"
	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/record"
)

// ownerID marks the records the controllers own; every controller of one
// deployment uses the same id, since they compute the same records.
const ownerID = "gslbkit-kubernetes"

// replica is one replica of one cluster's controller. Every replica
// watches; only the leader (see elect) evaluates, beats and writes.
type replica struct {
	cfg      config
	names    names
	topo     *failover.Topology
	keyring  *heartbeat.Keyring
	view     *view        // reads
	fenced   *fencedStore // writes: the view, fenced by the term's token
	w        *watcher
	met      *metrics
	log      *slog.Logger
	problems *problems
	resolver health.Resolver // nil: the system's
	// afterTick, when set, is called after every reconcile of the leader
	// with its decision (tests).
	afterTick func(failover.Decision)
	cs        kubernetes.Interface
	termMu    sync.Mutex // held by a leadership term while it runs
}

func newReplica(cfg config, v *view, w *watcher, met *metrics, log *slog.Logger) (*replica, error) {
	n := newNames(cfg.domain)
	tc := failover.DefaultTopologyConfig()
	tc.Service, tc.Domain = cfg.service, n.domain
	for _, a := range cfg.appNames {
		tc.AppNames = append(tc.AppNames, failover.AppName{Name: a})
	}
	tc.TTL = cfg.ttl
	tc.PanicThreshold = cfg.panic
	topo, err := failover.NewTopology(tc)
	if err != nil {
		return nil, err
	}
	kr, err := heartbeat.NewKeyring(heartbeat.Key{ID: cfg.keyID, Secret: cfg.secret})
	if err != nil {
		return nil, err
	}
	r := &replica{cfg: cfg, names: n, topo: topo, keyring: kr, view: v, w: w, met: met, log: log, problems: newProblems()}
	r.fenced = &fencedStore{next: v, refused: met.fencedWrite}
	return r, nil
}

// inventoryName is where a cluster publishes the addresses of all its
// gateways (healthy or not), so that every controller has the same
// inventory: <cluster>.<service>-gateways.<domain>.
func (r *replica) inventoryName(cluster string) string {
	return dnsname.Join(cluster, dnsname.Join(r.cfg.service+"-gateways", r.names.domain))
}

func (r *replica) rules() heartbeat.Rules {
	rules := heartbeat.DefaultRules()
	rules.ReconcileInterval = r.cfg.interval
	rules.HealthyDuration = r.cfg.healthy
	rules.SkewTolerance = r.cfg.interval
	return rules
}

// term is one leadership term: the loops that write, with the fencing
// token of the term.
type term struct {
	r      *replica
	token  uint64
	gs     *gatewaySet
	pub    *heartbeat.Publisher
	local  *heartbeat.Reader
	global *heartbeat.Reader
	rec    *record.Reconciler
	reads  *regionview.Reads
	logged map[string]string // gateway → last verdict logged
}

// lead writes as the leader with token until ctx ends (the lease is lost
// or the process stops), and returns once nothing writes any more.
func (r *replica) lead(ctx context.Context, token uint64) error {
	t := &term{r: r, token: token, reads: &regionview.Reads{View: r.view.Mounts, Region: r.view.region}, logged: map[string]string{}}
	t.gs = &gatewaySet{w: r.w, service: r.cfg.service, resolver: r.resolver, byKey: map[string]*gateway{}}
	defer t.gs.close()

	rules := r.rules()
	hb := heartbeat.DefaultConfig()
	hb.Cluster, hb.Region = r.cfg.cluster, r.cfg.region
	hb.LocalZone, hb.GlobalZone = r.names.local, r.names.global
	hb.Local, hb.Global = rules, rules
	hb.TTL = max(time.Second, min(r.cfg.ttl, 5*time.Second))
	hb.RetryBackoff = r.cfg.interval / 4
	hb.BeatVersion = 2
	rc := record.LocalConfig(ownerID)
	if r.cfg.provider == "route53" {
		rc = record.Route53Config(ownerID)
	}
	rc.ResyncInterval = max(time.Second, 4*r.cfg.interval)
	rc.RetryBase = max(10*time.Millisecond, r.cfg.interval/4)
	// Every cluster has its own Lease, so its own token and its own fence
	// record in each zone it writes.
	rc.FenceName = "_gslb-fence-" + r.cfg.cluster
	var err error
	t.rec, err = record.New(r.fenced, rc, record.Options{Observer: record.ObserverFunc(t.recordEvent), Logger: r.log, FenceToken: token})
	if err != nil {
		return err
	}
	// Beats are fenced too, by the same fence and token: a deposed
	// leader's late beat is refused like its late records. The
	// reconciler's FencedStore shares the fence's last written value with
	// the reconciler, so their writes take turns and neither expects a
	// fence value the other has moved on.
	obs := r.met.observer()
	fs := t.rec.FencedStore()
	t.pub, err = heartbeat.NewPublisher(hb, heartbeat.Options{Local: fs, Global: fs, Keyring: r.keyring, Observer: obs, Logger: r.log})
	if err != nil {
		return err
	}
	for _, s := range []heartbeat.Scope{heartbeat.Local, heartbeat.Global} {
		rc := heartbeat.DefaultReaderConfig(s, hb.Zone(s))
		rc.Rules = rules
		rd, err := heartbeat.NewReader(rc, t.reads, heartbeat.ReaderOptions{Keyring: r.keyring, Observer: obs})
		if err != nil {
			return err
		}
		if s == heartbeat.Local {
			t.local = rd
		} else {
			t.global = rd
		}
	}
	r.log.Info("leading", "cluster", r.cfg.cluster, "token", token)
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return t.pub.Run(ctx) })
	g.Go(func() error { return t.rec.Run(ctx) })
	g.Go(func() error {
		// Watch-driven: a reconcile on every change the informers see (and
		// every change a background lookup makes). The interval is the
		// heartbeat's: peers' beats age with time, not with events.
		tk := time.NewTicker(r.cfg.interval)
		defer tk.Stop()
		for {
			t.tick(ctx, time.Now())
			select {
			case <-ctx.Done():
				return nil
			case <-r.w.kick:
			case <-tk.C:
			}
		}
	})
	err = g.Wait()
	r.log.Info("stopped leading", "cluster", r.cfg.cluster, "token", token)
	return err
}

// tick is one reconcile of the leader.
func (t *term) tick(ctx context.Context, now time.Time) {
	r := t.r
	t.reads.Reset()
	if err := t.gs.sync(ctx); err != nil {
		r.log.Warn("reading the caches", "err", err)
		return
	}
	// 1. The gateways' verdicts, and the cluster's for the heartbeat.
	var own []failover.Gateway
	var inventory []netip.Addr
	healthy := 0
	for _, g := range t.gs.sorted() {
		v := g.gate.Evaluate(now)
		addrs, _ := g.external.Addresses(now)
		inventory = append(inventory, addrs...)
		h := failover.Critical
		if v.Healthy {
			h = failover.Passing
			healthy++
		}
		r.met.gateway(g.key, v.Healthy)
		if s := v.String(); t.logged[g.key] != s {
			t.logged[g.key] = s
			r.log.Info("gateway", "gateway", g.key, "verdict", s, "addrs", fmt.Sprint(addrs))
		}
		own = append(own, failover.Gateway{Name: g.key, Addrs: addrs, Health: h})
	}
	beat := healthy > 0
	if th := r.cfg.panic; th > 0 && len(own) > 0 && float64(100*healthy/len(own)) < th {
		beat = false
	}
	t.pub.SetVerdict(heartbeat.Verdict{Healthy: beat, Gateways: min(healthy, heartbeat.MaxGateways), Total: min(len(own), heartbeat.MaxGateways)})

	// 2. The beats, the peers' inventories and the shared sets as published.
	ls, lerr := t.local.Read(ctx, now)
	gs, gerr := t.global.Read(ctx, now)
	globalRecs, grErr := t.reads.GetRecords(ctx, r.names.global)
	localRecs, lrErr := t.reads.GetRecords(ctx, r.names.local)
	snap := failover.Snapshot{}
	if grErr == nil {
		snap.Failover = failover.Published{Read: true, Addrs: addrsAt(globalRecs, r.names.global, r.topo.FailoverName())}
	}
	regions := map[string]bool{}
	for _, k := range r.cfg.clusters {
		if !regions[k.region] {
			regions[k.region] = true
			reg := failover.Region{Name: k.region, Zone: r.names.local}
			if k.region == r.cfg.region && lrErr == nil {
				reg.Regional = failover.Published{Read: true, Addrs: addrsAt(localRecs, r.names.local, r.topo.RegionalName())}
			}
			snap.Regions = append(snap.Regions, reg)
		}
		fc := failover.Cluster{Name: k.name, Region: k.region, Global: freshness(gs, gerr, k.name)}
		if k.region == r.cfg.region {
			fc.Local = freshness(ls, lerr, k.name)
		}
		if fc.Global == failover.Fresh {
			if st, ok := gs.Cluster(k.name); ok {
				if h, n, ok := st.Beat.Summary(); ok {
					fc.Reported = failover.GatewaySummary{Healthy: h, Total: n}
				}
			}
		}
		if k.name == r.cfg.cluster {
			fc.Gateways = own
		} else if grErr == nil {
			// Another cluster's gateways, as its controller published them:
			// one gateway per address (their health is that controller's).
			for _, a := range addrsAt(globalRecs, r.names.global, r.inventoryName(k.name)) {
				fc.Gateways = append(fc.Gateways, failover.Gateway{Name: k.name + "/" + a.String(), Addrs: []netip.Addr{a}})
			}
		}
		snap.Clusters = append(snap.Clusters, fc)
	}

	// 3. The decision; this controller writes its region's share, and its
	// own cluster's inventory.
	dec, err := r.topo.Decide(now, snap)
	if err != nil {
		r.problems.set("policy_error", err.Error())
		r.log.Warn("policy", "err", err)
		return
	}
	r.problems.clear("policy_error")
	r.met.decision(dec)
	want := dec.Desired.WrittenBy(r.cfg.region)
	sortAddrs(inventory)
	inventory = slices.Compact(inventory)
	inv := failover.AddrSets(r.names.global, "", r.inventoryName(r.cfg.cluster), inventory, r.cfg.ttl, failover.WriterScope{})
	want.Sets = append(want.Sets, inv.Sets...)
	want.Withdraws = append(want.Withdraws, inv.Withdraws...)
	if err := t.rec.Set(record.FromSource(want, "", r.cfg.region)); err != nil {
		r.log.Warn("reconciler", "err", err)
	}
	if r.afterTick != nil {
		r.afterTick(dec)
	}
}

// recordEvent keeps the reconciler's failures for /readyz and metrics.
func (t *term) recordEvent(e record.Event) {
	switch ev := e.(type) {
	case record.ErrorEvent:
		t.r.met.recordError(fmt.Sprint(ev.Class()))
		t.r.problems.set("provider_failing", fmt.Sprintf("%s: %v", ev.Class(), ev.Err))
	case record.FencedEvent:
		t.r.problems.set("fenced", "a newer leader holds the zones")
	case record.AppliedEvent:
		t.r.problems.clear("fenced")
		t.r.problems.clear("provider_failing")
	}
}

// freshness turns one scope's read into the policy's view of a cluster:
// only a successful read is evidence.
func freshness(s heartbeat.Snapshot, err error, cluster string) failover.Freshness {
	if err != nil {
		return failover.FreshnessUnknown
	}
	if st, ok := s.Cluster(cluster); ok && st.Fresh {
		return failover.Fresh
	}
	return failover.Stale
}

func sortAddrs(a []netip.Addr) {
	slices.SortFunc(a, func(x, y netip.Addr) int { return x.Compare(y) })
}
