package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libdns/libdns"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/probe/probecheck"
	"github.com/gslbkit/gslb/provider"
	"github.com/gslbkit/gslb/provider/cloudflare"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/replication"
	"github.com/gslbkit/gslb/provider/rfc2136"
	"github.com/gslbkit/gslb/provider/route53"
	"github.com/gslbkit/gslb/record"
)

// deps are what a controller takes from outside, so tests can swap probers,
// the provider and the HTTP client for in-memory ones.
type deps struct {
	// prober builds the prober of one address; nil means the check's own.
	prober func(c probecheck.Spec, addr string) (probe.Prober, error)
	// provider replaces the configured external provider; nil: built from
	// the config.
	provider record.ZoneEditor
	// client sends notifies to nodes; nil means http.DefaultClient.
	client *http.Client
}

// controller is gslbd's controller mode: it probes every address, keeps the
// state of every record, and publishes the failover policy's answer into the
// embedded zone (served by DNS and replicated to nodes) and, when
// configured, to an external provider.
type controller struct {
	cfg    Config
	log    *slog.Logger
	met    *metrics
	zone   *memory.Provider
	policy *failover.RecordPolicy
	mon    *probe.Monitor
	local  *record.Reconciler // into the embedded zone
	remote *record.Reconciler // into the provider; nil for embedded only
	// remoteZone is the provider the remote reconciler writes (read by
	// checkDependencies to see whether a taken pool still holds addresses).
	remoteZone record.ZoneEditor
	repl       *replication.Handler // nil without a replication secret
	client     *http.Client
	// notified is the zone version the nodes were last told about.
	notified uint64
	st       *statusTracker // what the status page shows
	// restored: the embedded zone was restored from the state file.
	restored bool
	// holding: the first publication waits for every address's first
	// result (see startupHold).
	holding atomic.Bool
	// published: a desired state was handed to the embedded reconciler;
	// its first AppliedEvent after that opens DNS (markAnswering).
	published atomic.Bool
	// saveReq asks saveLoop to write the state file; nil without StateDir.
	saveReq chan struct{}
	// answers is how each record is answered per query (hooks on zone);
	// fixed. answerDigest is its fingerprint, for nodes.
	answers      map[string]answerOf
	answerDigest answerDigest
	// steer holds the steps' tables: the latency the controller feeds
	// and the load the operator sets (steps.go).
	steer *steering
	// answering is closed once the embedded zone holds answers (see
	// restart.go); DNS and replication wait for it.
	answering     chan struct{}
	answeringOnce sync.Once
	// saveMu serialises writes of the state file; saveErr is the last
	// write's error (nil after a success), since saveErrSince.
	saveMu       sync.Mutex
	saveErrMu    sync.Mutex
	saveErr      error
	saveErrSince time.Time
	lastSave     time.Time
	// refusedErr is the embedded reconciler's refusal of the last desired
	// state (nil: accepted).
	refusedMu  sync.Mutex
	refusedErr error

	// depHold is DefaultDependencyHold (tests shorten it); poolGauge
	// counts records by pool conflict state (external provider only).
	depHold     time.Duration
	poolGauge   *prometheus.GaugeVec
	poolRetries atomic.Int64 // retries of taken pools, for tests
	// silentSecondaries are the secondaries in transfer.notify that have
	// not answered an SOA query since the start (secondaryLoop's alone
	// once Run starts).
	silentSecondaries []string
	// publishMu serialises publish, from reading the addresses' health to
	// handing the desired state to the reconcilers, so that the state
	// handed last is the one read last (see publish).
	publishMu sync.Mutex

	mu   sync.Mutex
	deps map[string]*depState // pool conflicts by record name (depconflict.go)
	// relocGone: records whose relocated pool is withdrawn, until when.
	relocGone map[string]time.Time
	// poolRead is when poolAddresses last read the provider (under mu).
	poolRead time.Time
	records  []*recState
	byName   map[string]*recState  // by record name; fixed after newController
	byID     map[string]*addrState // by target ID; fixed after newController
}

