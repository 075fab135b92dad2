package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/probe"
)

// Restarts and operator intent.
//
// A restart must not change the answer by accident. With Config.StateDir
// set, the controller restores on start what it saved (see state.go):
// drains and API disables, each address's last state, and the last
// published zone, which it serves (same records, same SOA serial, so the
// serial never goes back) until its own probes have spoken. Whatever the
// state file, it publishes nothing new until every address has had its
// first probe result or the startup bound passes (startupBound: two of the
// longest probe intervals plus that check's timeout): a restart never
// publishes "everything passing" before a probe has said so.
//
// A saved address state is trusted for stateTrustAge (three of its check's
// intervals, at least 30 s) after the file was written: a trusted passing
// address starts passing, a trusted critical or recovery one starts
// critical. One whose probes were failing (warning, or a failure since its
// last pass), one whose saved state is older, one the file does not know,
// and any address when there is no file, start critical and their first
// probe result decides at once (see restoredInitial).

// stateTrustAge is how long after a save an address's saved state is
// trusted.
func stateTrustAge(pol probe.Policy) time.Duration {
	return max(3*time.Duration(pol.Interval), 30*time.Second)
}

// startupBound is the longest the controller holds its first publication
// waiting for every address's first result: two of the longest probe
// intervals plus that check's timeout, at least 5 s.
func startupBound(cfg Config) time.Duration {
	var b time.Duration
	for _, r := range cfg.Records {
		pol := r.check.Policy
		b = max(b, 2*time.Duration(pol.Interval)+time.Duration(pol.Timeout))
	}
	// At least 5 s: with short test intervals a loaded host can take longer
	// than two intervals to bring the first results, and publishing before
	// them takes every address not yet probed as critical.
	return max(b, 5*time.Second)
}

// restoredInitial returns the initial state of an address given what the
// state file says of it (ok false: nothing), and whether its first probe
// result decides at once (probe.Policy.FirstPassImmediate). A trusted saved
// state (see stateTrustAge) is kept: passing restarts passing, critical or
// recovery restarts critical, its policy's thresholds applying from there.
// An address whose probes were failing when the file was written (warning,
// or a failure since its last pass: addressMemory.FailingSince) is not
// known to be up: a restart must not forgive the failures its thresholds
// were counting, or restarts closer together than the detection time would
// keep a dead backend answered forever. It starts as one nothing
// trustworthy is known of (no file, a file older than the trust age, an
// address the file lacks): critical, with its first result deciding: one
// success passes it, one failure keeps it critical. Such an address is
// never answered before a probe said it is up, and the zone served
// meanwhile (restored, see restoredDown, or none yet) is the last good
// answer.
func restoredInitial(m addressMemory, ok bool, savedAt, now time.Time, pol probe.Policy, haveFile bool) (probe.State, bool) {
	if !haveFile || !ok || now.Sub(savedAt) > stateTrustAge(pol) {
		return probe.Critical, true
	}
	var s probe.State
	if err := s.UnmarshalText([]byte(m.State)); err != nil {
		return probe.Critical, true
	}
	switch {
	case s == probe.Passing && m.FailingSince.IsZero():
		return probe.Passing, false
	case s.Served():
		return probe.Critical, true
	}
	return probe.Critical, false
}

// restoredIntent says whether the saved disable or enable in of the record
// spec is applied at the start. A disable made without force was allowed
// because the record had a failover name to answer; a config edit that
// removed it since would turn the disable into a withdrawn name (NXDOMAIN),
// which the API refuses without force: such a disable is dropped, with
// the reason why for the log.
func restoredIntent(spec RecordSpec, in recordIntent) (bool, string) {
	if in.Disabled && spec.Failover == "" && !in.Forced {
		return false, "the config no longer gives the record a failover name, and disabled it would answer nothing (a disable without force is refused for such a record): the disable is dropped, its addresses answered again"
	}
	return true, ""
}

// drained reports whether a's drain holds at now (an expired one does not).
func (a *addrState) drainedAt(now time.Time) bool {
	return a.drain != nil && (a.drain.Until.IsZero() || now.Before(a.drain.Until))
}

// servedLocked reports whether a is in the answer's candidate set: its
// probe state is served and it is not drained. c.mu is held.
func (a *addrState) servedLocked(now time.Time) bool {
	return a.state.Served() && !a.drainedAt(now)
}

// healthLocked is what the failover policy sees of a: a drained address is
// critical whatever its probes say (they go on).
func (a *addrState) healthLocked(now time.Time) failover.Health {
	if a.drainedAt(now) {
		return failover.Critical
	}
	return a.health
}

