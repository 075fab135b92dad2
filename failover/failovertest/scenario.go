package failovertest

import (
	"cmp"
	"fmt"
	"github.com/gslbkit/gslb/internal/fielderr"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/heartbeat"
	"github.com/gslbkit/gslb/internal/dnsname"
)

// Scenario declares a deployment — regions, clusters (each with one
// controller), gateways with IPv4 and IPv6 addresses — and a timeline of
// faults and expectations, and runs it with Run. Declaration methods
// return the Scenario so calls chain; a mistake (an unknown region, a
// duplicate address, a negative time) is remembered, reported by Err and
// fails Run before anything starts. A Scenario is not safe for concurrent
// use and is run once.
type Scenario struct {
	cfg      Config
	topo     *failover.Topology
	policy   failover.Decider[failover.Snapshot] // nil: topo
	regions  []string
	clusters []clusterDecl
	gateways []gatewayDecl
	steps    []step
	always   []invariant
	until    time.Duration
	ran      bool
	err      error
}

// invariant is a condition checked at every zone change.
type invariant struct {
	what  string
	where string
	check func(w *World) error
}

type clusterDecl struct {
	name, region string
}

type gatewayDecl struct {
	name, cluster string
	addrs         []netip.Addr
}

// New returns an empty scenario running with cfg (its zero fields take
// DefaultConfig's values). An invalid cfg is reported by Err (and fails
// Run). cfg is copied.
func New(cfg Config) *Scenario {
	cfg = cfg.withDefaults()
	s := &Scenario{cfg: cfg}
	s.cfg.Topology.AppNames = slices.Clone(cfg.Topology.AppNames)
	if err := cfg.Validate(); err != nil {
		s.err = err
		return s
	}
	tp, err := failover.NewTopology(cfg.Topology)
	if err != nil {
		s.err = nested("topology", err)
		return s
	}
	s.topo = tp
	return s
}

// Policy makes every controller decide with p instead of the configured
// Topology: each reconcile hands p the controller's Snapshot (built as the
// failover package documents it) and the controller's clock, and
// publishes the part of the Decision's Desired its region writes
// (failover.DesiredState.WrittenBy). The topology's names (AppName, GlobalName, ...) are
// still what the scenario calls them, and what the snapshot's Published
// fields read back; p may publish any names in the scenario's zones (the
// global zone and the regions' private local zone). A nil p is an error.
func (s *Scenario) Policy(p failover.Decider[failover.Snapshot]) *Scenario {
	if p == nil {
		return s.fail("policy: nil")
	}
	s.policy = p
	return s
}

// decider returns the policy the controllers run.
func (s *Scenario) decider() failover.Decider[failover.Snapshot] {
	if s.policy != nil {
		return s.policy
	}
	return s.topo
}

// Err returns the first declaration error, or nil.
func (s *Scenario) Err() error { return s.err }

// Config returns a copy of the scenario's configuration; its bound methods
// (GatewayBound, ControllerBound, ...) give the failover times to assert.
func (s *Scenario) Config() Config { return s.cfg }

// setErr keeps err as the declaration error unless one is kept already.
func (s *Scenario) setErr(err error) {
	if s.err == nil {
		s.err = err
	}
}

func (s *Scenario) fail(format string, args ...any) *Scenario {
	if s.err == nil {
		s.err = fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
	}
	return s
}

// Region declares a region, with its own private copy of the local zone.
// Names are DNS labels, unique.
func (s *Scenario) Region(name string) *Scenario {
	if err := (heartbeat.Naming{}).CheckCluster(name); err != nil {
		s.setErr(fielderr.New(ErrInvalid, "region", name, dnsname.LabelRule+", short enough for a heartbeat record name"))
		return s
	}
	if slices.Contains(s.regions, name) {
		return s.fail("region %q declared twice", name)
	}
	s.regions = append(s.regions, name)
	return s
}

// Cluster declares a cluster of region, run by one controller (a probe
// monitor, a heartbeat publisher, two heartbeat readers and two
// reconcilers). Cluster names are DNS labels, unique across regions.
func (s *Scenario) Cluster(name, region string) *Scenario {
	if err := (heartbeat.Naming{}).CheckCluster(name); err != nil {
		s.setErr(fielderr.New(ErrInvalid, "cluster", name, dnsname.LabelRule+", short enough for a heartbeat record name"))
		return s
	}
	if !slices.Contains(s.regions, region) {
		return s.fail("cluster %q: region %q not declared", name, region)
	}
	if s.cluster(name) >= 0 {
		return s.fail("cluster %q declared twice", name)
	}
	s.clusters = append(s.clusters, clusterDecl{name: name, region: region})
	return s
}

