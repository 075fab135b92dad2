package failover_test

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gslbkit/gslb/failover"
)

// world is a deployment of controllers sharing one global zone and one
// private zone per region, simulated without time: a cluster's beat is
// fresh while its controller is up and one of its gateways is healthy, and
// a reader that cannot read a beat sees it unknown. Each controller
// observes only its own cluster's gateways.
type world struct {
	regions  []string
	clusters []*simCluster
	zone     map[string]string // "view|name|type" -> canonical data
	writes   map[string]int    // changes per key
	// blind[x][y]: controllers of region x cannot read region y's global beats.
	blind map[string]map[string]bool
	// unreadable[x]: region x's controllers cannot read the global zone at all.
	unreadable map[string]bool
	topo       *failover.Topology
}

type simCluster struct {
	name, region string
	up           bool
	gws          []simGateway
}

type simGateway struct {
	addrs   []netip.Addr
	healthy bool
}

func (c *simCluster) alive() bool {
	if !c.up {
		return false
	}
	for _, g := range c.gws {
		if g.healthy {
			return true
		}
	}
	return false
}

// newWorld builds regions × clusters × gateways, every gateway with one
// IPv4 and one IPv6 address, everything healthy.
func newWorld(t tb, regions, clusters, gateways int, mode ...failover.AllUnhealthy) *world {
	w := &world{zone: map[string]string{}, writes: map[string]int{}, blind: map[string]map[string]bool{},
		unreadable: map[string]bool{}}
	w.topo = topo(t, func(c *failover.TopologyConfig) {
		for _, m := range mode {
			c.AllUnhealthy = m
			if m == failover.Fallback {
				c.FallbackTarget = "sorry.example.net"
			}
		}
	})
	for r := 0; r < regions; r++ {
		region := fmt.Sprintf("r%d", r)
		w.regions = append(w.regions, region)
		w.blind[region] = map[string]bool{}
		for c := 0; c < clusters; c++ {
			sc := &simCluster{name: fmt.Sprintf("%s-c%d", region, c), region: region, up: true}
			for g := 0; g < gateways; g++ {
				sc.gws = append(sc.gws, simGateway{healthy: true, addrs: []netip.Addr{
					netip.AddrFrom4([4]byte{10, byte(r), byte(c), byte(g + 1)}),
					netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 14: byte(r), 15: byte(c*16 + g + 1)}),
				}})
			}
			w.clusters = append(w.clusters, sc)
		}
	}
	return w
}

func key(view, name, typ string) string { return view + "|" + name + "|" + typ }

// published reads the addresses at name in view.
func (w *world) published(view, name string) []netip.Addr {
	var out []netip.Addr
	for _, typ := range []string{"A", "AAAA"} {
		for _, f := range strings.Fields(w.zone[key(view, name, typ)]) {
			out = append(out, netip.MustParseAddr(f))
		}
	}
	return out
}

// snapshot is what controller c sees.
func (w *world) snapshot(c *simCluster) failover.Snapshot {
	var s failover.Snapshot
	for _, r := range w.regions {
		reg := failover.Region{Name: r, Zone: "local.example.com"}
		if r == c.region {
			reg.Regional = failover.Published{Read: true, Addrs: w.published(r, regional)}
		}
		s.Regions = append(s.Regions, reg)
	}
	fresh := func(k *simCluster) failover.Freshness {
		if k.alive() {
			return failover.Fresh
		}
		return failover.Stale
	}
	for _, k := range w.clusters {
		sc := failover.Cluster{Name: k.name, Region: k.region, Global: fresh(k)}
		if k.region == c.region {
			sc.Local = fresh(k)
		}
		if w.unreadable[c.region] || w.blind[c.region][k.region] {
			sc.Global = failover.FreshnessUnknown
		}
		for _, g := range k.gws {
			h := failover.HealthUnknown
			if k == c {
				h = failover.Critical
				if g.healthy {
					h = failover.Passing
				}
			}
			sc.Gateways = append(sc.Gateways, failover.Gateway{Addrs: g.addrs, Health: h})
		}
		s.Clusters = append(s.Clusters, sc)
	}
	if !w.unreadable[c.region] {
		s.Failover = failover.Published{Read: true, Addrs: w.published("", fover)}
	}
	return s
}