// recState is the live state of one record.
type recState struct {
	spec     RecordSpec
	disabled bool
	// unverified: its answer is its first, unverified one (the configured
	// addresses, none of which has passed a probe since the start; see
	// firstAnswerModel). Under c.mu.
	unverified bool
	intent     *recordIntent // the last disable/enable through the API; nil: none
	addrs      []*addrState
}

// addrState is the live state of one address.
type addrState struct {
	spec   AddressSpec
	rec    string // the record's name
	ip     netip.Addr
	id     string // the monitor's target ID
	state  probe.State
	health failover.Health
	drain  *drainIntent // nil: not drained
	// failingSince is when the address's probes began failing with no
	// pass since (addressMemory.FailingSince), carried over from the state
	// file until a probe passes; zero otherwise. c.mu guards it.
	failingSince time.Time
	// observed counts the Monitor's events of the address that observe
	// has applied (under c.mu): equal to its
	// probe.TargetStats.Transitions once the controller's state caught up
	// with the Monitor's (startupHold).
	observed uint64
}

func targetID(rec string, ip netip.Addr) string { return rec + "/" + ip.String() }

// newController builds a controller from a validated config; it starts
// nothing.
func newController(cfg Config, d deps, met *metrics, log *slog.Logger) (*controller, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &controller{cfg: cfg, log: log, met: met, client: d.client, st: newStatusTracker(), byName: map[string]*recState{}, byID: map[string]*addrState{},
		answering: make(chan struct{}),
		deps:      map[string]*depState{}, relocGone: map[string]time.Time{}, depHold: dependencyHold}
	if c.client == nil {
		c.client = http.DefaultClient
	}
	var err error
	if c.zone, err = memory.New(memory.DefaultConfig()); err != nil {
		return nil, err
	}
	// A fresh zone's serial is the clock's, and every change moves it to
	// max(old + 1, the clock) (memory.SerialUnixTime), so it is past any
	// serial an earlier run served unless that run made bursts of more
	// than a change a second shortly before it stopped: a start also asks
	// the secondaries (see restart.go).
	zc := memory.DefaultZoneConfig()
	zc.Serial = clockSerial(time.Now())
	zc.SerialPolicy = memory.SerialUnixTime
	if zc.Signer, err = newZoneSigner(cfg, cfg.Zone, met, log); err != nil { // dnssec.go
		return nil, err
	}
	if err := c.zone.AddZoneWith(cfg.Zone, zc); err != nil {
		return nil, err
	}
	watchSigner(c.zone, zc.Signer, cfg.Zone, met.ready)
	c.notified = c.zone.Version()
	// Per-query answers choose among the addresses the policy publishes.
	c.steer = newSteering()
	if c.answers, err = installAnswersWith(c.zone, cfg, c.steer); err != nil {
		return nil, err
	}
	c.answerDigest = digestAnswers(cfg)
	if c.policy, err = failover.NewRecordPolicy(cfg.Policy); err != nil {
		return nil, err
	}
	lcfg := record.LocalConfig(cfg.OwnerID)
	lcfg.AllowTypeSwitch = true // one write each (leadCapped.ReplaceRecords): no version without either type
	embeddedOnly := cfg.Provider.Type == "" || cfg.Provider.Type == "embedded"
	// Its writes wait while the serial is maxSerialLead ahead of the
	// clock (serial.go).
	c.local, err = record.New(newLeadCapped(c.zone, cfg.Zone, maxSerialLead, log), lcfg, record.Options{
		Observer: met.reconcilerObserver("embedded", embeddedOnly, c.logReconcile("embedded")),
	})
	if err != nil {
		return nil, err
	}
	if !embeddedOnly {
		if err := c.newRemote(d.provider); err != nil {
			return nil, err
		}
		c.poolGauge = newPoolConflictGauge(met.reg)
		met.ready.add("pool_conflict", c.poolConflictCheck)
	}
	if cfg.Replication.Secret != "" {
		c.repl, err = replication.NewHandler(c.zone, cfg.Replication.auth(), c.regionFilter(), nil)
		if err != nil {
			return nil, err
		}
	}
	if c.mon, err = probe.NewMonitor(cfg.Monitor, monObserver{c}, log); err != nil {
		return nil, err
	}
	c.watchLocalFailures()
	c.met.ready.add("records_refused", c.refusedCheck)
	// What a restart must not forget (see intent.go and restart.go).
	var saved controllerState
	haveState := false
	if cfg.StateDir == "" {
		log.Warn("stateDir is off: a restart forgets drains and disables, and DNS waits for the first probe results at every start")
	} else {
		if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
			return nil, fmt.Errorf("stateDir %s: %w (set stateDir to a writable directory, or stateDir: \"\" to keep no state)", cfg.StateDir, err)
		}
		c.saveReq = make(chan struct{}, 1)
		c.checkStateDir()
		st, ok, err := loadState(cfg.StateDir, cfg.Zone, cfg.OwnerID)
		switch {
		case err != nil:
			log.Warn("state file ignored: starting without it", "dir", cfg.StateDir, "err", err)
		case ok:
			saved, haveState = st, true
		}
	}
	now := time.Now()
	if haveState && saved.Published != nil {
		drained := map[string]map[string]bool{}
		for id, m := range saved.Addresses {
			name, ip, ok := strings.Cut(id, "/")
			if !ok || m.Drain == nil || (!m.Drain.Until.IsZero() && !now.Before(m.Drain.Until)) {
				continue
			}
			rel := relName(name, cfg.Zone)
			if drained[rel] == nil {
				drained[rel] = map[string]bool{}
			}
			drained[rel][ip] = true
		}
		removed := prepareRestored(saved.Published, cfg, drained, restoredDown(cfg, saved, now), now)
		if len(removed) > 0 {
			log.Warn("names the config no longer has removed from the restored zone", "names", removed)
		}
		if err := c.zone.Restore(*saved.Published); err != nil {
			log.Warn("saved zone not restored", "err", err)
		} else {
			c.restored = true
			if missing := c.unanswered(cfg); len(missing) == 0 {
				c.markAnswering()
			} else {
				// Served now, the restored zone would answer NXDOMAIN for
				// names added to the config while gslbd was down: DNS waits
				// for the first publication, as on a start without state.
				log.Info("the restored zone lacks names the config has: DNS waits for the first publication", "names", missing)
			}
		}
	}
	if len(cfg.Transfer.Notify) > 0 {
		c.silentSecondaries = c.serialPastSecondaries(cfg.Transfer.Notify, secondarySOATimeout)
	}
	if haveState {
		log.Info("state restored", "savedAt", saved.SavedAt, "age", now.Sub(saved.SavedAt).Round(time.Millisecond).String(), "zoneRestored", c.restored)
	}
	c.addStartChecks()
	c.holding.Store(true)
	newProber := d.prober
	if newProber == nil {
		newProber = func(ch probecheck.Spec, addr string) (probe.Prober, error) { return ch.NewProber(addr) }
	}
	for _, spec := range cfg.Records {
		rs := &recState{spec: spec, disabled: spec.Disabled}
		if in, ok := saved.Records[spec.Name]; ok {
			if keep, why := restoredIntent(spec, in); keep {
				rs.disabled, rs.intent = in.Disabled, &in
			} else {
				log.Warn("saved disable dropped", "record", spec.Name, "by", in.By, "at", in.At, "why", why)
			}
		}
		for _, a := range spec.Addresses {
			ip, _ := netip.ParseAddr(a.IP)
			ip = ip.Unmap()
			as := &addrState{spec: a, rec: spec.Name, ip: ip, id: targetID(spec.Name, ip)}
			mem, known := saved.Addresses[as.id]
			pol := spec.check.Policy
			pol.InitialState, pol.FirstPassImmediate = restoredInitial(mem, known, saved.SavedAt, now, spec.check.Policy, haveState)
			as.state = pol.InitialState
			if known {
				as.failingSince = mem.FailingSince
			}
			as.health = failover.Health(as.state)
			if known && mem.Drain != nil && (mem.Drain.Until.IsZero() || now.Before(mem.Drain.Until)) {
				as.drain = mem.Drain
			}
			p, err := newProber(spec.check, probeAddr(a, ip))
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", spec.Name, ip, err)
			}
			if err := c.mon.Add(probe.Target{ID: as.id, Prober: c.tracked(as, met.counted(p)), Policy: pol}); err != nil {
				return nil, err
			}
			if as.drain != nil {
				if err := c.mon.SetDisabled(as.id, true); err != nil {
					return nil, err
				}
			}
			met.setState(spec.Name, ip.String(), as.state)
			rs.addrs = append(rs.addrs, as)
			c.byID[as.id] = as
		}
		c.records = append(c.records, rs)
		c.byName[spec.Name] = rs
	}
	return c, nil
}