// Gateway declares a gateway of cluster with its addresses (IPv4 and/or
// IPv6, at least one; each address belongs to one gateway). Gateway names
// are unique across the deployment. A gateway starts up.
func (s *Scenario) Gateway(cluster, name string, addrs ...string) *Scenario {
	if s.cluster(cluster) < 0 {
		return s.fail("gateway %q: cluster %q not declared", name, cluster)
	}
	if name == "" || s.gateway(name) >= 0 {
		return s.fail("gateway %q: empty or declared twice", name)
	}
	if len(addrs) == 0 {
		return s.fail("gateway %q: no address", name)
	}
	g := gatewayDecl{name: name, cluster: cluster}
	for _, a := range addrs {
		ip, err := netip.ParseAddr(a)
		if err != nil || ip.Zone() != "" {
			return s.fail("gateway %q: address %q: an IPv4 or IPv6 address without zone", name, a)
		}
		for _, o := range s.gateways {
			if slices.Contains(o.addrs, ip.Unmap()) {
				return s.fail("gateway %q: address %s already belongs to gateway %q", name, ip, o.name)
			}
		}
		g.addrs = append(g.addrs, ip.Unmap())
	}
	s.gateways = append(s.gateways, g)
	return s
}

// Always declares a condition that must hold from time zero to the end of
// the run: check is called after every write to any zone (successful or
// not: a failed batch may have applied in part) and after every step, from
// the goroutine that wrote, and returns an error when the condition does
// not hold. The first violation of each condition fails the test at the
// end of Run, with its virtual time. check must be safe for concurrent
// use and must not block; World's methods are.
func (s *Scenario) Always(what string, check func(w *World) error) *Scenario {
	if check == nil {
		return s.fail("always %q: nil check", what)
	}
	s.always = append(s.always, invariant{what: what, where: caller(), check: check})
	return s
}

// Until makes the run last at least until d after time zero (by default
// it ends at the last step of the timeline).
func (s *Scenario) Until(d time.Duration) *Scenario {
	if d < 0 {
		return s.fail("until %v: not negative", d)
	}
	s.until = max(s.until, d)
	return s
}

func (s *Scenario) cluster(name string) int {
	return slices.IndexFunc(s.clusters, func(c clusterDecl) bool { return c.name == name })
}

func (s *Scenario) gateway(name string) int {
	return slices.IndexFunc(s.gateways, func(g gatewayDecl) bool { return g.name == name })
}

// AppName returns the scenario's first app name (the name users resolve),
// e.g. "httpbin.example.test.", or "" when the topology has none.
func (s *Scenario) AppName() string {
	if s.topo == nil || len(s.cfg.Topology.AppNames) == 0 {
		return ""
	}
	return dnsname.Fqdn(s.cfg.Topology.AppNames[0].Name)
}

// GlobalName returns the global name, e.g.
// "edge-internal.global.example.test." ("" when the config is invalid).
func (s *Scenario) GlobalName() string {
	if s.topo == nil {
		return ""
	}
	return s.topo.GlobalName()
}

// RegionalName returns the regional name every region serves from its own
// private zone, e.g. "edge-internal.local.example.test.".
func (s *Scenario) RegionalName() string {
	if s.topo == nil {
		return ""
	}
	return s.topo.RegionalName()
}

// FailoverName returns the failover name, e.g.
// "global-edge-internal.global.example.test.".
func (s *Scenario) FailoverName() string {
	if s.topo == nil {
		return ""
	}
	return s.topo.FailoverName()
}

// Addrs returns the addresses of the named gateways, in declaration
// order; handy for expectations. Unknown names are skipped.
func (s *Scenario) Addrs(gateways ...string) []string {
	var out []string
	for _, n := range gateways {
		if i := s.gateway(n); i >= 0 {
			for _, a := range s.gateways[i].addrs {
				out = append(out, a.String())
			}
		}
	}
	return out
}

// RegionAddrs returns the addresses of every gateway of region.
func (s *Scenario) RegionAddrs(region string) []string {
	var names []string
	for _, g := range s.gateways {
		if s.clusters[s.cluster(g.cluster)].region == region {
			names = append(names, g.name)
		}
	}
	return s.Addrs(names...)
}

// String describes the declared deployment, its names and its timeline,
// one line each, in time order; it runs nothing.
func (s *Scenario) String() string {
	var b strings.Builder
	if s.err != nil {
		fmt.Fprintf(&b, "invalid: %v\n", s.err)
		return b.String()
	}
	for _, a := range s.cfg.Topology.AppNames {
		fmt.Fprintf(&b, "app %s -> %s\n", dnsname.Fqdn(a.Name), s.GlobalName())
	}
	fmt.Fprintf(&b, "global %s -> %s (or %s)\n", s.GlobalName(), s.RegionalName(), s.FailoverName())
	for _, r := range s.regions {
		fmt.Fprintf(&b, "region %s: private zone %s\n", r, s.cfg.localZone())
		for _, c := range s.clusters {
			if c.region != r {
				continue
			}
			fmt.Fprintf(&b, "  cluster %s\n", c.name)
			for _, g := range s.gateways {
				if g.cluster == c.name {
					fmt.Fprintf(&b, "    gateway %s %v\n", g.name, g.addrs)
				}
			}
		}
	}
	for _, st := range s.sorted() {
		fmt.Fprintf(&b, "at %v: %s\n", st.at, st.what)
	}
	return b.String()
}

// sorted returns the steps by time, declaration order breaking ties.
func (s *Scenario) sorted() []step {
	out := slices.Clone(s.steps)
	slices.SortStableFunc(out, func(a, b step) int { return cmp.Compare(a.at, b.at) })
	return out
}
