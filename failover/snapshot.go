package failover

import (
	"fmt"
	"github.com/gslbkit/gslb/internal/fielderr"
	"net/netip"
	"time"

	"github.com/gslbkit/gslb/internal/dnsname"
)

// Snapshot is what one controller knows when it computes the CNAME
// topology: the deployment's inventory (regions, clusters, gateways and
// their addresses, the same for every controller), what it read of each
// cluster's heartbeats, the health of the gateways it observes itself, and
// what it read back of the shared address sets. A Snapshot is plain data;
// policies never modify it.
type Snapshot struct {
	// Regions lists every region of the deployment. Order does not matter.
	Regions []Region
	// Clusters lists every cluster of every region.
	Clusters []Cluster
	// Failover is the failover name's addresses as read back from the
	// global zone this round.
	Failover Published
}

// Region is one region of the deployment.
type Region struct {
	// Name identifies the region, e.g. "eu-west-1". Required, unique.
	Name string
	// Zone is the fully qualified private zone (split horizon) that holds
	// the region's instance of the regional name; it must contain that name.
	Zone string
	// Regional is the regional name's addresses as read back from this
	// region's private zone this round (normally only the region's own
	// controllers can read it).
	Regional Published
}

// Published is what the caller read back of one shared address set.
// The zero value means "not read".
type Published struct {
	// Read reports whether the caller read the name successfully this
	// round. A successful read of an absent name has Read true and no Addrs.
	Read bool
	// Addrs are the A and AAAA addresses found there.
	Addrs []netip.Addr
}

// Cluster is one cluster (one controller's domain) in a region.
type Cluster struct {
	// Name identifies the cluster, e.g. "eu-1". Required, unique.
	Name string
	// Region is the name of the cluster's region; it must be in Regions.
	Region string
	// Local is the freshness of the cluster's beat in its region's private
	// zone (local scope); it decides the regional record. Controllers of
	// other regions usually cannot read it and leave it unknown.
	Local Freshness
	// Global is the freshness of the cluster's beat in the global zone
	// (global scope); it decides the failover record and the global name.
	Global Freshness
	// Gateways are the cluster's gateways.
	Gateways []Gateway
	// Reported is what the cluster's own beat says of its gateways: how
	// many of how many are healthy (heartbeat.Beat.Summary of its global
	// beat, or of its local beat for a controller of the same region). It
	// lets a controller of another region count that cluster's served
	// gateways without observing them. The zero value means unknown: no
	// fresh beat, or a beat without a summary (format version 1).
	Reported GatewaySummary
}

// GatewaySummary is a cluster's own count of its gateways, as its beat
// carries it: never which gateways, only how many. The zero value means
// unknown.
type GatewaySummary struct {
	// Healthy is the number of the cluster's gateways its controller
	// serves, 0–Total.
	Healthy int
	// Total is the number of the cluster's gateways, served or not; 0
	// means the summary is unknown.
	Total int
}

// Known reports whether s carries a count (Total > 0).
func (s GatewaySummary) Known() bool { return s.Total > 0 }

// Gateway is one gateway (load balancer, edge proxy) of a cluster.
type Gateway struct {
	// Name identifies the gateway in messages.
	Name string
	// Addrs are its IPv4 and IPv6 addresses. An address belongs to one
	// gateway of the deployment only.
	Addrs []netip.Addr
	// Health is this controller's observation of the gateway, or
	// HealthUnknown when another controller observes it.
	Health Health
	// RTT is this controller's smoothed round-trip time to the gateway,
	// from its own probes: an exponentially weighted moving average of
	// their latencies, as probe.TargetStats.SmoothedLatency keeps it (each
	// new sample weighs probe.MonitorConfig.LatencySmoothing, 0.2 by
	// default, so a step change is 89 % reached after 10 probes). 0 means
	// not measured (a gateway this controller does not probe, or before its
	// first probe). The built-in policies do not read it; a user's Decider
	// may (prefer the nearest region, spill away from a slow gateway).
	RTT time.Duration
}

// index is a validated snapshot, arranged for the policy.
type index struct {
	regions  []Region
	byRegion map[string][]int // region name -> indexes into clusters
	clusters []Cluster
	owner    map[netip.Addr]int // address -> cluster index
}