// newRemote builds the reconciler of the external provider.
func (c *controller) newRemote(p record.ZoneEditor) error {
	pc := c.cfg.Provider
	rcfg := reconcilerPreset(pc.Type, c.cfg.OwnerID)
	if p == nil {
		var err error
		if p, err = buildProvider(pc); err != nil {
			return err
		}
	}
	if pc.ResyncInterval != 0 {
		rcfg.ResyncInterval = pc.ResyncInterval.D()
	}
	c.remoteZone = p
	var err error
	c.remote, err = record.New(p, rcfg, record.Options{
		Observer: c.met.reconcilerObserver(pc.Type, true, c.logReconcile(pc.Type)),
	})
	if err != nil {
		return err
	}
	c.met.ready.add("provider_failing", func(time.Time) (bool, string) {
		pv, ok := c.st.provider(pc.Type)
		if !ok || pv.Health != "failing" {
			return false, ""
		}
		return true, providerDetail(pc.Type, pv)
	})
	return nil
}

// reconcilerPreset is the reconciler config for the provider type.
func reconcilerPreset(typ, owner string) record.Config {
	switch typ {
	case "rfc2136":
		return record.LocalConfig(owner)
	case "route53":
		return record.Route53Config(owner)
	case "cloudflare":
		return record.CloudflareConfig(owner)
	}
	return record.DefaultConfig(owner)
}

