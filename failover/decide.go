package failover

import (
	"cmp"
	"net/netip"
	"slices"
	"time"
)

// HoldReason says why a policy left a name out of its desired state.
type HoldReason uint8

const (
	// HoldNoHealthy: the set has no served address (AllUnhealthy keepLast
	// or fallback); the reconciler keeps the last published set.
	HoldNoHealthy HoldReason = iota + 1
	// HoldUnread: the set carries values decided by other controllers and
	// its published state was not read this round.
	HoldUnread
	// HoldUndecided: the name depends on a cluster or region whose beats
	// this controller cannot read (the global name while no region is known
	// dead, or under fallback while not every region is; an address set
	// under failOpen); the controllers that can see it decide.
	HoldUndecided
)

// String returns "no healthy address", "published state not read" or
// "region state unknown".
func (r HoldReason) String() string {
	switch r {
	case HoldNoHealthy:
		return "no healthy address"
	case HoldUnread:
		return "published state not read"
	case HoldUndecided:
		return "region state unknown"
	}
	return "unknown"
}

// Hold records a name a policy deliberately left out of Desired.
type Hold struct {
	// View and Name locate the name as in DesiredSet.
	View, Name string
	// Reason says why.
	Reason HoldReason
}

// RegionOutcome is one region's state and answer in a Decision: what the
// policy made of the region, not what the heartbeat reader saw (that is
// heartbeat.RegionStatus, which the caller folds into the Snapshot).
type RegionOutcome struct {
	// Name is the region's name.
	Name string
	// State is the region's state from the global-scope beats.
	State RegionState
	// Regional are the addresses of the region's regional record in this
	// Decision (nil when held or withdrawn).
	Regional []netip.Addr
	// Panic reports that the region is below TopologyConfig.PanicThreshold:
	// its regional record holds the other regions' failover addresses.
	Panic bool
}

// Decision is a Decider's full answer for one input: the desired state and
// why it looks that way. Topology fills every field; RecordPolicy and
// users' policies fill Desired and, where they mean something, the others.
type Decision struct {
	// Desired is what the reconcilers should publish and withdraw.
	Desired DesiredState
	// Regions are the regions' states, in snapshot order.
	Regions []RegionOutcome
	// GlobalTarget is the global name's CNAME target in Desired, or "" when
	// this controller holds it (HoldUndecided).
	GlobalTarget string
	// Failover are the failover record's addresses in Desired (nil when held
	// or withdrawn).
	Failover []netip.Addr
	// Held lists the names left out of Desired, and why, sorted by view
	// and name.
	Held []Hold
	// FailingOver reports that some region is known dead: the heartbeat
	// controller's "failover in progress". The global name then points at
	// the failover name or the fallback target (or is held, see Decide).
	FailingOver bool
}

// Desired returns the desired state for s; see Decide.
func (t *Topology) Desired(s Snapshot) (DesiredState, error) {
	d, err := t.Decide(time.Time{}, s)
	return d.Desired, err
}

