//go:build linux

package main

// The torture test's model: what the operator and the test did, as a list
// of immutable states with the time each began. The checkers judge every
// observed answer against the states in force around it.

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gslbkit/gslb/probe"
)

const (
	tZone      = "example.test."
	tForgedIP  = "198.51.100.66" // the impostor's address: in no config
	tFailover  = "backup.example.net."
	tMarkerRec = "_gslb-owner.x.example.test."
)

// tPolicies are the probe policies a record may have (relaxed style).
var tPolicies = map[string]probe.Policy{
	"fast": {Interval: 200 * time.Millisecond, Timeout: 200 * time.Millisecond, WarningThreshold: 1, CriticalThreshold: 2, PassingThreshold: 1, MaxBackoff: 400 * time.Millisecond},
	"wide": {Interval: 200 * time.Millisecond, Timeout: 200 * time.Millisecond, WarningThreshold: 1, CriticalThreshold: 5, PassingThreshold: 1, MaxBackoff: 400 * time.Millisecond},
	"slow": {Interval: 400 * time.Millisecond, Timeout: 200 * time.Millisecond, WarningThreshold: 2, CriticalThreshold: 3, PassingThreshold: 2, MaxBackoff: 800 * time.Millisecond},
}

func policyYAML(p probe.Policy) string {
	return fmt.Sprintf("{interval: %v, timeout: %v, warningThreshold: %d, criticalThreshold: %d, passingThreshold: %d, maxBackoff: %v}",
		p.Interval, p.Timeout, p.WarningThreshold, p.CriticalThreshold, p.PassingThreshold, p.MaxBackoff)
}

// detectionBound is how long an address may still be answered after its
// backend died: the policy's worst case, plus the probe loop's grain.
func detectionBound(policy string) time.Duration {
	return probe.WorstCaseDetection(tPolicies[policy]) + 100*time.Millisecond
}

// recoveryBound is how long a revived backend may still be left out: the
// longest back-off, then passingThreshold probes.
func recoveryBound(policy string) time.Duration {
	p := tPolicies[policy]
	return p.MaxBackoff + time.Duration(p.PassingThreshold)*(p.Interval+p.Timeout) + 100*time.Millisecond
}

// startupBound is the documented startup hold: two of the longest probe
// intervals plus that check's timeout.
func tStartupBound() time.Duration {
	p := tPolicies["slow"]
	return 2*p.Interval + p.Timeout
}

type mAddr struct {
	IP      string
	Backend int
	Drained bool
	Added   time.Time // when it entered the config (zero: at the start)
}

type mRec struct {
	Name        string
	Failover    string
	Policy      string
	CfgDisabled bool // disabled: true in the config
	APIDisabled bool // disabled through the API
	Addrs       []mAddr
}

func (r *mRec) disabled() bool { return r.CfgDisabled || r.APIDisabled }

func (r *mRec) addr(ip string) *mAddr {
	for i := range r.Addrs {
		if r.Addrs[i].IP == ip {
			return &r.Addrs[i]
		}
	}
	return nil
}

// mUnsaved is an operator action the running controller holds but its
// state file does not: Value is the file's (drained, or disabled when IP
// is empty).
type mUnsaved struct {
	Name, IP string
	Value    bool
}

type mBackend struct {
	Dead  bool
	Since time.Time // of the last change
}

// mState is everything the checkers need to know about one stretch of
// time. It is copied, never changed, once appended to the model.
type mState struct {
	At           time.Time
	Recs         []mRec // as the running controller's config has them
	Removed      []string
	AllUnhealthy string
	Backends     []mBackend
	CtlUp        bool
	CtlUpSince   time.Time
	CtlDownAt    time.Time // when the controller last went down
	// DownStateBroken: the state directory could not be written when the
	// controller last went down (its file may be older than its last
	// detection).
	DownStateBroken bool
	NodeUp          bool
	Impostor        bool
	StateBroken     bool // the state directory cannot be written
	// Alt is the state before an operator call in flight: the server may
	// show either until it answers (see walk.intent).
	Alt *mState
	// Unsaved lists operator actions answered 500 "NOT saved", with the
	// value the state file still has for each.
	Unsaved []mUnsaved
}

