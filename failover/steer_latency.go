package failover

import (
	"cmp"
	"maps"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libdns/libdns"
)

// Defaults of LatencyConfig.
const (
	// DefaultSwitchMargin is how much faster, in percent of the current
	// choice's RTT, a new best must be to count towards a switch: 20 (the
	// new best's RTT at most 80 % of the current one's).
	DefaultSwitchMargin = 20
	// DefaultSwitchAfter is how many consecutive updates a new best must
	// stay that much faster before the answer moves: 3.
	DefaultSwitchAfter = 3
)

// LatencyConfig is the hysteresis of a LatencyTable: the answer moves from
// the current pool to a faster one only when some pool's RTT is at most
// (100 − SwitchMargin) % of the current pool's in SwitchAfter consecutive
// updates; it then moves to the fastest pool of the last of them. Noise
// inside the band, or an improvement that does not last, never moves it.
// The zero value is the default (DefaultLatencyConfig).
type LatencyConfig struct {
	// SwitchMargin is the band, in percent: a pool counts as faster when
	// its RTT ≤ current RTT × (100 − SwitchMargin) / 100. 1 to 99; 0 means
	// DefaultSwitchMargin (20).
	SwitchMargin int `json:"switchMargin,omitempty"`
	// SwitchAfter is how many consecutive updates must find a faster pool
	// before the answer moves. 1 to 100; 0 means DefaultSwitchAfter (3).
	SwitchAfter int `json:"switchAfter,omitempty"`
}

// DefaultLatencyConfig returns the defaults: a 20 % margin for 3 updates.
func DefaultLatencyConfig() LatencyConfig {
	return LatencyConfig{SwitchMargin: DefaultSwitchMargin, SwitchAfter: DefaultSwitchAfter}
}

// Validate reports a field out of range as a *FieldError wrapping
// ErrInvalidConfig.
func (c LatencyConfig) Validate() error {
	if c.SwitchMargin < 0 || c.SwitchMargin > 99 {
		return configErr("switchMargin", c.SwitchMargin, "[0, 99] (0: the default, 20)")
	}
	if c.SwitchAfter < 0 || c.SwitchAfter > 100 {
		return configErr("switchAfter", c.SwitchAfter, "[0, 100] (0: the default, 3)")
	}
	return nil
}

func (c LatencyConfig) withDefaults() LatencyConfig {
	d := DefaultLatencyConfig()
	c.SwitchMargin = cmp.Or(c.SwitchMargin, d.SwitchMargin)
	c.SwitchAfter = cmp.Or(c.SwitchAfter, d.SwitchAfter)
	return c
}

// LatencyTable is the round-trip time this controller measures to each
// pool — an address, or a region's addresses — and the pool the Latency
// step answers, chosen with hysteresis (LatencyConfig). The program feeds
// it, e.g. from probe.TargetStats.SmoothedLatency after every probe round;
// the query path reads it without a lock. Safe for concurrent use; build
// it with NewLatencyTable (the zero value is a table with the default
// hysteresis and nothing measured).
//
// The RTTs are measured from the controller, not from the clients: the
// choice is one for every client (as Cloudflare's dynamic steering does
// with its monitors' RTT), not a per-client-network latency map.
type LatencyTable struct {
	cfg    LatencyConfig
	mu     sync.Mutex // serialises Update
	streak int        // consecutive updates that found a faster pool (under mu)
	state  atomic.Pointer[latencyState]
}

// latencyState is one update's immutable view.
type latencyState struct {
	rtt     poolValues[time.Duration]
	cur     string     // the chosen pool; "" none yet
	curAddr netip.Addr // cur as an address, when it is one
}

// NewLatencyTable validates cfg and returns an empty table (no pool
// chosen: the step has no opinion until the first Update).
func NewLatencyTable(cfg LatencyConfig) (*LatencyTable, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &LatencyTable{cfg: cfg.withDefaults()}
	t.state.Store(&latencyState{rtt: newPoolValues[time.Duration](nil)})
	return t, nil
}

// Update takes one round of measurements: rtt per pool name (a region
// name, or an address's text such as "192.0.2.1" when the step has no
// pools map); a pool absent or of RTT ≤ 0 is not measured this round. It
// applies the hysteresis and returns the chosen pool and whether it
// changed. A chosen pool that is no longer measured is replaced at once by
// the fastest one (there is nothing to compare it with). rtt is copied.
func (t *LatencyTable) Update(rtt map[string]time.Duration) (chosen string, changed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := make(map[string]time.Duration, len(rtt))
	for k, v := range rtt {
		if v > 0 && k != "" {
			m[k] = v
		}
	}
	cur := t.Chosen()
	next := latencyNext(t.cfg.withDefaults(), cur, &t.streak, m)
	st := &latencyState{rtt: newPoolValues(m), cur: next}
	if a, err := netip.ParseAddr(next); err == nil {
		st.curAddr = a.Unmap()
	}
	t.state.Store(st)
	return next, next != cur
}

