package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/libdns/libdns"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/record"
)

// One conflict model for names whose answer depends on another name. With
// an external provider a record's name is a CNAME to its pool name, which
// holds the addresses (failover.RecordPolicy.Provider). When the pool
// cannot be written (another owner or records without gslbd's marker took
// it over, a refused type switch), the record keeps its last good answer
// for DependencyHold (the pool's owner may be a colleague's mistake fixed
// in minutes); then, if it has a failover name, it is answered with a
// CNAME to that name, which needs no pool (at once when the pool holds no
// address any more: the name would answer NODATA for the hold), and the pool is tried again
// every DependencyHold (the reconciler holds the CNAME back while the
// pool cannot be written, so a retry never points it into the foreign
// pool); without a failover name the pool moves, at the same moment, to
// a name gslbd owns (relocatedPool: app.example.com's pool
// app.pool.example.com moves to app.pool-gslb.example.com) and the
// record's CNAME follows it, so the name keeps answering its
// addresses; once the original pool name holds nothing (its owner freed
// it) the pool moves back, the relocated one kept for a hold while the
// CNAME moves, then withdrawn (for another hold: the reconciler deletes
// only what it is asked to withdraw).
// Every step is logged, named on /readyz (pool_conflict) and counted in
// gslbkit_records_pool_conflict.

// relocatedSuffix makes the pool label (failover.RecordConfig.PoolLabel,
// "pool" by default) the label under which relocated pools live:
// "pool-gslb". A host name, not an underscore label: BIND refuses A records
// at underscore names (check-names), as do some providers. No configured
// name may lie below it (validatePoolNames), and no default pool name can
// (those lie below the pool label itself).
const relocatedSuffix = "-gslb"

// relocatedParent is the name under which the config's relocated pools
// live: <pool label>-gslb.<zone>.
func relocatedParent(cfg Config) string {
	label := cfg.Policy.PoolLabel
	if label == "" {
		label = failover.DefaultRecordConfig().PoolLabel
	}
	return label + relocatedSuffix + "." + nameKey(cfg.Zone)
}

// relocatedPool is where the pool of the record name moves while its own
// pool is taken over, for a record without a failover name: the record's
// name relative to the zone, under relocatedParent.
func relocatedPool(cfg Config, name string) string {
	return strings.TrimSuffix(nameKey(name), "."+nameKey(cfg.Zone)) + "." + relocatedParent(cfg)
}

// DefaultDependencyHold is how long a record keeps its last good answer
// while its pool cannot be written, before it falls back to its failover
// name.
const DefaultDependencyHold = 2 * time.Minute

// dependencyHold is the hold a controller starts with: DefaultDependencyHold
// (tests of the whole daemon shorten it).
var dependencyHold = DefaultDependencyHold

// depState is one record's pool conflict.
type depState struct {
	pool     string
	why      string
	since    time.Time // the conflict was first seen (zero: none)
	fallback bool      // answered by the failover name
	// relocated: the pool moved to relocatedPool(record); keepRelocated:
	// moving back, the relocated pool is kept until the hold is over.
	relocated, keepRelocated bool
	fellAt                   time.Time // when the fallback (or the last retry) began
	retrying                 time.Time // a retry of the pool began (zero: none)
}