// buildProvider builds the external provider of a validated config.
func buildProvider(pc ProviderConfig) (record.ZoneEditor, error) {
	switch pc.Type {
	case "rfc2136":
		return rfc2136.New(pc.RFC2136.FromEnv(nil))
	case "route53":
		return route53.New(pc.Route53.FromEnv(nil))
	case "cloudflare":
		return cloudflare.New(pc.Cloudflare.FromEnv(nil))
	}
	return nil, fmt.Errorf("provider.type %q: no external provider", pc.Type)
}

// checkOnline makes one read-only call to the configured provider (the
// zone's records, which the reconciler reads too): it proves the
// credentials work and the zone is reachable. It returns how many records
// the zone holds.
func checkOnline(ctx context.Context, cfg Config) (int, error) {
	p, err := buildProvider(cfg.Provider)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	recs, err := p.GetRecords(ctx, cfg.Zone)
	if err != nil {
		return 0, fmt.Errorf("provider %s: reading zone %s failed (%s error): %w", cfg.Provider.Type, cfg.Zone, provider.Classify(err), err)
	}
	return len(recs), nil
}

// regionFilter keeps, in a region's snapshot, the addresses tagged with
// that region and every record that is not an address.
func (c *controller) regionFilter() replication.RegionFilter {
	tags := map[string]map[string][]string{} // relative name → ip → regions
	for _, r := range c.cfg.Records {
		rel := r.Name[:len(r.Name)-len(c.cfg.Zone)]
		rel = rel[:max(len(rel)-1, 0)]
		m := map[string][]string{}
		for _, a := range r.Addresses {
			ip, _ := netip.ParseAddr(a.IP)
			m[ip.Unmap().String()] = a.Regions
		}
		tags[rel] = m
	}
	return func(region, zone string, r memory.ZoneRecord) bool {
		if r.Type != "A" && r.Type != "AAAA" {
			return true
		}
		m, ok := tags[r.Name]
		if !ok {
			return true
		}
		for _, t := range m[r.Data] {
			if t == region {
				return true
			}
		}
		return false
	}
}