// actionRequest is the optional JSON body of a drain, undrain, disable or
// enable request.
type actionRequest struct {
	// By names the operator (logged and kept with the intent).
	By string `json:"by,omitempty"`
	// Reason is free text kept with the intent.
	Reason string `json:"reason,omitempty"`
	// Force allows a drain that leaves the record no served address, or a
	// disable of a record that has no failover name.
	Force bool `json:"force,omitempty"`
	// Expires ends a drain by itself after this long ("2h"); empty: until
	// undrained.
	Expires Duration `json:"expires,omitempty"`
}

// refusal is a request the controller will not carry out without force.
type refusal struct{ why string }

func (r *refusal) Error() string { return r.why }

// setDrain drains (on) or undrains a. It refuses, unless req.Force, a drain
// that leaves rs without a served address. It returns what happened in
// words for the log and the response.
func (c *controller) setDrain(rs *recState, a *addrState, on bool, req actionRequest, now time.Time) (string, error) {
	if c.holding.Load() {
		return "", errStarting
	}
	c.mu.Lock()
	if on {
		others := 0
		for _, o := range rs.addrs {
			if o != a && o.servedLocked(now) {
				others++
			}
		}
		if others == 0 && !req.Force {
			c.mu.Unlock()
			return "", &refusal{fmt.Sprintf("draining %s would leave %s with no served address (under allUnhealthy %q the answer would %s); repeat with {\"force\": true} to drain it anyway",
				a.ip, rs.spec.Name, c.cfg.Policy.AllUnhealthy.String(), allUnhealthyEffect(c.cfg.Policy.AllUnhealthy, rs.spec.Failover))}
		}
		d := &drainIntent{By: req.By, At: now, Reason: req.Reason, Forced: req.Force && others == 0}
		if req.Expires > 0 {
			d.Until = now.Add(time.Duration(req.Expires))
		}
		a.drain = d
	} else {
		a.drain = nil
	}
	c.mu.Unlock()
	if err := c.mon.SetDisabled(a.id, on); err != nil {
		return "", err
	}
	if err := c.commit(); err != nil {
		return "", err
	}
	if on {
		return "drained: out of every answer until undrained; probing goes on", nil
	}
	return "undrained: served again when its probe state is served", nil
}

// setDisabled disables or enables rs. It refuses, unless req.Force, to
// disable a record that has no failover name (it would answer nothing).
func (c *controller) setDisabled(rs *recState, on bool, req actionRequest, now time.Time) (string, error) {
	if c.holding.Load() {
		return "", errStarting
	}
	if on && rs.spec.Failover == "" && !req.Force {
		return "", &refusal{fmt.Sprintf("%s has no failover name: disabled, it would answer nothing (NODATA); repeat with {\"force\": true} to disable it anyway", rs.spec.Name)}
	}
	c.mu.Lock()
	rs.disabled = on
	rs.intent = &recordIntent{Disabled: on, By: req.By, At: now, Reason: req.Reason, Forced: on && req.Force}
	c.mu.Unlock()
	if err := c.commit(); err != nil {
		return "", err
	}
	if on {
		if rs.spec.Failover != "" {
			return "disabled: answers " + rs.spec.Failover + " until enabled", nil
		}
		return "disabled: answers nothing until enabled", nil
	}
	return "enabled", nil
}

// errStarting refuses an operator action during the startup hold: the zone
// served then is the restored one, and the action would be published only
// once the hold ends; the caller is told to retry.
var errStarting = errors.New("starting: operator actions are taken once the first probe results are in; retry in a few seconds")

// commit publishes an operator's change, reconciles the embedded zone
// (at most 5 s) so that it answers it, and writes the state file, so that a 2xx
// answer means DNS answers it and a kill -9 the instant after keeps it.
// Its error wraps errStateNotSaved when the file could not be written (the
// change holds in this process).
func (c *controller) commit() error {
	c.publish()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_, err := c.local.ReconcileOnce(ctx) // serialised with Run's own reconciles
	cancel()
	if err != nil {
		c.log.Warn("operator action: the embedded zone did not take the change; saved anyway", "err", err)
	}
	return c.saveNow()
}

// allUnhealthyEffect says in words what rs answers when none of its
// addresses is served.
func allUnhealthyEffect(m failover.AllUnhealthy, failoverName string) string {
	if failoverName != "" {
		return "be its failover name " + failoverName
	}
	switch m {
	case failover.FailOpen:
		return "list every address, drained ones too"
	case failover.FailClosed:
		return "be empty"
	case failover.Fallback:
		return "point at the fallback target"
	}
	return "keep its last set, this address included"
}