func (s *mState) rec(name string) *mRec {
	for i := range s.Recs {
		if strings.EqualFold(s.Recs[i].Name, name) {
			return &s.Recs[i]
		}
	}
	return nil
}

func (s *mState) clone() mState {
	c := *s
	c.Recs = make([]mRec, len(s.Recs))
	for i, r := range s.Recs {
		r.Addrs = slices.Clone(r.Addrs)
		c.Recs[i] = r
	}
	c.Removed = slices.Clone(s.Removed)
	c.Backends = slices.Clone(s.Backends)
	c.Unsaved = slices.Clone(s.Unsaved)
	return c
}

// model is the append-only list of states.
type model struct {
	mu     sync.Mutex
	states []mState
}

// change applies f to a copy of the current state, stamped now.
func (m *model) change(f func(s *mState)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.states[len(m.states)-1].clone()
	f(&s)
	s.At = time.Now()
	m.states = append(m.states, s)
}

// cur returns a copy of the current state.
func (m *model) cur() mState {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.states[len(m.states)-1].clone()
}

// window returns the states in force at some instant of [from, to], each
// with the earliest such instant.
func (m *model) window(from, to time.Time) ([]*mState, []time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ss []*mState
	var at []time.Time
	for i := range m.states {
		s := &m.states[i]
		end := time.Time{}
		if i+1 < len(m.states) {
			end = m.states[i+1].At
		}
		if !end.IsZero() && !end.After(from) {
			continue
		}
		if s.At.After(to) {
			break
		}
		e := from
		if s.At.After(e) {
			e = s.At
		}
		ss, at = append(ss, s), append(at, e)
	}
	return ss, at
}

// names is every name the walk ever configured (removed ones included).
func (m *model) names() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, s := range m.states {
		for _, r := range s.Recs {
			if !seen[r.Name] {
				seen[r.Name] = true
				out = append(out, r.Name)
			}
		}
	}
	return out
}

// renderConfig writes the controller's YAML for state s.
func renderConfig(s *mState, e *tEnv, extra string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `ownerId: test
zone: %s
style: relaxed
dns: {addr: %q}
http: {addr: %q}
stateDir: %s
replication: {secret: %s, notify: ["http://%s/replication"]}
transfer:
  keys: [{name: xfr-key, secret: %q}]
  allow: [{key: xfr-key}]
  notify: [%q]
  notifyTimeout: 500ms
policy: {allUnhealthy: %s}
probe:
  type: HTTP
  policy: %s
  http: {path: /healthz}
%srecords:
`, tZone, e.ctlDNS, e.ctlHTTP, e.stateDir, e.secret, e.nodeHTTP, e.xfrSecret, e.knotAddr, s.AllUnhealthy, policyYAML(tPolicies["fast"]), extra)
	for _, r := range s.Recs {
		fmt.Fprintf(&b, "  - name: %s\n    ttl: 1s\n", r.Name)
		if r.Failover != "" {
			fmt.Fprintf(&b, "    failover: %s\n", r.Failover)
		}
		if r.CfgDisabled {
			b.WriteString("    disabled: true\n")
		}
		if r.Policy != "fast" {
			fmt.Fprintf(&b, "    probe: {policy: %s}\n", policyYAML(tPolicies[r.Policy]))
		}
		b.WriteString("    addresses:\n")
		for _, a := range r.Addrs {
			fmt.Fprintf(&b, "      - {ip: %s, probeAddr: %q}\n", a.IP, e.backends[a.Backend].addr())
		}
	}
	return b.String()
}

func renderNodeConfig(e *tEnv) string {
	return fmt.Sprintf("zone: %s\ndns: {addr: %q}\nhttp: {addr: %q}\nreplication: {secret: %s}\nnode: {url: \"http://%s/replication\", interval: 200ms, dir: %s}\n",
		tZone, e.nodeDNS, e.nodeHTTP, e.secret, e.ctlHTTP, e.nodeDir)
}