// checkDependencies compares the external reconciler's conflicts with the
// records' pools and moves records into and out of their fallback;
// it publishes when one moved.
func (c *controller) checkDependencies(now time.Time) {
	if c.remote == nil {
		return
	}
	bad := map[string]string{}
	zones := map[string]bool{}
	for _, r := range c.remote.Conflicts() {
		if errors.Is(r.Err, record.ErrDependency) {
			continue // the dependent itself, held back
		}
		bad[strings.ToLower(libdns.AbsoluteName(r.Key.Name, r.Key.Zone))] = r.Err.Error()
		zones[r.Key.Zone] = true
	}
	c.mu.Lock()
	for _, st := range c.deps {
		if st.relocated {
			zones[c.cfg.Zone] = true // to see when the original pool is freed
		}
	}
	c.mu.Unlock()
	addrs, occupied := c.poolAddresses(now, zones)
	changed := false
	c.mu.Lock()
	for name, until := range c.relocGone {
		if !now.Before(until) {
			delete(c.relocGone, name)
		}
	}
	for _, rs := range c.records {
		pool, err := c.policy.PoolName(c.modelLocked(rs))
		if err != nil {
			continue
		}
		st := c.deps[rs.spec.Name]
		why, conflicted := bad[strings.ToLower(pool)]
		switch {
		case conflicted:
			if st == nil {
				st = &depState{pool: pool, since: now}
				c.deps[rs.spec.Name] = st
				c.log.Warn("pool cannot be written: keeping the last answer", "record", rs.spec.Name, "pool", pool, "hold", c.depHold.String(), "err", why)
			}
			st.why, st.retrying = why, time.Time{}
			emptied := addrs != nil && !addrs[strings.ToLower(pool)]
			if !st.relocated && rs.spec.Failover == "" && (emptied || now.Sub(st.since) >= c.depHold) {
				st.relocated, st.keepRelocated, st.fellAt, changed = true, false, now, true
				c.log.Error("pool cannot be written and the record has no failover name: moving the pool to a name gslbd owns", "record", rs.spec.Name, "pool", pool, "to", relocatedPool(c.cfg, rs.spec.Name), "emptied", emptied, "since", st.since)
			}
			if !st.fallback && rs.spec.Failover != "" && (emptied || now.Sub(st.since) >= c.depHold) {
				st.fallback, st.fellAt, changed = true, now, true
				if emptied {
					c.log.Error("pool cannot be written and holds no address (the name would answer NODATA): answering the failover name now", "record", rs.spec.Name, "pool", pool, "failover", rs.spec.Failover, "since", st.since)
				} else {
					c.log.Error("pool still cannot be written: answering the failover name", "record", rs.spec.Name, "pool", pool, "failover", rs.spec.Failover, "since", st.since)
				}
			}
		case st == nil:
		case st.fallback && now.Sub(st.fellAt) >= c.depHold:
			// Try the pool again; the conflict, if it is still there,
			// shows at the next reconcile and the fallback resumes at once.
			st.fallback, st.retrying, changed = false, now, true
			c.poolRetries.Add(1)
			c.log.Info("trying the pool again", "record", rs.spec.Name, "pool", pool)
		case st.fallback:
		case st.relocated && occupied != nil && !occupied[strings.ToLower(pool)] && !occupied[strings.ToLower(record.DefaultMarkerPrefix+"."+pool)]:
			// The original pool name holds nothing any more: move back,
			// keeping the relocated pool while the CNAME moves.
			st.relocated, st.keepRelocated, st.retrying, changed = false, true, now, true
			c.poolRetries.Add(1)
			c.log.Info("original pool freed: moving the pool back", "record", rs.spec.Name, "pool", pool, "from", relocatedPool(c.cfg, rs.spec.Name))
		case st.relocated:
		case !st.retrying.IsZero() && now.Sub(st.retrying) < c.depHold:
			// Judged after a hold without a conflict.
		default:
			if st.keepRelocated {
				// The CNAME is back: withdraw the relocated pool.
				c.relocGone[rs.spec.Name] = now.Add(c.depHold)
				changed = true
				c.log.Info("withdrawing the relocated pool", "record", rs.spec.Name, "pool", relocatedPool(c.cfg, rs.spec.Name))
			}
			delete(c.deps, rs.spec.Name)
			c.log.Info("pool written again: the record answers from it", "record", rs.spec.Name, "pool", pool)
		}
	}
	held, fell, moved := 0, 0, 0
	for _, st := range c.deps {
		switch {
		case st.fallback:
			fell++
		case st.relocated:
			moved++
		default:
			held++
		}
	}
	c.mu.Unlock()
	c.poolGauge.WithLabelValues("held").Set(float64(held))
	c.poolGauge.WithLabelValues("failover").Set(float64(fell))
	c.poolGauge.WithLabelValues("relocated").Set(float64(moved))
	if changed {
		c.publish()
	}
}

// poolReadEvery is how often, while a pool conflict lasts, the provider's
// zone is read to see whether the taken pool still holds addresses.
const poolReadEvery = 5 * time.Second

// poolAddresses reads the provider's zones that hold conflicts or
// relocated pools, at most every poolReadEvery while there are any, and
// returns the names (fully qualified, lower case) that hold an A or AAAA
// record, and those that hold any record; nil when not read now (none to
// read, read lately, or the read failed). A held record whose pool holds
// no address answers NODATA at the provider (its name is a CNAME into the
// pool), so it falls back (or its pool moves) at once instead of after the
// hold; a relocated pool moves back once its name holds nothing.
func (c *controller) poolAddresses(now time.Time, zones map[string]bool) (addrs, occupied map[string]bool) {
	if len(zones) == 0 || c.remoteZone == nil {
		return nil, nil
	}
	c.mu.Lock()
	if !c.poolRead.IsZero() && now.Sub(c.poolRead) < poolReadEvery {
		c.mu.Unlock()
		return nil, nil
	}
	c.poolRead = now
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addrs, occupied = map[string]bool{}, map[string]bool{}
	for zone := range zones {
		recs, err := c.remoteZone.GetRecords(ctx, zone)
		if err != nil {
			return nil, nil
		}
		for _, r := range recs {
			rr := r.RR()
			n := strings.ToLower(libdns.AbsoluteName(rr.Name, zone))
			occupied[n] = true
			if rr.Type == "A" || rr.Type == "AAAA" {
				addrs[n] = true
			}
		}
	}
	return addrs, occupied
}