// expireDrains undrains the addresses whose drain expired by now.
func (c *controller) expireDrains(now time.Time) {
	type exp struct {
		rs *recState
		a  *addrState
	}
	var due []exp
	c.mu.Lock()
	for _, rs := range c.records {
		for _, a := range rs.addrs {
			if a.drain != nil && !a.drain.Until.IsZero() && !now.Before(a.drain.Until) {
				due = append(due, exp{rs, a})
			}
		}
	}
	c.mu.Unlock()
	for _, e := range due {
		if _, err := c.setDrain(e.rs, e.a, false, actionRequest{By: "expiry"}, now); err == nil {
			c.log.Info("drain expired", "record", e.rs.spec.Name, "address", e.a.ip.String())
		}
	}
}

// requestSave asks the save loop to write the state file soon.
func (c *controller) requestSave() {
	if c.saveReq == nil {
		return
	}
	select {
	case c.saveReq <- struct{}{}:
	default:
	}
}

// stateNow captures what the state file holds.
func (c *controller) stateNow(now time.Time) controllerState {
	st := controllerState{SavedAt: now, Zone: c.cfg.Zone, OwnerID: c.cfg.OwnerID,
		Records: map[string]recordIntent{}, Addresses: map[string]addressMemory{}}
	var ids []string
	c.mu.Lock()
	for _, rs := range c.records {
		if rs.intent != nil {
			st.Records[rs.spec.Name] = *rs.intent
		}
		for _, a := range rs.addrs {
			st.Addresses[a.id] = addressMemory{State: a.state.String(), Drain: a.drain, FailingSince: a.failingSince}
			ids = append(ids, a.id)
		}
	}
	c.mu.Unlock()
	for _, id := range ids { // outside c.mu: the monitor has its own lock
		if ts, ok := c.mon.Stats(id); ok {
			m := st.Addresses[id]
			m.Since = ts.Since
			st.Addresses[id] = m
		}
	}
	if !c.holding.Load() || c.restored {
		s := c.zone.Snapshot()
		st.Published = &s
	}
	return st
}

// saveLoop writes the state file when asked, every 10 s, and when ctx
// ends; between saves it checks every second that the state directory is
// still writable (watchStateDir); it also ends expired drains.
func (c *controller) saveLoop(ctx context.Context) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	save := func() { _ = c.saveNow() }
	for {
		select {
		case <-ctx.Done():
			save()
			return nil
		case <-c.saveReq:
			save()
		case now := <-tick.C:
			c.expireDrains(now)
			c.saveMu.Lock()
			last := c.lastSave
			c.saveMu.Unlock()
			if now.Sub(last) >= 10*time.Second {
				save()
			} else {
				c.watchStateDir()
			}
		}
	}
}

// startupHold keeps the first publication back until every address has a
// probe result or startupBound passes, then publishes.
func (c *controller) startupHold(ctx context.Context) error {
	if !c.holding.Load() {
		return nil
	}
	start := time.Now()
	bound := startupBound(c.cfg)
	c.met.startupHeld.Set(1)
	defer c.met.startupHeld.Set(0)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-tick.C:
			waiting := c.firstResultsPending()
			if waiting > 0 && now.Sub(start) < bound {
				continue
			}
			c.holding.Store(false)
			if waiting > 0 {
				c.log.Warn("publishing before every address was probed: startup bound passed", "bound", bound.String(), "unprobed", waiting)
			} else {
				c.log.Info("every address probed: publishing", "after", now.Sub(start).String())
			}
			c.publish()
			c.requestSave()
			return c.awaitAnswering(ctx, tick.C)
		}
	}
}

// firstResultsPending counts the addresses whose first probe result the
// controller has not taken in: none yet in the Monitor, or a change of
// state the Monitor made (probe.TargetStats.Transitions) whose event
// observe has not applied. The Monitor counts a result, then delivers its
// event from another goroutine: published in between, a probed address
// would still be in its initial state (critical without a trusted state
// file), and a healthy record would answer its failover name when DNS
// opens (TestStartupHoldWaitsForObservedResults).
func (c *controller) firstResultsPending() int {
	waiting := 0
	for id, as := range c.byID {
		st, ok := c.mon.Stats(id)
		c.mu.Lock()
		seen := as.observed // read after st: it never runs ahead of it
		c.mu.Unlock()
		if !ok || st.Probes == 0 || st.Transitions != seen {
			waiting++
		}
	}
	return waiting
}

// awaitAnswering opens DNS and replication once the zone holds the first
// publication and openable says it may (the reconciler's AppliedEvent does
// it too; this catches first results that changed no state).
func (c *controller) awaitAnswering(ctx context.Context, tick <-chan time.Time) error {
	for !c.isAnswering() {
		select {
		case <-ctx.Done():
			return nil
		case <-tick:
		}
		if c.published.Load() && !c.local.Pending() && c.openable() {
			c.markAnswering()
		}
	}
	return nil
}