// Run probes, publishes and notifies until ctx ends, then waits for every
// goroutine it started.
func (c *controller) Run(ctx context.Context) error {
	c.publish()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, 4)
	start := func(name string, f func(context.Context) error) {
		wg.Go(func() {
			if err := f(ctx); err != nil && ctx.Err() == nil {
				errc <- fmt.Errorf("%s: %w", name, err)
				cancel()
			}
		})
	}
	start("monitor", c.mon.Run)
	start("latency steps", c.latencyLoop)
	start("startup hold", c.startupHold)
	if c.saveReq != nil {
		start("state file", c.saveLoop)
	}
	start("embedded reconciler", c.local.Run)
	if c.remote != nil {
		start("provider reconciler", c.remote.Run)
		start("pool conflicts", c.dependencyLoop)
	}
	if len(c.cfg.Replication.Notify) > 0 {
		start("notifier", c.notifyLoop)
	}
	if len(c.silentSecondaries) > 0 {
		start("secondary serials", c.secondaryLoop)
	}
	wg.Wait()
	select {
	case err := <-errc:
		return err
	default:
		return nil
	}
}

// observe receives the monitor's transitions, in order, from one goroutine.
func (c *controller) observe(e probe.Event) {
	c.mu.Lock()
	as := c.byID[e.Target]
	var rs *recState
	if as != nil {
		rs = c.byName[as.rec]
		as.state = e.Transition.To
		as.health = failover.Health(e.Transition.To)
		as.observed++
	}
	c.mu.Unlock()
	if as == nil {
		return
	}
	c.met.transition(e.Transition)
	c.st.transition(rs.spec.Name, as.ip.String(), e.Transition)
	c.met.setState(rs.spec.Name, as.ip.String(), e.Transition.To)
	c.log.Info("address state", "record", rs.spec.Name, "address", as.ip.String(),
		"from", e.Transition.From.String(), "to", e.Transition.To.String(),
		"cause", e.Transition.Cause.String(), "detail", e.Transition.Result.Detail, "served", e.Served)
	c.publish()
	c.requestSave()
}

// publish computes the desired state of every record and hands it to the
// reconcilers (which never block). It runs from several goroutines (the
// Monitor's deliverer, the startup hold's end, operator calls, the pool
// conflict loop), one at a time: a reconciler keeps the desired state it
// was handed last, and one computed before a change but handed over after
// the changed one's would stand until the next change: a backend that died
// as the startup hold ended stayed answered.
func (c *controller) publish() {
	if c.holding.Load() {
		return // startupHold publishes once every address has a result
	}
	c.publishMu.Lock()
	defer c.publishMu.Unlock()
	c.mu.Lock()
	var local, remote record.Desired
	var errs []error
	held := 0
	var answered map[string]bool // names the zone answers, read once if needed
	for _, rs := range c.records {
		m := c.modelLocked(rs)
		fd, err := c.policy.Embedded(m)
		if err == nil && !m.Disabled && heldByPolicy(fd, m.Name) {
			// Nothing to serve and nothing kept: a record that never had
			// an answer gets its configured addresses (restart.go).
			if answered == nil {
				answered = c.answeredNames()
			}
			if !answered[nameKey(m.Name)] {
				m = c.firstAnswerModelLocked(rs, m)
				fd, err = c.policy.Embedded(m)
				rs.unverified = true
			}
		} else if err == nil {
			rs.unverified = false
		}
		if err != nil {
			errs = append(errs, err)
		} else {
			local = merge(local, fd)
			if heldByPolicy(fd, m.Name) {
				held++
			}
		}
		if c.remote != nil {
			if c.inFallbackLocked(rs.spec.Name) {
				m.Disabled = true // its pool is taken: its failover name (depconflict.go)
			}
			pool, keep, gone := c.poolOverrideLocked(rs.spec.Name)
			m.Pool = pool // its pool is taken, no failover name: relocated
			if fd, err := c.policy.Provider(m); err != nil {
				errs = append(errs, err)
			} else {
				remote = merge(remote, fd)
			}
			if keep != "" {
				m.Pool = keep
				if fd, err := c.policy.Provider(m); err == nil {
					remote = merge(remote, poolSets(fd, m.Name))
				}
			}
			if gone != "" { // back in its own pool: the relocated one goes
				for _, typ := range []string{"A", "AAAA"} {
					remote.Withdraw = append(remote.Withdraw, record.Key{Zone: c.cfg.Zone, Name: libdns.RelativeName(gone, c.cfg.Zone), Type: typ})
				}
			}
		}
	}
	c.mu.Unlock()
	c.met.heldStale.Set(float64(held))
	for _, err := range errs {
		c.log.Error("failover policy", "err", err)
	}
	if err := c.local.Set(local); err != nil {
		c.log.Error("embedded desired state refused: the last good answers stay", "err", err)
		c.setRefused(err)
	} else {
		c.setRefused(nil)
		c.published.Store(true)
	}
	if c.remote != nil {
		if err := c.remote.Set(remote); err != nil {
			c.log.Error("provider desired state", "err", err)
		}
	}
}