// apply writes d to the zones, counting changes.
func (w *world) apply(d failover.DesiredState) {
	for _, s := range d.Sets {
		var data []string
		for _, r := range s.Records {
			data = append(data, r.RR().Data)
		}
		k, v := key(s.View, s.Name, s.Type), strings.Join(data, " ")
		if w.zone[k] != v {
			w.zone[k] = v
			w.writes[k]++
		}
	}
	for _, x := range d.Withdraws {
		for k := range w.zone {
			if k == key(x.View, x.Name, x.Type) || x.Type == "" && strings.HasPrefix(k, key(x.View, x.Name, "")) {
				delete(w.zone, k)
				w.writes[k]++
			}
		}
	}
}

// round lets every live controller reconcile once, in the given order
// (nil = inventory order), and returns the number of changes.
func (w *world) round(t tb, order []int) int {
	before := w.total()
	if order == nil {
		order = make([]int, len(w.clusters))
		for i := range order {
			order[i] = i
		}
	}
	for _, i := range order {
		c := w.clusters[i]
		if !c.up {
			continue
		}
		d, err := w.topo.Desired(w.snapshot(c))
		require.NoError(t, err)
		assertWellFormed(t, d)
		w.apply(d.WrittenBy(c.region))
	}
	return w.total() - before
}

func (w *world) total() int {
	n := 0
	for _, v := range w.writes {
		n += v
	}
	return n
}

func (w *world) sharedWrites() int {
	n := 0
	for k, v := range w.writes {
		if strings.HasPrefix(k, "|") {
			n += v
		}
	}
	return n
}