// Decide computes the desired state of the topology from s:
//
//   - each app name: a CNAME to the global name (written by every controller);
//   - each region R's regional record, in R's private zone: the addresses of
//     R's served gateways in clusters whose local beat is not stale, by the
//     ownership rule of the package documentation (written by R's
//     controllers);
//   - the failover record: the same over every region, using global beats
//     (written by every controller);
//   - the global name: a CNAME to the failover name while some region is
//     dead (every cluster's global beat read stale), else to the regional
//     name; held while no region is dead and some region is unknown; with
//     AllUnhealthy fallback, to the fallback target while every region is
//     dead (a judgement on beats alone, which every reader shares), and
//     held while some region is unknown and every other one dead.
//
// An address set with no served address follows AllUnhealthy; a family (A
// or AAAA) without addresses while the other has some is withdrawn. No set
// in the result is empty. The same Snapshot always gives the same Decision.
// An invalid snapshot gives an error wrapping ErrInvalidSnapshot. The
// topology does not depend on time: now is not read (it is there so that
// Topology is a Decider[Snapshot]).
func (t *Topology) Decide(_ time.Time, s Snapshot) (Decision, error) {
	ix, err := indexSnapshot(&s, t.names.regional)
	if err != nil {
		return Decision{}, err
	}
	var dec Decision
	d := &dec.Desired
	gz := t.names.globalZone
	mode := t.cfg.AllUnhealthy

	every := make([]int, len(ix.clusters))
	for i := range every {
		every[i] = i
	}
	fm := ix.members(every, globalScope, s.Failover, mode == FailOpen)

	anyDead, allDead, anyUnknown := false, true, false
	for _, r := range ix.regions {
		st := ix.regionState(r.Name)
		anyDead = anyDead || st == RegionDead
		allDead = allDead && st == RegionDead
		anyUnknown = anyUnknown || st == RegionUnknown
		rs := RegionOutcome{Name: r.Name, State: st}
		m := ix.members(ix.byRegion[r.Name], localScope, r.Regional, mode == FailOpen)
		if th := t.cfg.PanicThreshold; th > 0 && !m.unread {
			if total := ix.regionAddrs(r.Name); total > 0 && float64(100*len(m.in)/total) < th {
				if others := ix.without(fm.in, r.Name); len(others) > 0 && !fm.unread {
					rs.Panic = true
					m.in = others
				}
			}
		}
		rs.Regional = t.addrSet(&dec, r.Zone, r.Name, t.names.regional, m, RegionWriters(r.Name))
		dec.Regions = append(dec.Regions, rs)
	}

	dec.Failover = t.addrSet(&dec, gz, "", t.names.failover, fm, Everyone)

	switch {
	case allDead && mode == Fallback:
		dec.GlobalTarget = t.fallback
	case anyDead && !(mode == Fallback && anyUnknown):
		dec.GlobalTarget = t.names.failover
	case anyUnknown:
		// Either no region is known dead, or (fallback) the unknown ones
		// might all be dead: the controllers that can see them decide.
		dec.Held = append(dec.Held, Hold{Name: t.names.global, Reason: HoldUndecided})
	default:
		dec.GlobalTarget = t.names.regional
	}
	dec.FailingOver = anyDead
	if dec.GlobalTarget != "" {
		d.Sets = append(d.Sets, cnameSet(gz, "", t.names.global, dec.GlobalTarget, t.ttl, Everyone))
	}
	for _, a := range t.names.apps {
		d.Sets = append(d.Sets, cnameSet(a.Zone, "", a.Name, t.names.global, t.ttl, Everyone))
	}
	d.sort()
	slices.SortFunc(dec.Held, func(a, b Hold) int { return cmp.Or(cmp.Compare(a.View, b.View), cmp.Compare(a.Name, b.Name)) })
	return dec, nil
}

// addrSet adds one address set (regional or failover) to dec following the
// all-unhealthy mode, and returns the addresses published (nil if none).
func (t *Topology) addrSet(dec *Decision, zone, view, name string, m membership, w WriterScope) []netip.Addr {
	mode := t.cfg.AllUnhealthy
	switch {
	case m.unread:
		dec.Held = append(dec.Held, Hold{View: view, Name: name, Reason: HoldUnread})
		return nil
	case mode == FailOpen && m.unknown:
		// A controller that sees every cluster dead would publish the whole
		// inventory; one that cannot see some cluster must not publish a
		// different set over it.
		dec.Held = append(dec.Held, Hold{View: view, Name: name, Reason: HoldUndecided})
		return nil
	}
	in := m.in
	if len(in) == 0 {
		switch mode {
		case FailOpen:
			in = m.all
		case FailClosed:
			dec.Desired.Withdraws = append(dec.Desired.Withdraws, Withdraw{Zone: zone, View: view, Name: name, Writers: w})
			return nil
		}
	}
	if len(in) == 0 {
		dec.Held = append(dec.Held, Hold{View: view, Name: name, Reason: HoldNoHealthy})
		return nil
	}
	addrOut(&dec.Desired, zone, view, name, in, t.ttl, w)
	return in
}