// poolOverrideLocked is the pool name the provider output of name uses
// ("" for the policy's own); while it moves back, the relocated pool to
// keep publishing beside it, and once it is back the relocated pool to
// withdraw ("" for none); c.mu is held.
func (c *controller) poolOverrideLocked(name string) (pool, keep, gone string) {
	if _, ok := c.relocGone[name]; ok {
		gone = relocatedPool(c.cfg, name)
	}
	st := c.deps[name]
	switch {
	case st == nil:
	case st.relocated:
		pool = relocatedPool(c.cfg, name)
	case st.keepRelocated:
		keep = relocatedPool(c.cfg, name)
	}
	if pool != "" || keep != "" {
		gone = "" // moved again before the withdraw was done
	}
	return pool, keep, gone
}

// poolSets is the part of fd that is not at name: the pool's sets.
func poolSets(fd failover.DesiredState, name string) failover.DesiredState {
	var out failover.DesiredState
	for _, s := range fd.Sets {
		if !dnsname.Equal(s.Name, name) {
			out.Sets = append(out.Sets, s)
		}
	}
	return out
}

// dependencyLoop runs checkDependencies every second (a quarter of the
// hold when that is shorter) until ctx ends.
func (c *controller) dependencyLoop(ctx context.Context) error {
	t := time.NewTicker(min(time.Second, max(c.depHold/4, time.Millisecond)))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			c.checkDependencies(now)
		}
	}
}

// inFallbackLocked reports whether name is answered by its failover name
// because its pool cannot be written; c.mu is held.
func (c *controller) inFallbackLocked(name string) bool {
	st := c.deps[name]
	return st != nil && st.fallback
}

// poolConflictCheck is the /readyz check pool_conflict.
func (c *controller) poolConflictCheck(now time.Time) (bool, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.deps) == 0 {
		return false, ""
	}
	var parts []string
	for _, rs := range c.records {
		st := c.deps[rs.spec.Name]
		if st == nil {
			continue
		}
		s := fmt.Sprintf("%s: its pool %s cannot be written since %s (%s); ", rs.spec.Name, st.pool, st.since.UTC().Format(time.RFC3339), st.why)
		switch {
		case st.fallback:
			s += fmt.Sprintf("answering its failover name %s, trying the pool again every %v", rs.spec.Failover, c.depHold)
		case st.relocated:
			s += fmt.Sprintf("no failover name: its pool moved to %s, which the name's CNAME points to, so it answers its addresses; it moves back once %s holds nothing", relocatedPool(c.cfg, rs.spec.Name), st.pool)
		case st.keepRelocated:
			s += fmt.Sprintf("the pool freed: moving back from %s", relocatedPool(c.cfg, rs.spec.Name))
		case rs.spec.Failover == "":
			s += fmt.Sprintf("no failover name: keeping its last answer until %s, then its pool moves to %s", st.since.Add(c.depHold).UTC().Format(time.RFC3339), relocatedPool(c.cfg, rs.spec.Name))
		default:
			s += fmt.Sprintf("keeping its last answer until %s, then its failover name %s", st.since.Add(c.depHold).UTC().Format(time.RFC3339), rs.spec.Failover)
		}
		parts = append(parts, s)
	}
	return true, strings.Join(parts, "; ")
}

func newPoolConflictGauge(reg *prometheus.Registry) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "gslbkit_records_pool_conflict",
		Help: "Records whose pool name cannot be written at the external provider: state=\"held\" keep their last answer (up to the hold), state=\"failover\" are answered by their failover name, state=\"relocated\" (no failover name) answer their addresses from a pool moved to a name gslbd owns.",
	}, []string{"state"})
	reg.MustRegister(g)
	g.WithLabelValues("held").Set(0)
	g.WithLabelValues("failover").Set(0)
	g.WithLabelValues("relocated").Set(0)
	return g
}