// healthyIn returns the healthy addresses of alive clusters in region
// ("" = every region), sorted.
func (w *world) healthyIn(region string) []netip.Addr {
	var out []netip.Addr
	for _, c := range w.clusters {
		if (region == "" || c.region == region) && c.alive() {
			for _, g := range c.gws {
				if g.healthy {
					out = append(out, g.addrs...)
				}
			}
		}
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return out
}

func sorted(a []netip.Addr) []netip.Addr {
	a = slices.Clone(a)
	slices.SortFunc(a, netip.Addr.Compare)
	return a
}

// checkConverged asserts the zones hold what the deployment's health says,
// for a world where every controller reads everything.
func (w *world) checkConverged(t tb) {
	t.Helper()
	if all := w.healthyIn(""); len(all) > 0 {
		require.Equal(t, all, sorted(w.published("", fover)), "failover record")
	}
	wantGlobal := regional
	for _, r := range w.regions {
		if len(w.healthyIn(r)) == 0 {
			wantGlobal = fover
		}
	}
	require.Equal(t, wantGlobal, w.zone[key("", global, "CNAME")], "global target")
	for _, r := range w.regions {
		if h := w.healthyIn(r); len(h) > 0 {
			require.Equal(t, h, sorted(w.published(r, regional)), "regional record of %s", r)
		}
	}
}

func TestSplitBrainTwoControllersDivergentViews(t *testing.T) {
	w := newWorld(t, 2, 1, 2)
	w.round(t, nil)
	w.checkConverged(t)
	require.Zero(t, w.round(t, nil), "steady state writes")

	// Partition: neither region can read the other's beats, both can write.
	w.blind["r0"]["r1"], w.blind["r1"]["r0"] = true, true
	shared := w.sharedWrites()
	for i := 0; i < 5; i++ {
		require.Zero(t, w.round(t, nil), "round %d of the partition", i)
	}
	// A gateway fails in r0 during the partition: r0's regional record and
	// the failover record lose it once, and nobody puts it back.
	w.clusters[0].gws[0].healthy = false
	require.Positive(t, w.round(t, nil))
	for i := 0; i < 5; i++ {
		require.Zero(t, w.round(t, nil), "round %d after the failure", i)
	}
	assert.Equal(t, w.healthyIn("r0"), sorted(w.published("r0", regional)), "r0 keeps its own healthy gateways")
	assert.Equal(t, w.healthyIn("r1"), sorted(w.published("r1", regional)), "r1 keeps its own healthy gateways")
	assert.Equal(t, shared+2, w.sharedWrites(), "the failover A and AAAA sets changed once each")
	assert.Equal(t, regional, w.zone[key("", global, "CNAME")], "global name never flipped")

	// Heal: one reconcile converges, then nothing moves.
	w.blind["r0"]["r1"], w.blind["r1"]["r0"] = false, false
	w.round(t, nil)
	w.checkConverged(t)
	require.Zero(t, w.round(t, nil))
}

func TestSplitBrainZoneUnreadable(t *testing.T) {
	w := newWorld(t, 2, 1, 2)
	w.round(t, nil)
	w.unreadable["r0"], w.unreadable["r1"] = true, true
	w.clusters[1].gws[1].healthy = false
	w.round(t, nil)
	before := w.sharedWrites()
	for i := 0; i < 3; i++ {
		w.round(t, nil)
	}
	assert.Equal(t, before, w.sharedWrites(), "shared names untouched while unreadable")
	assert.Equal(t, w.healthyIn("r1"), sorted(w.published("r1", regional)))
	w.unreadable["r0"], w.unreadable["r1"] = false, false
	w.round(t, nil)
	w.checkConverged(t)
}

func TestRegionLossAndRecovery(t *testing.T) {
	for _, how := range []string{"gateways", "controllers", "region"} {
		t.Run(how, func(t *testing.T) {
			w := newWorld(t, 3, 2, 2)
			w.round(t, nil)
			w.checkConverged(t)
			for _, c := range w.clusters[:2] { // region r0
				switch how {
				case "gateways":
					for i := range c.gws {
						c.gws[i].healthy = false
					}
				case "controllers":
					c.up = false
				case "region":
					c.up = false
					for i := range c.gws {
						c.gws[i].healthy = false
					}
				}
			}
			w.round(t, nil)
			w.checkConverged(t)
			require.Equal(t, fover, w.zone[key("", global, "CNAME")])
			require.NotEmpty(t, w.published("r0", regional), "r0's regional record is held, not emptied")
			require.Zero(t, w.round(t, nil))
			for _, c := range w.clusters[:2] {
				c.up = true
				for i := range c.gws {
					c.gws[i].healthy = true
				}
			}
			w.round(t, nil)
			w.checkConverged(t)
			require.Equal(t, regional, w.zone[key("", global, "CNAME")])
			require.Zero(t, w.round(t, nil))
		})
	}
}

// TestSplitBrainProperty drives random faults (gateway health, controllers,
// one-way and two-way beat partitions, unreadable zones) through several
// controllers in random order, under every all-unhealthy mode: after any
// change, writes stop within a few rounds and never resume (no
// oscillation), and (keep last) whenever every controller reads
// everything, one round makes the zones match the deployment's health.
func TestSplitBrainProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		mode := genMode.Draw(rt, "mode")
		w := newWorld(rt, rapid.IntRange(2, 4).Draw(rt, "regions"), rapid.IntRange(1, 2).Draw(rt, "clusters"), 2, mode)
		order := func() []int {
			return rapid.Permutation(seq(len(w.clusters))).Draw(rt, "order")
		}
		w.round(rt, order())
		for step := rapid.IntRange(1, 30).Draw(rt, "steps"); step > 0; step-- {
			c := w.clusters[rapid.IntRange(0, len(w.clusters)-1).Draw(rt, "cluster")]
			x, y := rapid.SampledFrom(w.regions).Draw(rt, "x"), rapid.SampledFrom(w.regions).Draw(rt, "y")
			switch rapid.IntRange(0, 4).Draw(rt, "event") {
			case 0:
				g := rapid.IntRange(0, len(c.gws)-1).Draw(rt, "gateway")
				c.gws[g].healthy = !c.gws[g].healthy
			case 1:
				c.up = !c.up
			case 2:
				if x != y {
					w.blind[x][y] = !w.blind[x][y]
				}
			case 3:
				w.unreadable[x] = !w.unreadable[x]
			case 4: // heal everything
				for _, r := range w.regions {
					w.blind[r] = map[string]bool{}
				}
				w.unreadable = map[string]bool{}
			}
			w.round(rt, order())
			if mode == failover.KeepLast && w.allReadable() && w.anyUp() {
				w.checkConverged(rt) // one reconcile after healing is enough
			}
			// Writes stop within a few rounds and never resume: a round may
			// still be needed where the never-empty rule kept a controller
			// from removing its last address until another arrived, or to
			// leave fail open.
			settled := false
			for i := 0; i < 3 && !settled; i++ {
				settled = w.round(rt, order()) == 0
			}
			before := maps.Clone(w.zone)
			if n := w.round(rt, order()); !settled || n != 0 {
				rt.Fatalf("still writing (%d) four rounds after a change: oscillation\nbefore: %v\nafter:  %v", n, before, w.zone)
			}
		}
	})
}

func (w *world) anyUp() bool {
	for _, c := range w.clusters {
		if c.up {
			return true
		}
	}
	return false
}

func (w *world) allReadable() bool {
	if len(w.unreadable) > 0 {
		for _, v := range w.unreadable {
			if v {
				return false
			}
		}
	}
	for _, m := range w.blind {
		for _, v := range m {
			if v {
				return false
			}
		}
	}
	return true
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
