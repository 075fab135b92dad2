package failovertest

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/internal/errclass"
	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/providertest"
	"github.com/gslbkit/gslb/record"
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

type violation struct {
	at  time.Duration
	err error
}

type throttle struct {
	until      time.Duration
	writesOnly bool
}

// watch follows one ExpectWithin: the first instant the answer matched.
type watch struct {
	label, region, name string
	want                []netip.Addr
	start               time.Duration
	matched, closed     bool
	at                  time.Duration
}

func newWorld(s *Scenario, zero time.Time) (*World, error) {
	w := &World{s: s, zero: zero, locals: map[string]*memory.Provider{}, gwUp: map[string]bool{},
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

// wrote counts a successful write call and re-evaluates the watches (also
// after a failed call, which may have applied part of a batch).
func (w *World) wrote(zone string, recs []libdns.Record, ok bool) {
	names := map[string]bool{}
	for _, r := range recs {
		names[dnsname.Fqdn(libdns.AbsoluteName(r.RR().Name, zone))] = true
	}
	w.mu.Lock()
	for n := range names {
		if ok {
			w.writes[n]++
		}
	}
	var open []*watch
	for _, wt := range w.watches {
		if !wt.matched && !wt.closed {
			open = append(open, wt)
		}
	}
	w.mu.Unlock()
	for _, wt := range open {
		w.evaluate(wt)
	}
	w.checkInvariants()
}

// checkInvariants runs the scenario's Always conditions (from time zero
// on) and keeps the first violation of each.
func (w *World) checkInvariants() {
	now := w.now()
	if now < 0 {
		return
	}
	for i, inv := range w.s.always {
		w.mu.Lock()
		_, seen := w.violations[i]
		w.mu.Unlock()
		if seen {
			continue
		}
		if err := inv.check(w); err != nil {
			w.mu.Lock()
			if _, seen := w.violations[i]; !seen {
				w.violations[i] = violation{at: now, err: err}
			}
			w.mu.Unlock()
		}
	}
}

// reportInvariants fails t with the first violation of each condition.
func (w *World) reportInvariants(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, inv := range w.s.always {
		if v, ok := w.violations[i]; ok {
			t.Errorf("%s: always %s: violated at %v: %v", inv.where, inv.what, v.at, v.err)
		}
	}
}

func (w *World) evaluate(wt *watch) {
	got := w.Resolve(wt.region, wt.name)
	now := w.now()
	w.mu.Lock()
	if !wt.matched && slices.Equal(got, wt.want) {
		wt.matched, wt.at = true, now-wt.start
	}
	w.mu.Unlock()
}

func (w *World) watch(label, region, name string, want []netip.Addr) *watch {
	wt := &watch{label: label, region: region, name: name, want: want, start: w.now()}
	w.mu.Lock()
	w.watches = append(w.watches, wt)
	w.mu.Unlock()
	w.evaluate(wt)
	return wt
}

func (w *World) checkWatch(t *testing.T, where string, wt *watch, bound time.Duration) {
	t.Helper()
	w.mu.Lock()
	wt.closed = true
	matched, at := wt.matched, wt.at
	w.mu.Unlock()
	got := w.Resolve(wt.region, wt.name)
	switch {
	case !matched:
		t.Errorf("%s: %s: never got %v within %v; now %v (chain %v)", where, wt.label, wt.want, bound, got, w.Chain(wt.region, wt.name))
	case !slices.Equal(got, wt.want):
		t.Errorf("%s: %s: got %v after %v but %v at the bound %v (chain %v)", where, wt.label, wt.want, at, got, bound, w.Chain(wt.region, wt.name))
	default:
		t.Logf("%s: %s: answer %v after %v (bound %v)", where, wt.label, wt.want, at, bound)
	}
}

// Measured returns how long the ExpectWithin labelled "<name> in <region>
// from <start>" took to see its answer, and whether it has.
func (w *World) Measured(region, name string, start time.Duration) (time.Duration, bool) {
	label := fmt.Sprintf("%s in %s from %v", name, region, start)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, wt := range w.watches {
		if wt.label == label && wt.matched {
			return wt.at, true
		}
	}
	return 0, false
}

// Resolve returns the addresses (A and AAAA, sorted, IPv4-mapped
// addresses unmapped) a client in region gets for name: the kit's
// resolver asks the zones directly, following CNAMEs across them — the
// region's private zone for names in the local zone, the global zone for
// the others — so no TTL is involved. A name that leads nowhere gives
// nil.
func (w *World) Resolve(region, name string) []netip.Addr {
	addrs, _ := w.lookup(region, name, defaultClient)
	return addrs
}

// ResolveFrom is Resolve for a client at address client, which the zones'
// answer hooks see as the query's source (e.g. failover.Geo installed on
// a zone with World.Zone(...).SetAnswerFunc).
func (w *World) ResolveFrom(region, name string, client netip.Addr) []netip.Addr {
	addrs, _ := w.lookup(region, name, client)
	return addrs
}

// Chain returns the names Resolve visits for name in region, name first,
// each CNAME target after it.
func (w *World) Chain(region, name string) []string {
	_, chain := w.lookup(region, name, defaultClient)
	return chain
}

// defaultClient is the source address of Resolve's queries.
var defaultClient = netip.AddrFrom4([4]byte{10, 0, 0, 1})

// maxHops bounds the CNAME chain the resolver follows.
const maxHops = 16

func (w *World) lookup(region, name string, src netip.Addr) ([]netip.Addr, []string) {
	cur := dnsname.Fqdn(name)
	chain := []string{cur}
	for range maxHops {
		p := w.global
		if dnsname.InZone(cur, w.s.cfg.localZone()) {
			p = w.locals[region]
		} else if !dnsname.InZone(cur, w.s.cfg.globalZone()) {
			return nil, chain
		}
		if p == nil {
			return nil, chain
		}
		var addrs []netip.Addr
		var hops []string // CNAME targets inside this zone, in order
		for i, qt := range []uint16{dns.TypeA, dns.TypeAAAA} {
			m := new(dns.Msg)
			m.SetQuestion(cur, qt)
			resp := p.Respond(m, src, false)
			if resp == nil {
				continue
			}
			at := cur
			for _, rr := range resp.Answer {
				if !dnsname.Equal(rr.Header().Name, at) {
					continue
				}
				switch v := rr.(type) {
				case *dns.CNAME:
					at = dnsname.Fqdn(v.Target)
					if i == 0 {
						hops = append(hops, at)
					}
				case *dns.A:
					if ip, ok := netip.AddrFromSlice(v.A); ok {
						addrs = append(addrs, ip.Unmap())
					}
				case *dns.AAAA:
					if ip, ok := netip.AddrFromSlice(v.AAAA); ok {
						addrs = append(addrs, ip.Unmap())
					}
				}
			}
		}
		chain = append(chain, hops...)
		if len(addrs) > 0 {
			slices.SortFunc(addrs, netip.Addr.Compare)
			return slices.Compact(addrs), chain
		}
		if len(hops) == 0 {
			return nil, chain
		}
		cur = hops[len(hops)-1]
	}
	return nil, chain
}

// store is one controller's access to one zone: the memory provider with
// the scripted faults in front (and Config.Faults behind them), counting
// the writes that land.
type store struct {
	w      *World
	zone   Zone
	region string // the accessing controller's region
	p      record.Provider
}

// newStore returns region's access to zone z.
func (w *World) newStore(region string, z Zone) (*store, error) {
	st := &store{w: w, zone: z, region: region, p: w.Zone(z)}
	if w.s.cfg.faulty() {
		fc := w.s.cfg.Faults
		fc.Seed = w.seed()
		f, err := providertest.NewFaulty(w.Zone(z), fc)
		if err != nil {
			return nil, err
		}
		st.p = f
		w.mu.Lock()
		w.faulties = append(w.faulties, f)
		w.mu.Unlock()
	}
	return st, nil
}

// InjectedFaults returns how many calls Config.Faults has faulted or
// delayed so far, over every controller and zone (restarted controllers'
// included).
func (w *World) InjectedFaults() int {
	w.mu.Lock()
	fs := slices.Clone(w.faulties)
	w.mu.Unlock()
	n := 0
	for _, f := range fs {
		n += len(f.Faults())
	}
	return n
}

func (st *store) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	if err := st.w.fault(st.region, st.zone, false); err != nil {
		return nil, err
	}
	return st.p.GetRecords(ctx, zone)
}

func (st *store) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	if err := st.w.fault(st.region, st.zone, true); err != nil {
		return nil, err
	}
	out, err := st.p.SetRecords(ctx, zone, recs)
	st.w.wrote(zone, recs, err == nil)
	return out, err
}

func (st *store) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	if err := st.w.fault(st.region, st.zone, true); err != nil {
		return nil, err
	}
	out, err := st.p.DeleteRecords(ctx, zone, recs)
	st.w.wrote(zone, recs, err == nil)
	return out, err
}