// indexSnapshot validates s against the regional name and arranges it.
func indexSnapshot(s *Snapshot, regional string) (*index, error) {
	ix := &index{
		regions:  make([]Region, len(s.Regions)),
		byRegion: make(map[string][]int, len(s.Regions)),
		clusters: s.Clusters,
	}
	if len(s.Regions) == 0 {
		return nil, snapErr("regions", "none", "at least one region")
	}
	for i, r := range s.Regions {
		f := fmt.Sprintf("regions[%d]", i)
		if r.Name == "" {
			return nil, snapErr(f+".name", r.Name, "a non-empty region name")
		}
		if _, dup := ix.byRegion[r.Name]; dup {
			return nil, snapErr(f+".name", r.Name, "a name not used by another region")
		}
		if err := dnsname.Check(r.Zone); err != nil {
			return nil, snapErr(f+".zone", r.Zone, dnsname.NameRule)
		}
		if !dnsname.InZone(regional, r.Zone) {
			return nil, snapErr(f+".zone", r.Zone, "a zone that contains the regional name "+regional)
		}
		ix.byRegion[r.Name] = []int{}
		ix.regions[i] = r
		ix.regions[i].Zone = dnsname.Fqdn(r.Zone)
	}
	seen := make(map[string]bool, len(s.Clusters))
	naddr := 0
	for _, c := range s.Clusters {
		for _, g := range c.Gateways {
			naddr += len(g.Addrs)
		}
	}
	ix.owner = make(map[netip.Addr]int, naddr)
	for i, c := range s.Clusters {
		f := fmt.Sprintf("clusters[%d]", i)
		if c.Name == "" || seen[c.Name] {
			return nil, snapErr(f+".name", c.Name, "a non-empty name not used by another cluster")
		}
		seen[c.Name] = true
		if _, ok := ix.byRegion[c.Region]; !ok {
			return nil, snapErr(f+".region", c.Region, "the name of a region in regions")
		}
		if c.Local > Stale || c.Global > Stale {
			return nil, snapErr(f+".local/global", fmt.Sprint(c.Local, "/", c.Global), fielderr.OneOf("unknown", "fresh", "stale")+" each")
		}
		if r := c.Reported; r.Total < 0 || r.Healthy < 0 || r.Healthy > max(r.Total, 0) {
			return nil, snapErr(f+".reported", fmt.Sprintf("%d/%d", r.Healthy, r.Total), "healthy 0–total, total ≥ 0 (0/0 = unknown)")
		}
		ix.byRegion[c.Region] = append(ix.byRegion[c.Region], i)
		for j, g := range c.Gateways {
			if g.Health > Recovery {
				return nil, snapErr(fmt.Sprintf("%s.gateways[%d].health", f, j), g.Health, healthValues)
			}
			if g.RTT < 0 {
				return nil, snapErr(fmt.Sprintf("%s.gateways[%d].rtt", f, j), g.RTT, "0 (not measured) or more")
			}
			for k, a := range g.Addrs {
				fa := func() string { return fmt.Sprintf("%s.gateways[%d].addrs[%d]", f, j, k) }
				if !a.IsValid() || a.IsUnspecified() {
					return nil, snapErr(fa(), a, "a valid, specified IPv4 or IPv6 address")
				}
				a = a.Unmap().WithZone("")
				if o, dup := ix.owner[a]; dup && o != i {
					return nil, snapErr(fa(), a, "an address not used by another cluster ("+s.Clusters[o].Name+")")
				}
				ix.owner[a] = i
			}
		}
	}
	return ix, nil
}

// RegionState is a region's health as the global-scope beats show it.
type RegionState uint8

const (
	// RegionUnknown: no cluster of the region is known fresh and at least
	// one could not be read. Not evidence of failure.
	RegionUnknown RegionState = iota
	// RegionAlive: at least one cluster's global beat is fresh.
	RegionAlive
	// RegionDead: every cluster's global beat was read stale (or the region
	// has no cluster). Evidence of failure that every reader shares.
	RegionDead
)

// String returns "unknown", "alive" or "dead".
func (r RegionState) String() string {
	switch r {
	case RegionAlive:
		return "alive"
	case RegionDead:
		return "dead"
	}
	return "unknown"
}

// regionState judges a region from its clusters' global beats.
func (ix *index) regionState(name string) RegionState {
	st := RegionDead
	for _, ci := range ix.byRegion[name] {
		switch ix.clusters[ci].Global {
		case Fresh:
			return RegionAlive
		case FreshnessUnknown:
			st = RegionUnknown
		}
	}
	return st
}

// scope selects which beat decides a set.
type scope func(c *Cluster) Freshness

func localScope(c *Cluster) Freshness  { return c.Local }
func globalScope(c *Cluster) Freshness { return c.Global }

// membership is a shared set's computed state.
type membership struct {
	in  []netip.Addr // the addresses the set holds
	all []netip.Addr // every address of the scope (only when asked for)
	// unread: the set depends on a published state that was not read.
	unread bool
	// unknown: some cluster of the scope has an unknown beat.
	unknown bool
}

// members computes a shared set's addresses from the clusters in cis, by
// the ownership rule (see doc.go): a stale cluster's addresses are out; an
// observed gateway's addresses are in exactly when it is served; an
// unobserved gateway's addresses keep their published membership, except
// that a fresh cluster's are added while the set has never been published.
// all is collected only when wantAll.
func (ix *index) members(cis []int, fresh scope, pub Published, wantAll bool) membership {
	var m membership
	var published map[netip.Addr]bool
	if pub.Read {
		published = make(map[netip.Addr]bool, len(pub.Addrs))
		for _, a := range pub.Addrs {
			published[a.Unmap().WithZone("")] = true
		}
	}
	for _, ci := range cis {
		c := &ix.clusters[ci]
		fr := fresh(c)
		m.unknown = m.unknown || fr == FreshnessUnknown
		for _, g := range c.Gateways {
			for _, a := range g.Addrs {
				a = a.Unmap().WithZone("")
				if wantAll {
					m.all = append(m.all, a)
				}
				switch {
				case fr == Stale:
				case g.Health.Known():
					if g.Health.Served() {
						m.in = append(m.in, a)
					}
				case !pub.Read:
					m.unread = true
				case published[a]:
					m.in = append(m.in, a)
				case fr == Fresh && len(published) == 0:
					m.in = append(m.in, a)
				}
			}
		}
	}
	m.in = normAddrs(m.in)
	if wantAll {
		m.all = normAddrs(m.all)
	}
	return m
}

// regionAddrs counts the addresses of region's inventory.
func (ix *index) regionAddrs(region string) int {
	n := 0
	for _, ci := range ix.byRegion[region] {
		for _, g := range ix.clusters[ci].Gateways {
			n += len(g.Addrs)
		}
	}
	return n
}

// without returns the addresses of addrs that belong to no cluster of
// region.
func (ix *index) without(addrs []netip.Addr, region string) []netip.Addr {
	var out []netip.Addr
	for _, a := range addrs {
		if ci, ok := ix.owner[a]; ok && ix.clusters[ci].Region == region {
			continue
		}
		out = append(out, a)
	}
	return out
}
