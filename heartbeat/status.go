package heartbeat

import (
	"slices"
	"strings"
	"time"
)

// ClusterStatus is a reader's view of one cluster at one instant.
type ClusterStatus struct {
	// Cluster is the cluster's name (lower case, from the record name).
	Cluster string
	// Region is the region from the cluster's beat, or the region of its
	// last valid beat when the current one is missing or rejected; "" when
	// no valid beat was ever seen.
	Region string
	// Fresh is true when the cluster's beat keeps it healthy.
	Fresh bool
	// Reason says why it is not fresh (ReasonNone when fresh).
	Reason Reason
	// Beat is the beat judged (the last valid one when the current record
	// is missing or rejected; zero when none was ever seen).
	Beat Beat
	// Age is the snapshot's time − Beat.Time (negative for a self-heal beat).
	Age time.Duration
	// StaleAt is when Beat stops being fresh.
	StaleAt time.Time
	// SelfHealing is true when the beat is a self-heal beat.
	SelfHealing bool
	// Err is the parse or verification error of a rejected record, or
	// wraps ErrFuture for a beat stamped too far ahead.
	Err error
}

// RegionStatus is a reader's view of one region at one instant.
type RegionStatus struct {
	// Region is the region's name.
	Region string
	// Healthy is true when at least one of its clusters is fresh.
	Healthy bool
	// Fresh and Clusters count its fresh and known clusters.
	Fresh, Clusters int
	// Summarized counts its fresh clusters whose beat carries a gateway
	// summary (a version-2 beat, see Beat.Summary); Gateways and
	// TotalGateways sum those summaries' healthy and total counts. While
	// Summarized < Fresh, some fresh cluster's gateways are unknown (it
	// writes version-1 beats); stale clusters count in none of the three.
	Summarized, Gateways, TotalGateways int
	// FailoverInProgress is true when the region is unhealthy while
	// another region in the snapshot is healthy: its traffic is being
	// served elsewhere.
	FailoverInProgress bool
}

// Snapshot is the result of one read: every known cluster and region,
// sorted by name. It is a value; the reader never changes one it returned.
type Snapshot struct {
	// Scope is the scope read.
	Scope Scope
	// At is the reader's time of the read.
	At time.Time
	// Clusters are sorted by Cluster.
	Clusters []ClusterStatus
	// Regions are sorted by Region; clusters never seen with a valid beat
	// belong to none.
	Regions []RegionStatus
	// Rejected counts records rejected in this read (malformed, badly
	// signed, or stamped too far in the future).
	Rejected int
	// Err is set when the zone could not be read; the statuses then judge
	// the beats last seen.
	Err error
}

// Cluster returns the status of cluster name.
func (s Snapshot) Cluster(name string) (ClusterStatus, bool) {
	i, ok := slices.BinarySearchFunc(s.Clusters, strings.ToLower(name), func(c ClusterStatus, n string) int { return strings.Compare(c.Cluster, n) })
	if !ok {
		return ClusterStatus{}, false
	}
	return s.Clusters[i], true
}

// Region returns the status of region name.
func (s Snapshot) Region(name string) (RegionStatus, bool) {
	i, ok := slices.BinarySearchFunc(s.Regions, name, func(r RegionStatus, n string) int { return strings.Compare(r.Region, n) })
	if !ok {
		return RegionStatus{}, false
	}
	return s.Regions[i], true
}

// Healthy reports whether region name is healthy in s (false when unknown).
func (s Snapshot) Healthy(region string) bool {
	r, ok := s.Region(region)
	return ok && r.Healthy
}

// regions groups clusters into regions and marks failovers. Pure.
func regions(clusters []ClusterStatus) []RegionStatus {
	var out []RegionStatus
	idx := map[string]int{}
	for _, c := range clusters {
		if c.Region == "" {
			continue
		}
		i, ok := idx[c.Region]
		if !ok {
			i = len(out)
			idx[c.Region] = i
			out = append(out, RegionStatus{Region: c.Region})
		}
		out[i].Clusters++
		if c.Fresh {
			out[i].Fresh++
			out[i].Healthy = true
			if h, n, ok := c.Beat.Summary(); ok {
				out[i].Summarized++
				out[i].Gateways += h
				out[i].TotalGateways += n
			}
		}
	}
	anyHealthy := false
	for _, r := range out {
		anyHealthy = anyHealthy || r.Healthy
	}
	for i := range out {
		out[i].FailoverInProgress = !out[i].Healthy && anyHealthy
	}
	slices.SortFunc(out, func(a, b RegionStatus) int { return strings.Compare(a.Region, b.Region) })
	return out
}

// diff returns the events that lead from prev to next, in a stable order:
// clusters, then regions, then failovers. Pure.
func diff(prev, next Snapshot) []Event {
	var evs []Event
	at, sc := next.At, next.Scope
	pc := map[string]ClusterStatus{}
	for _, c := range prev.Clusters {
		pc[c.Cluster] = c
	}
	seen := map[string]bool{}
	for _, c := range next.Clusters {
		seen[c.Cluster] = true
		old, ok := pc[c.Cluster]
		if !ok || old.Fresh != c.Fresh || old.Reason != c.Reason || old.Region != c.Region {
			evs = append(evs, ClusterChanged{At: at, Scope: sc, Status: c})
		}
	}
	for _, c := range prev.Clusters {
		if !seen[c.Cluster] {
			evs = append(evs, ClusterChanged{At: at, Scope: sc, Status: c, Forgotten: true})
		}
	}
	pr := map[string]RegionStatus{}
	for _, r := range prev.Regions {
		pr[r.Region] = r
	}
	rseen := map[string]bool{}
	for _, r := range next.Regions {
		rseen[r.Region] = true
		old, ok := pr[r.Region]
		if !ok || old.Healthy != r.Healthy {
			evs = append(evs, RegionChanged{At: at, Scope: sc, Status: r})
		}
	}
	for _, r := range prev.Regions {
		if !rseen[r.Region] {
			evs = append(evs, RegionChanged{At: at, Scope: sc, Status: RegionStatus{Region: r.Region}, Gone: true})
		}
	}
	for _, r := range next.Regions {
		if old := pr[r.Region]; old.FailoverInProgress != r.FailoverInProgress {
			evs = append(evs, FailoverChanged{At: at, Scope: sc, Region: r.Region, InProgress: r.FailoverInProgress})
		}
	}
	for _, r := range prev.Regions {
		if !rseen[r.Region] && r.FailoverInProgress {
			evs = append(evs, FailoverChanged{At: at, Scope: sc, Region: r.Region, InProgress: false})
		}
	}
	return evs
}
