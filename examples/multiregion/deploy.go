package main

import (
	"crypto/rand"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/health"
	"github.com/gslbkit/gslb/heartbeat"
)

// regionNames name the demo's regions in order.
var regionNames = [maxRegions]string{"eu-west", "us-east", "ap-south", "sa-east", "af-south", "me-central", "ca-central", "eu-north"}

// gateway is one simulated edge gateway. Its signals are the two the
// heartbeat controller checks by default: the readiness of its service's
// endpoints (fed as an EndpointSlice, which the script flips) and the
// service's external address (a fixed load-balancer IP).
type gateway struct {
	name      string
	addr      netip.Addr
	endpoints *health.EndpointReadiness
	external  *health.ExternalAddress
	up        atomic.Bool // what the script set, for its expectations
}

// setReady feeds the gateway's EndpointSlice: one pod, ready or not.
func (g *gateway) setReady(ready bool) {
	g.up.Store(ready)
	pod := netip.AddrFrom4([4]byte{172, 16, g.addr.As4()[2], g.addr.As4()[3]})
	g.endpoints.Set(health.EndpointSlice{Name: g.name, Endpoints: []health.Endpoint{
		{Addresses: []string{pod.String()}, Conditions: health.EndpointConditions{Ready: &ready}},
	}})
}

// cluster is one cluster of a region: one controller and its gateways.
type cluster struct {
	name     string
	region   string
	gateways []*gateway
}

// region is one region and its clusters.
type region struct {
	name     string
	clusters []*cluster
}

// deployment is the inventory every controller shares, the zones and
// the topology policy.
type deployment struct {
	opts    options
	names   names
	regions []*region
	views   map[string]*view // by region
	topo    *failover.Topology
	keyring *heartbeat.Keyring
	// settled is set once the deployment first converged: controllers
	// print what they notice only from then on.
	settled atomic.Bool
	// afterStep and metricsURL are the tests' window into a run.
	afterStep  afterStepFunc
	metricsURL string
	dnsAddrs   map[string]string // region → the address serving its view
	servers    []*regionServer
	ctrls      []*controller
}

func newDeployment(opts options) (*deployment, error) {
	d := &deployment{opts: opts, names: newNames(opts.zone)}
	var regionList []string
	for r := 0; r < opts.regions; r++ {
		reg := &region{name: regionNames[r]}
		regionList = append(regionList, reg.name)
		for c := 0; c < opts.clusters; c++ {
			cl := &cluster{name: fmt.Sprintf("%s-%d", reg.name, c+1), region: reg.name}
			for g := 0; g < opts.gateways; g++ {
				gw := &gateway{
					name:      fmt.Sprintf("%s-gw%d", cl.name, g+1),
					addr:      netip.AddrFrom4([4]byte{10, byte(r + 1), byte(c + 1), byte(g + 1)}),
					endpoints: new(health.EndpointReadiness),
				}
				ext, err := health.NewExternalAddress(health.DefaultAddressConfig(), nil)
				if err != nil {
					return nil, err
				}
				ext.SetStatus([]netip.Addr{gw.addr}, "")
				gw.external = ext
				gw.setReady(true)
				cl.gateways = append(cl.gateways, gw)
			}
			reg.clusters = append(reg.clusters, cl)
		}
		d.regions = append(d.regions, reg)
	}

	tc := failover.DefaultTopologyConfig()
	tc.Service, tc.Domain = "edge", d.names.domain
	tc.AppNames = []failover.AppName{{Name: d.names.app}}
	tc.TTL = opts.ttl
	tc.PanicThreshold = opts.panic
	topo, err := failover.NewTopology(tc)
	if err != nil {
		return nil, err
	}
	d.topo = topo

	// Every controller signs its beats with the deployment's key and
	// rejects unsigned or forged ones. The key is made up per run.
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	d.keyring, err = heartbeat.NewKeyring(heartbeat.Key{ID: "demo", Secret: secret})
	if err != nil {
		return nil, err
	}

	d.views, err = buildViews(opts, d.names, regionList)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// clusters lists every cluster of every region, in order.
func (d *deployment) clusters() []*cluster {
	var out []*cluster
	for _, r := range d.regions {
		out = append(out, r.clusters...)
	}
	return out
}

// upAddrs are the addresses of region's gateways the script has up.
func (r *region) upAddrs() []netip.Addr {
	var out []netip.Addr
	for _, c := range r.clusters {
		for _, g := range c.gateways {
			if g.up.Load() {
				out = append(out, g.addr)
			}
		}
	}
	return out
}

// expected is what the script expects every region to resolve once the
// system has converged on the gateways it set up or down: each region its
// own gateways through the regional name while every region has one up;
// otherwise everyone the failover name, with the gateways still up.
func (d *deployment) expected() map[string]resolution {
	dead := false
	var all []netip.Addr
	for _, r := range d.regions {
		up := r.upAddrs()
		dead = dead || len(up) == 0
		all = append(all, up...)
	}
	sortAddrs(all)
	out := map[string]resolution{}
	for _, r := range d.regions {
		if dead {
			out[r.name] = resolution{chain: []string{d.topo.GlobalName(), d.topo.FailoverName()}, addrs: all}
			continue
		}
		up := r.upAddrs()
		sortAddrs(up)
		out[r.name] = resolution{chain: []string{d.topo.GlobalName(), d.topo.RegionalName()}, addrs: up}
	}
	return out
}

func sortAddrs(a []netip.Addr) {
	slices.SortFunc(a, func(x, y netip.Addr) int { return x.Compare(y) })
}

func joinAddrs(as []netip.Addr) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = a.String()
	}
	return strings.Join(s, " ")
}

// same reports whether two resolutions follow the same chain to the same
// addresses.
func same(a, b resolution) bool {
	return a.err == nil && b.err == nil && slices.Equal(a.chain, b.chain) && slices.Equal(a.addrs, b.addrs)
}
