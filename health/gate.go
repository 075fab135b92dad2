package health

import (
	"fmt"
	"github.com/gslbkit/gslb/internal/fielderr"
	"strings"
	"time"

	"github.com/gslbkit/gslb/probe"
)

// Signal is one check's answer at one evaluation.
type Signal struct {
	// Healthy is true when the check passes.
	Healthy bool
	// Reason says why it fails (or, optionally, why it passes).
	Reason string
}

// Pass and Fail build signals.
func Pass() Signal { return Signal{Healthy: true} }

// Fail returns a failing signal with a reason.
func Fail(format string, args ...any) Signal {
	return Signal{Reason: fmt.Sprintf(format, args...)}
}

// Check answers whether one signal of a gateway is healthy now.
//
// Check must not block or do I/O: the signals in this package read state
// that the caller (or a background loop) feeds them. It must be safe for
// concurrent use with the methods that feed it.
type Check interface {
	Check(now time.Time) Signal
}

// CheckFunc adapts a function to Check.
type CheckFunc func(now time.Time) Signal

// Check calls f(now).
func (f CheckFunc) Check(now time.Time) Signal { return f(now) }

// GateCheck is one check enabled (or not) for a gateway.
type GateCheck struct {
	// Name identifies the check in verdicts ("endpoints", "address",
	// "proxySync"). Required and unique within a gate.
	Name string
	// Check is the signal. Required.
	Check Check
	// RecoveryThreshold is the number of consecutive passing evaluations a
	// check needs to count as passing again after it failed; 0 and 1 mean
	// at once. The proxy-sync check of the heartbeat controller uses 3.
	// A check's first result applies at once (a restart does not hold
	// healthy gateways back). At most probe.MaxThreshold.
	RecoveryThreshold int
	// Disabled leaves the check out of the verdict (it is not evaluated).
	Disabled bool
}

// Failure names one check that keeps the gate unhealthy, and why.
type Failure struct {
	// Check is the check's name.
	Check string
	// Reason is the check's reason, or, while it recovers, the count.
	Reason string
	// Recovering is true when the check passes now but has not yet passed
	// RecoveryThreshold times in a row.
	Recovering bool
}

// Verdict is a gate's answer at one evaluation.
type Verdict struct {
	// Healthy is true when every enabled check passes.
	Healthy bool
	// Failing lists the checks that keep it unhealthy, in the gate's order.
	Failing []Failure
	// Changed is true when Healthy differs from the previous evaluation
	// (always true at the first).
	Changed bool
	// At is the evaluation's now.
	At time.Time
}

// String formats the verdict: "healthy" or "unhealthy: a (why); b (why)".
func (v Verdict) String() string {
	if v.Healthy {
		return "healthy"
	}
	parts := make([]string, len(v.Failing))
	for i, f := range v.Failing {
		parts[i] = fmt.Sprintf("%s (%s)", f.Check, f.Reason)
	}
	return "unhealthy: " + strings.Join(parts, "; ")
}

type gateCheck struct {
	GateCheck
	m *probe.Machine
}

// Gate combines the checks enabled for one gateway into one verdict: all
// must pass; any single failure makes the verdict unhealthy at once, with no
// grace period; a check with a RecoveryThreshold counts as passing again
// only after that many consecutive passing evaluations (a probe.Machine per
// check keeps the count, with the proxy-sync preset's rules).
//
// Gate is a pure value: Evaluate takes the time and reads the checks; it
// starts nothing and is not safe for concurrent use.
type Gate struct {
	checks    []gateCheck
	last      bool
	evaluated bool
}

// NewGate returns a gate over checks (copied).
func NewGate(checks ...GateCheck) (*Gate, error) {
	g := &Gate{}
	seen := map[string]bool{}
	for i, c := range checks {
		if c.Name == "" {
			return nil, fieldErr(fielderr.Index("checks", i)+".name", "", "a non-empty name, unique in the gate")
		}
		if seen[c.Name] {
			return nil, fieldErr(fielderr.Index("checks", i)+".name", c.Name, "a name not used by another check")
		}
		seen[c.Name] = true
		if c.Check == nil {
			return nil, &FieldError{Path: fielderr.Index("checks", i) + ".check", Value: "nil", Allowed: "a non-nil Check", Err: ErrInvalidConfig}
		}
		if c.RecoveryThreshold < 0 || c.RecoveryThreshold > probe.MaxThreshold {
			return nil, fieldErr(fielderr.Index("checks", i)+".recoveryThreshold", c.RecoveryThreshold, fielderr.Range(0, probe.MaxThreshold))
		}
		pol := probe.ProxySync()
		n := max(c.RecoveryThreshold, 1)
		pol.PassingThreshold = n
		pol.WarningExitThreshold = n
		m, err := probe.NewMachine(pol)
		if err != nil {
			return nil, err
		}
		g.checks = append(g.checks, gateCheck{GateCheck: c, m: m})
	}
	return g, nil
}

// Evaluate reads every enabled check at now and returns the verdict. Each
// call counts once toward recovery thresholds (call it once per reconcile).
// A gate with no enabled check is healthy.
func (g *Gate) Evaluate(now time.Time) Verdict {
	v := Verdict{Healthy: true, At: now}
	for i := range g.checks {
		c := &g.checks[i]
		if c.Disabled {
			continue
		}
		s := c.Check.Check(now)
		r := probe.Result{Status: probe.Pass}
		if !s.Healthy {
			r = probe.Result{Status: probe.FailNow, Kind: probe.KindStatus, Detail: s.Reason}
		}
		c.m.Observe(now, r)
		if c.m.Served() {
			continue
		}
		v.Healthy = false
		f := Failure{Check: c.Name, Reason: s.Reason}
		if s.Healthy {
			f.Recovering = true
			f.Reason = fmt.Sprintf("passing, recovering: needs %d consecutive passes", max(c.RecoveryThreshold, 1))
		} else if f.Reason == "" {
			f.Reason = "failing"
		}
		v.Failing = append(v.Failing, f)
	}
	v.Changed = !g.evaluated || v.Healthy != g.last
	g.evaluated, g.last = true, v.Healthy
	return v
}

// Checks returns the names of the gate's enabled checks, in order.
func (g *Gate) Checks() []string {
	var out []string
	for _, c := range g.checks {
		if !c.Disabled {
			out = append(out, c.Name)
		}
	}
	return out
}