// modelLocked is the policy's view of rs; c.mu is held.
func (c *controller) modelLocked(rs *recState) failover.Record {
	h := make(map[netip.Addr]failover.Health, len(rs.addrs))
	now := time.Now()
	for _, a := range rs.addrs {
		h[a.ip] = a.healthLocked(now)
	}
	spec := rs.spec
	spec.Disabled = rs.disabled
	return spec.model(c.cfg.Zone, h)
}

// heldByPolicy reports whether the policy left name out of its output (no
// set, no withdraw): the keep-last rule, under which the zone keeps
// answering the last published set.
func heldByPolicy(fd failover.DesiredState, name string) bool {
	for _, typ := range []string{"A", "AAAA", "CNAME"} {
		if _, ok := fd.Lookup("", name, typ); ok || fd.Withdrawn("", name, typ) {
			return false
		}
	}
	return true
}

// merge adds a failover policy's output to the reconciler's input; the two
// packages meet only through libdns types.
func merge(rd record.Desired, fd failover.DesiredState) record.Desired {
	for _, s := range fd.Sets {
		rd.Sets = append(rd.Sets, record.Group(s.Zone, s.Records)...)
	}
	for _, w := range fd.Withdraws {
		rd.Withdraw = append(rd.Withdraw, record.Key{Zone: w.Zone, Name: w.RelativeName(), Type: w.Type})
	}
	return rd
}

// notifyLoop tells every configured node to sync whenever the zone's
// version moves.
func (c *controller) notifyLoop(ctx context.Context) error {
	v := c.notified // the version before Run's first publish
	// Replication answers 503 until the zone holds answers: the first
	// notify goes when it does.
	select {
	case <-c.answering:
		if c.zone.Version() != v {
			v = c.zone.Version()
			c.notifyAll(ctx)
		}
	case <-ctx.Done():
		return nil
	}
	for {
		nv, err := c.zone.Wait(ctx, v)
		if err != nil {
			return nil
		}
		v = nv
		c.notifyAll(ctx)
	}
}