// latencyNext is the hysteresis rule: the pool to answer after a round of
// measurements m, given the current one and the streak of rounds that
// found a pool faster than it by the margin.
func latencyNext(cfg LatencyConfig, cur string, streak *int, m map[string]time.Duration) string {
	if len(m) == 0 {
		*streak = 0
		return cur
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	best := keys[0]
	for _, k := range keys[1:] {
		if m[k] < m[best] {
			best = k
		}
	}
	c, ok := m[cur]
	if !ok {
		*streak = 0
		return best
	}
	if best != cur && int64(m[best])*100 <= int64(c)*int64(100-cfg.SwitchMargin) {
		*streak++
		if *streak >= cfg.SwitchAfter {
			*streak = 0
			return best
		}
		return cur
	}
	*streak = 0
	return cur
}

// Chosen returns the pool the table currently answers ("" before the
// first measured Update).
func (t *LatencyTable) Chosen() string {
	if st := t.state.Load(); st != nil {
		return st.cur
	}
	return ""
}

// Latency returns an AnswerFunc that answers the pool t has chosen: the
// fastest from this controller, with hysteresis (see LatencyTable). pools
// maps each address to its pool name (e.g. its region); nil makes every
// address its own pool, named by its text, and the answer one address.
// When the chosen pool has no address among rrs (it went unhealthy) it
// answers, at once and without hysteresis, the measured pool of lowest RTT
// that has; no measured pool among rrs: no opinion. It does not look at
// the client: scope 0. The answer is a subslice of rrs, or a slice
// remembered for the pool (no allocation per query); read it, do not
// modify it.
func Latency(t *LatencyTable, pools map[netip.Addr]string) AnswerFunc {
	keys := newPoolKeys(pools)
	inPool := func(r libdns.Record, pool string) bool { return keys.inPool(r, pool, netip.Addr{}) }
	var memo, fallback atomic.Pointer[[]libdns.Record]
	// Each pool's records, planned once per set of records (see
	// planCache): a query then costs a comparison and a lookup.
	var plans planCache[map[string]span]
	build := func(rrs []libdns.Record) map[string]span {
		pl := map[string]span{}
		for _, r := range rrs {
			if a, ok := addrOf(r); ok {
				pool := keys.t.get(a)
				if _, done := pl[pool]; pool != "" && !done {
					recs := pickTagged(rrs, pool, inPool, nil)
					sp := span{recs: recs}
					if first := slices.IndexFunc(rrs, func(x libdns.Record) bool { return inPool(x, pool) }); &rrs[first] == &recs[0] {
						sp = span{first: first, end: first + len(recs)}
					}
					pl[pool] = sp
				}
			}
		}
		return pl
	}
	return func(_ netip.Prefix, name, qtype string, rrs []libdns.Record) ([]libdns.Record, int) {
		st := t.state.Load()
		if st == nil {
			return nil, 0
		}
		if st.cur != "" {
			if keys.byName {
				if pl := plans.get(name, qtype, rrs, build); pl != nil {
					if sp, ok := (*pl)[st.cur]; ok {
						return sp.of(rrs), 0
					}
				} else if out := pickTagged(rrs, st.cur, inPool, &memo); len(out) > 0 {
					return out, 0
				}
			} else if st.curAddr.IsValid() {
				for i, r := range rrs {
					if a, ok := addrOf(r); ok && a == st.curAddr {
						return rrs[i : i+1 : i+1], 0
					}
				}
			}
		}
		best, bestPool, bestRTT := -1, "", time.Duration(0)
		for i, r := range rrs {
			v, _, pool, ok := st.rtt.of(&keys, r)
			if ok && (best < 0 || v < bestRTT) {
				best, bestPool, bestRTT = i, pool, v
			}
		}
		switch {
		case best < 0:
			return nil, 0
		case keys.byName:
			if pl := plans.get(name, qtype, rrs, build); pl != nil {
				if sp, ok := (*pl)[bestPool]; ok {
					return sp.of(rrs), 0
				}
			}
			return pickTagged(rrs, bestPool, inPool, &fallback), 0
		}
		return rrs[best : best+1 : best+1], 0
	}
}

// LatencyState is a LatencyTable's answer state: the chosen pool and the
// last round's RTT per pool (which the step falls back to when the chosen
// pool has no address left). A DNS node copies its controller's with
// State and Restore, so it answers alike without measuring anything.
type LatencyState struct {
	// Chosen is the pool the table answers ("" none yet).
	Chosen string `json:"chosen,omitempty"`
	// RTT is the last round's RTT per pool.
	RTT map[string]time.Duration `json:"rtt,omitempty"`
}

// State returns t's answer state (a copy).
func (t *LatencyTable) State() LatencyState {
	st := t.state.Load()
	if st == nil {
		return LatencyState{}
	}
	return LatencyState{Chosen: st.cur, RTT: maps.Clone(st.rtt.byName)}
}

// Restore replaces t's answer state with s, as if the hysteresis had
// chosen s.Chosen after a round measuring s.RTT (pools of RTT ≤ 0 are
// dropped); the streak towards a switch starts again.
func (t *LatencyTable) Restore(s LatencyState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := make(map[string]time.Duration, len(s.RTT))
	for k, v := range s.RTT {
		if v > 0 && k != "" {
			m[k] = v
		}
	}
	t.streak = 0
	st := &latencyState{rtt: newPoolValues(m), cur: s.Chosen}
	if a, err := netip.ParseAddr(s.Chosen); err == nil {
		st.curAddr = a.Unmap()
	}
	t.state.Store(st)
}
