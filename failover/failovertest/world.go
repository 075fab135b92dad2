package failovertest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/internal/errclass"
	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/providertest"
)

// ErrFault is wrapped by every error the kit injects (throttling, an
// unreadable zone).
var ErrFault = errors.New("failovertest: injected fault")

// World is a running scenario: the zones, the controllers and the scripted
// state of gateways, faults and clocks. Steps added with Moment.Do get it;
// its methods are safe for concurrent use.
type World struct {
	s      *Scenario
	zero   time.Time // time zero of the timeline (after the warm-up)
	global *memory.Provider
	locals map[string]*memory.Provider

	mu         sync.Mutex
	gwUp       map[string]bool
	rtt        map[string]time.Duration // scripted round trips (GatewaySlow)
	throttled  map[Zone]throttle
	unreadable map[[2]string]bool // {reader region, zone}
	parted     map[[2]string]bool // {region, region}, both orders
	skew       map[string]time.Duration
	writes     map[string]int
	states     map[string][]probe.State // each gateway's probe states, in order
	watches    []*watch
	ctrls      map[string]*controller
	seeds      uint64
	faulties   []*providertest.Faulty
	violations map[int]violation // first violation per invariant
}

type throttle struct {
	until      time.Duration
	writesOnly bool
}

func newWorld(s *Scenario, zero time.Time) (*World, error) {
	w := &World{s: s, zero: zero, locals: map[string]*memory.Provider{}, gwUp: map[string]bool{}, rtt: map[string]time.Duration{},
		throttled: map[Zone]throttle{}, unreadable: map[[2]string]bool{}, parted: map[[2]string]bool{},
		skew: map[string]time.Duration{}, writes: map[string]int{}, states: map[string][]probe.State{}, ctrls: map[string]*controller{}, seeds: s.cfg.Seed,
		violations: map[int]violation{}}
	p, err := memory.New(memory.DefaultConfig())
	if err != nil {
		return nil, err
	}
	if err := p.AddZone(s.cfg.globalZone()); err != nil {
		return nil, err
	}
	w.global = p
	for _, r := range s.regions {
		p, err := memory.New(memory.DefaultConfig())
		if err != nil {
			return nil, err
		}
		if err := p.AddZone(s.cfg.localZone()); err != nil {
			return nil, err
		}
		w.locals[r] = p
	}
	for _, g := range s.gateways {
		w.gwUp[g.name] = true
	}
	return w, nil
}

// Now returns the virtual time since time zero (negative during the
// warm-up).
func (w *World) Now() time.Duration { return w.now() }

func (w *World) now() time.Duration { return time.Since(w.zero) }

// Writes returns how many successful provider write calls (sets and
// deletes, by any controller, in any copy of the zone) have touched name
// since the start, warm-up included. Take the difference of two readings
// to count the writes of a period.
func (w *World) Writes(name string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writes[dnsname.Fqdn(name)]
}

// States returns the states gateway's probe machine has moved to since
// the start, in order (a restarted controller's new machine starts in the
// policy's initial state, which is not listed).
func (w *World) States(gateway string) []probe.State {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.states[gateway])
}

func (w *World) moved(gateway string, to probe.State) {
	w.mu.Lock()
	w.states[gateway] = append(w.states[gateway], to)
	w.mu.Unlock()
}

// Decision returns the last decision of cluster's controller and whether
// it has made one (false while it is down or before its first reconcile).
func (w *World) Decision(cluster string) (failover.Decision, bool) {
	w.mu.Lock()
	c := w.ctrls[cluster]
	w.mu.Unlock()
	if c == nil {
		return failover.Decision{}, false
	}
	return c.lastDecision()
}

// Zone returns the provider holding zone, for tests that read or change it
// directly (writes made this way are not counted by Writes).
func (w *World) Zone(z Zone) *memory.Provider {
	if z.region == "" {
		return w.global
	}
	return w.locals[z.region]
}

func (w *World) setGateway(name string, up bool) {
	w.mu.Lock()
	w.gwUp[name] = up
	w.mu.Unlock()
}

func (w *World) gatewayUp(name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.gwUp[name]
}

func (w *World) setRTT(name string, rtt time.Duration) {
	w.mu.Lock()
	w.rtt[name] = rtt
	w.mu.Unlock()
}

func (w *World) gatewayRTT(name string) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rtt[name]
}

// ProbeStats returns the statistics of gateway's probes, as the probe
// monitor of the controller of its cluster keeps them (counts, last and
// smoothed latency, percentiles: probe.TargetStats), and false while that
// controller is down or gateway is not declared. Its SmoothedLatency is
// the RTT the controller puts in its Snapshot (failover.Gateway.RTT).
func (w *World) ProbeStats(gateway string) (probe.TargetStats, bool) {
	i := w.s.gateway(gateway)
	if i < 0 {
		return probe.TargetStats{}, false
	}
	w.mu.Lock()
	c := w.ctrls[w.s.gateways[i].cluster]
	w.mu.Unlock()
	if c == nil {
		return probe.TargetStats{}, false
	}
	return c.mon.Stats(gateway)
}

func (w *World) throttle(z Zone, until time.Duration, writesOnly bool) {
	w.mu.Lock()
	w.throttled[z] = throttle{until: until, writesOnly: writesOnly}
	w.mu.Unlock()
}

func (w *World) partition(a, b string, on bool) {
	w.mu.Lock()
	w.parted[[2]string{a, b}], w.parted[[2]string{b, a}] = on, on
	w.mu.Unlock()
}

func (w *World) partitioned(a, b string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.parted[[2]string{a, b}]
}

func (w *World) setUnreadable(region string, z Zone, on bool) {
	w.mu.Lock()
	w.unreadable[[2]string{region, z.String()}] = on
	w.mu.Unlock()
}

func (w *World) setSkew(cluster string, d time.Duration) {
	w.mu.Lock()
	w.skew[cluster] = d
	w.mu.Unlock()
}

// clock returns cluster's clock: true virtual time plus its skew.
func (w *World) clock(cluster string) func() time.Time {
	return func() time.Time {
		w.mu.Lock()
		d := w.skew[cluster]
		w.mu.Unlock()
		return time.Now().Add(d)
	}
}

// seed hands out distinct seeds derived from the config's.
func (w *World) seed() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seeds++
	return w.seeds
}

// fault returns the error injected into a call by region's controller to
// zone, or nil.
func (w *World) fault(region string, z Zone, write bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if th, ok := w.throttled[z]; ok && w.now() < th.until && (write || !th.writesOnly) {
		return errclass.Mark(fmt.Errorf("%w: %s throttled", ErrFault, z), errclass.Throttled)
	}
	if !write && w.unreadable[[2]string{region, z.String()}] {
		return errclass.Mark(fmt.Errorf("%w: %s unreadable by %s", ErrFault, z, region), errclass.Transient)
	}
	return nil
}