// notifyResult is the outcome of a notify to one node.
type notifyResult struct {
	URL string `json:"url"`
	// OK says the node accepted the notify; Error why not.
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// notifyAll posts a notify to every node and returns each one's result.
func (c *controller) notifyAll(ctx context.Context) []notifyResult {
	out := make([]notifyResult, 0, len(c.cfg.Replication.Notify))
	for _, u := range c.cfg.Replication.Notify {
		nctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := replication.SendNotify(nctx, c.client, u, c.cfg.Replication.auth())
		cancel()
		c.st.notifyResult(u, time.Now().UTC(), err)
		r := notifyResult{URL: u, OK: err == nil}
		if err != nil {
			r.Error = err.Error()
			if ctx.Err() == nil {
				c.log.Warn("notify node", "url", u, "err", err)
			}
		}
		out = append(out, r)
	}
	return out
}

// logReconcile logs a reconciler's notable events.
func (c *controller) logReconcile(target string) func(record.Event) {
	return func(e record.Event) {
		c.st.reconcileEvent(target, e)
		switch e := e.(type) {
		case record.WriteEvent:
			if e.Err != nil {
				c.log.Warn("write", "target", target, "zone", e.Zone, "err", e.Err)
			} else {
				c.log.Debug("write", "target", target, "zone", e.Zone, "records", e.Records)
				if target == "embedded" {
					c.requestSave() // the state file's zone follows what was published
				}
			}
		case record.AppliedEvent:
			if target == "embedded" && c.published.Load() && !c.isAnswering() && c.openable() {
				c.markAnswering() // the zone holds the first publication
			}
		case record.HeldStale:
			c.log.Warn("held stale", "target", target, "rrset", e.Key.String(), "since", e.Since)
		case record.RefusedEvent:
			c.log.Warn("refused", "target", target, "rrset", e.Key.String(), "err", e.Err)
		case record.ErrorEvent:
			c.log.Warn("reconcile error", "target", target, "class", e.Class(), "err", e.Err)
		}
	}
}

// zoneServer is what the DNS server answers from.
func (c *controller) zoneServer() zoneSource {
	return zoneSource{zone: c.zone, met: c.met, answering: c.answering}
}

// providerDetail says how a failing provider fails: class, since when,
// the last error and when it was met.
func providerDetail(name string, pv providerView) string {
	d := fmt.Sprintf("provider %s failing (%s)", name, pv.ErrorClass)
	if pv.FailingSince != nil {
		d += " since " + pv.FailingSince.UTC().Format(time.RFC3339)
	}
	if pv.LastOK != nil {
		d += ", last success " + pv.LastOK.UTC().Format(time.RFC3339)
	} else {
		d += ", no success yet"
	}
	d += "; the embedded zone keeps serving, the provider keeps its last records"
	if pv.LastError != "" {
		d += "; last error"
		if pv.LastErrorAt != nil {
			d += " at " + pv.LastErrorAt.UTC().Format(time.RFC3339)
		}
		d += ": " + pv.LastError
	}
	return d
}

// monObserver hands the Monitor's transitions to observe and logs when it
// becomes degraded (probes failing because of this host: no verdicts).
type monObserver struct{ c *controller }

func (o monObserver) Observe(e probe.Event) { o.c.observe(e) }

func (o monObserver) ObserveDegraded(e probe.DegradedEvent) {
	if e.Local.Degraded {
		o.c.log.Error("prober degraded: probes fail because of this host; no state changes from them",
			"localFailures", e.Local.LocalFailures, "results", e.Local.Results, "lastError", e.Local.LastError)
	} else {
		o.c.log.Info("prober no longer degraded", "total", e.Local.Total)
	}
}

// watchLocalFailures exports the Monitor's local failures (metrics) and
// reports it degraded on /readyz.
func (c *controller) watchLocalFailures() {
	c.met.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "gslbkit_prober_degraded", Help: "1 while probes fail because of this host (out of descriptors, ports, memory...): no verdicts, slower detection.",
		}, func() float64 {
			if c.mon.LocalStats().Degraded {
				return 1
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "gslbkit_probe_local_failure_share", Help: "Share of the probe results of the recent window that failed because of this host.",
		}, func() float64 { return c.mon.LocalStats().Share }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "gslbkit_probe_local_failures_total", Help: "Probes that failed because of this host, not their target (never counted as a verdict).",
		}, func() float64 { return float64(c.mon.LocalStats().Total) }),
	)
	c.met.ready.add("prober_degraded", func(time.Time) (bool, string) {
		ls := c.mon.LocalStats()
		if !ls.Degraded {
			return false, ""
		}
		return true, fmt.Sprintf("prober degraded: %d of %d probe results in the last %v failed because of this host, not the targets (%.0f%%); they change no state, so detection is slower than the policy says; last at %s: %s",
			ls.LocalFailures, ls.Results, ls.Window, 100*ls.Share, ls.LastErrorAt.UTC().Format(time.RFC3339), ls.LastError)
	})
}

// refusedCheck reports the names the last reconcile of the embedded zone
// or of the provider refused to publish: owned by someone else, a refused
// type switch, an empty set with nothing published, or held back because
// a name they need could not be published (the old answer stays).
func (c *controller) refusedCheck(time.Time) (bool, string) {
	var parts []string
	n := 0
	for _, t := range []struct {
		name string
		r    *record.Reconciler
	}{{"embedded", c.local}, {c.cfg.Provider.Type, c.remote}} {
		if t.r == nil {
			continue
		}
		for _, ref := range t.r.Conflicts() {
			n++
			if len(parts) < 5 {
				parts = append(parts, t.name+": "+ref.Key.String()+": "+ref.Err.Error())
			}
		}
	}
	if n == 0 {
		return false, ""
	}
	return true, fmt.Sprintf("%d names not published as desired (the old answer stays): %s", n, strings.Join(parts, "; "))
}
