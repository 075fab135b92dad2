package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gslbkit/gslb/internal/fielderr"
	"io"
	"maps"
	"math"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/probe"
)

// Steering steps. A record's steps run after its answer kind (and within),
// in order, each on the previous one's answer (failover.Chain): sticky,
// firstN, netFence, latency, proximity and loadShed. Like the answer kinds
// they choose among the addresses the policy publishes, so they never
// answer a dead or drained address. The controller feeds the latency
// steps from its probe monitor's smoothed latency once per probe interval,
// and the load of the loadShed steps' pools comes from the operator:
// PUT /api/load/{pool}.

// StepSpec is one steering step of a record: exactly one of its fields.
type StepSpec struct {
	// Sticky answers one address per client network, the same one while
	// it is published (failover.Sticky; rendezvous hashing).
	Sticky *StickyStep `json:"sticky,omitempty"`
	// FirstN answers at most this many addresses (failover.FirstN), 1 or
	// more: put it after the steps that choose and order.
	FirstN *int `json:"firstN,omitempty"`
	// NetFence answers an address only to the client prefixes listed for
	// it (IP → prefixes, failover.NetFence); an address not listed is
	// answered to every client.
	NetFence map[string][]string `json:"netFence,omitempty"`
	// Latency answers the pool the controller measures fastest, with
	// hysteresis (failover.Latency).
	Latency *LatencyStep `json:"latency,omitempty"`
	// Proximity answers the pool (region) nearest the client by
	// great-circle distance after bias; the geo block's prefixes place
	// clients and its coordinates place regions (failover.Proximity).
	Proximity *ProximityStep `json:"proximity,omitempty"`
	// LoadShed moves a share of clients off a loaded pool, growing
	// linearly between two watermarks (failover.LoadShed).
	LoadShed *LoadShedStep `json:"loadShed,omitempty"`
}

// StickyStep configures a sticky step.
type StickyStep struct {
	// V4Bits and V6Bits are the client network's length: 0–32 (default
	// 24) and 0–128 (default 56); 0 gives every client one address.
	V4Bits *int `json:"v4Bits,omitempty"`
	V6Bits *int `json:"v6Bits,omitempty"`
}

// LatencyStep configures a latency step.
type LatencyStep struct {
	// Pools is "address" (the default: each address is a pool, the answer
	// one address) or "region" (an address's pool is its first region,
	// measured as its fastest passing address; the answer the region's
	// addresses).
	Pools string `json:"pools,omitempty"`
	// SwitchMargin: a pool counts as faster when its RTT is at most
	// (100 − switchMargin) % of the current one's. 1–99, default 20.
	SwitchMargin int `json:"switchMargin,omitempty"`
	// SwitchAfter: how many consecutive updates (one per probe interval)
	// must find a faster pool before the answer moves. 1–100, default 3.
	SwitchAfter int `json:"switchAfter,omitempty"`
}

// ProximityStep configures a proximity step.
type ProximityStep struct {
	// Bias per region, −99 to 99 (absent: 0): distances to the region are
	// multiplied by 1 − bias/100, so a positive bias draws clients from
	// farther away (Route 53 geoproximity's rule).
	Bias map[string]int `json:"bias,omitempty"`
}

// LoadShedStep configures a loadShed step.
type LoadShedStep struct {
	// Pools is "address" (the default: PUT /api/load/192.0.2.1) or
	// "region" (an address's pool is its first region: PUT
	// /api/load/eu).
	Pools string `json:"pools,omitempty"`
	// Low and High are the watermarks, in the unit the operator PUTs
	// (e.g. utilisation 0–1): nobody is shed at low, everybody at high,
	// linearly between. Both left out: 0.8 and 1.
	Low  float64 `json:"low,omitempty"`
	High float64 `json:"high,omitempty"`
	// V4Bits and V6Bits are the client network hashed to decide who is
	// shed: 1–32 (default 24) and 1–128 (default 56).
	V4Bits int `json:"v4Bits,omitempty"`
	V6Bits int `json:"v6Bits,omitempty"`
}

// stepKinds lists the keys of a step, for errors.
const stepKinds = "exactly one of sticky, firstN, netFence, latency, proximity, loadShed"

// kind returns the step's one key, or "" when it has none or several.
func (s StepSpec) kind() string {
	var ks []string
	if s.Sticky != nil {
		ks = append(ks, "sticky")
	}
	if s.FirstN != nil {
		ks = append(ks, "firstN")
	}
	if s.NetFence != nil {
		ks = append(ks, "netFence")
	}
	if s.Latency != nil {
		ks = append(ks, "latency")
	}
	if s.Proximity != nil {
		ks = append(ks, "proximity")
	}
	if s.LoadShed != nil {
		ks = append(ks, "loadShed")
	}
	if len(ks) != 1 {
		return strings.Join(ks, ", ")
	}
	return ks[0]
}

// perQuery reports whether r registers an answer hook: a per-query kind
// or a step.
func (r RecordSpec) perQuery() bool { return r.Answer.perQuery() || len(r.Steps) > 0 }

// steering is what the program feeds the steps of every record: the
// pools' load (one table: a pool is named alike in every record) and each
// latency step's table.
type steering struct {
	load    *failover.LoadTable
	pools   map[string]bool // the loadShed steps' pool names, for the API
	latency []*latencyFeed
	// rtt, when set, replaces the probe monitor's smoothed latency (tests).
	rtt func(id string) (time.Duration, bool)
}

// latencyFeed is one latency step's table and how its pools are measured.
type latencyFeed struct {
	record string
	step   int // the step's index in the record's steps
	table  *failover.LatencyTable
	pools  map[netip.Addr]string // nil: each address is its own pool
}

func newSteering() *steering {
	return &steering{load: new(failover.LoadTable), pools: map[string]bool{}}
}

// firstRegions maps each address of m to its first region (nil for pools
// "address").
func firstRegions(pools string, r RecordSpec) map[netip.Addr]string {
	if pools != "region" {
		return nil
	}
	out := map[netip.Addr]string{}
	for _, a := range r.Addresses {
		if ip, err := netip.ParseAddr(a.IP); err == nil && len(a.Regions) > 0 {
			out[ip.Unmap()] = a.Regions[0]
		}
	}
	return out
}

// stepErr re-roots a failover config error under field f (a geo block's
// coordinates under geo).
func stepErr(f string, err error) error {
	var fe *failover.FieldError
	if errors.As(err, &fe) {
		if strings.HasPrefix(fe.Path, "coordinates") {
			f = "geo"
		}
		return fielderr.In(f, fielderr.Both(ErrInvalidConfig, err), err)
	}
	return badErr(f, "", "a valid step", err)
}

// buildSteps returns r's steps as answer functions, registering their
// tables with st (nil: checking only). f is the record's field path.
func buildSteps(f string, r RecordSpec, geo *failover.GeoMap, st *steering) ([]failover.AnswerFunc, error) {
	m := r.model("", nil)
	var out []failover.AnswerFunc
	for j, s := range r.Steps {
		sf := fmt.Sprintf("%s.steps[%d]", f, j)
		k := s.kind()
		var fn failover.AnswerFunc
		var err error
		switch k {
		case "sticky":
			v4, v6 := 24, 56
			if s.Sticky.V4Bits != nil {
				v4 = *s.Sticky.V4Bits
			}
			if s.Sticky.V6Bits != nil {
				v6 = *s.Sticky.V6Bits
			}
			if v4 < 0 || v4 > 32 {
				return nil, bad(sf+".sticky.v4Bits", v4, "[0, 32]")
			}
			if v6 < 0 || v6 > 128 {
				return nil, bad(sf+".sticky.v6Bits", v6, "[0, 128]")
			}
			if fn, err = failover.Sticky(v4, v6); err != nil {
				return nil, stepErr(sf, err)
			}
		case "firstN":
			if fn, err = failover.FirstN(*s.FirstN); err != nil {
				return nil, bad(sf+".firstN", *s.FirstN, "at least 1")
			}
		case "netFence":
			fence := map[netip.Addr][]netip.Prefix{}
			for _, ip := range slices.Sorted(maps.Keys(s.NetFence)) {
				a, perr := netip.ParseAddr(ip)
				if perr != nil || !slices.ContainsFunc(r.Addresses, func(x AddressSpec) bool { p, e := netip.ParseAddr(x.IP); return e == nil && p.Unmap() == a.Unmap() }) {
					return nil, bad(fmt.Sprintf("%s.netFence[%s]", sf, ip), ip, "an IP of one of the record's addresses")
				}
				for i, p := range s.NetFence[ip] {
					q, perr := netip.ParsePrefix(p)
					if perr != nil || q.Masked() != q || q.Addr().Is4In6() {
						return nil, bad(fmt.Sprintf("%s.netFence[%s][%d]", sf, ip, i), p, "a client prefix with host bits clear, IPv4 in its own form (10.0.0.0/8)")
					}
					fence[a.Unmap()] = append(fence[a.Unmap()], q)
				}
			}
			if fn, err = failover.NetFence(fence); err != nil {
				return nil, stepErr(sf+".netFence", err)
			}
		case "latency":
			l := s.Latency
			if err := checkPools(sf+".latency.pools", l.Pools, r); err != nil {
				return nil, err
			}
			t, err := failover.NewLatencyTable(failover.LatencyConfig{SwitchMargin: l.SwitchMargin, SwitchAfter: l.SwitchAfter})
			if err != nil {
				return nil, stepErr(sf+".latency", err)
			}
			pools := firstRegions(l.Pools, r)
			fn = failover.Latency(t, pools)
			if st != nil {
				st.latency = append(st.latency, &latencyFeed{record: r.Name, step: j, table: t, pools: pools})
			}
		case "proximity":
			if geo == nil {
				return nil, bad(sf+".proximity", "a proximity step", "a top-level geo block with prefixes (or a default) placing clients in regions, and coordinates for those regions and the addresses' regions")
			}
			if fn, err = failover.Proximity(*geo, m.Tags(), s.Proximity.Bias); err != nil {
				return nil, stepErr(sf+".proximity", err)
			}
		case "loadShed":
			l := s.LoadShed
			if err := checkPools(sf+".loadShed.pools", l.Pools, r); err != nil {
				return nil, err
			}
			pools := firstRegions(l.Pools, r)
			load := new(failover.LoadTable)
			if st != nil {
				load = st.load
				if pools == nil {
					for _, a := range r.Addresses {
						if ip, e := netip.ParseAddr(a.IP); e == nil {
							st.pools[ip.Unmap().String()] = true
						}
					}
				}
				for _, p := range pools {
					st.pools[p] = true
				}
			}
			if fn, err = failover.LoadShed(load, failover.ShedConfig{Low: l.Low, High: l.High, V4Bits: l.V4Bits, V6Bits: l.V6Bits}, pools); err != nil {
				return nil, stepErr(sf+".loadShed", err)
			}
		default:
			got := k
			if got == "" {
				got = "no step"
			}
			return nil, bad(sf, got, stepKinds)
		}
		out = append(out, fn)
	}
	return out, nil
}

// checkPools refuses a pools value other than "address" and "region",
// and "region" when an address of r has no region.
func checkPools(f, pools string, r RecordSpec) error {
	switch pools {
	case "", "address":
		return nil
	case "region":
		for i, a := range r.Addresses {
			if len(a.Regions) == 0 {
				return bad(f, pools, fmt.Sprintf(`"address", or "region" with a region on every address (addresses[%d] has none)`, i))
			}
		}
		return nil
	}
	return bad(f, pools, `"address" (the default) or "region"`)
}

// feedLatency hands every latency step one round of measurements: each
// pool's smoothed probe RTT (rtt, by target ID; a region's is its fastest
// passing address's), taken from addresses that are not critical.
func (c *controller) feedLatency(rtt func(id string) (time.Duration, bool)) {
	if c.steer == nil {
		return
	}
	for _, lf := range c.steer.latency {
		rs := c.byName[lf.record]
		if rs == nil {
			continue
		}
		m := map[string]time.Duration{}
		c.mu.Lock()
		for _, a := range rs.addrs {
			if a.state == probe.Critical {
				continue
			}
			d, ok := rtt(a.id)
			if !ok || d <= 0 {
				continue
			}
			key := a.ip.Unmap().String()
			if lf.pools != nil {
				key = lf.pools[a.ip.Unmap()]
			}
			if cur, ok := m[key]; !ok || d < cur {
				m[key] = d
			}
		}
		c.mu.Unlock()
		lf.table.Update(m)
	}
}

// monitorRTT is the probe monitor's smoothed latency of a target.
func (c *controller) monitorRTT(id string) (time.Duration, bool) {
	st, ok := c.mon.Stats(id)
	if !ok || st.Probes == 0 {
		return 0, false
	}
	return st.SmoothedLatency, true
}

// latencyLoop feeds the latency steps once per probe interval (the
// shortest of the records with a latency step) until ctx ends.
func (c *controller) latencyLoop(ctx context.Context) error {
	every := time.Duration(0)
	for _, rs := range c.records {
		for _, s := range rs.spec.Steps {
			if s.Latency != nil && (every == 0 || rs.spec.check.Policy.Interval < every) {
				every = rs.spec.check.Policy.Interval
			}
		}
	}
	if every <= 0 || c.steer == nil {
		return nil
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			rtt := c.monitorRTT
			if c.steer.rtt != nil {
				rtt = c.steer.rtt
			}
			c.feedLatency(rtt)
		}
	}
}

// loadView is the body of PUT /api/load/{pool} and of each pool in GET
// /api/load.
type loadView struct {
	Load float64 `json:"load"`
}

// putLoad sets a loadShed pool's load: PUT /api/load/{pool} with
// {"load": 0.93}. The pool is an address (pools "address") or a region
// (pools "region") of a loadShed step; another name is 404. The value
// lives in memory: a restart starts every pool at 0 until the operator's
// feeder sends it again.
func (c *controller) putLoad(w http.ResponseWriter, r *http.Request) {
	pool := r.PathValue("pool")
	if a, err := netip.ParseAddr(pool); err == nil {
		pool = a.Unmap().String()
	}
	if !c.steer.pools[pool] {
		writeJSON(w, http.StatusNotFound, apiError{"unknown pool " + pool + " (the addresses or regions of the loadShed steps: " + strings.Join(slices.Sorted(maps.Keys(c.steer.pools)), ", ") + ")"})
		return
	}
	var v loadView
	dec := json.NewDecoder(io.LimitReader(r.Body, 4<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil || math.IsNaN(v.Load) || math.IsInf(v.Load, 0) {
		writeJSON(w, http.StatusBadRequest, apiError{`body: allowed {"load": <a finite number, in the unit of the steps' low and high>}`})
		return
	}
	c.steer.load.Set(pool, v.Load)
	c.log.Info("load", "pool", pool, "load", v.Load, "by", clientOf(r))
	writeJSON(w, http.StatusOK, v)
}

// listLoad is GET /api/load: every loadShed pool's load.
func (c *controller) listLoad(w http.ResponseWriter, _ *http.Request) {
	out := map[string]loadView{}
	for p := range c.steer.pools {
		out[p] = loadView{Load: c.steer.load.Load(p)}
	}
	writeJSON(w, http.StatusOK, out)
}

// stepKindsOf lists r's steps by kind, for the status (nil: none).
func stepKindsOf(r RecordSpec) []string {
	var out []string
	for _, s := range r.Steps {
		out = append(out, s.kind())
	}
	return out
}

// steeringView is the body of GET /replication/steering: what a node
// needs to answer the latency and loadShed steps as the controller does.
// It carries the latency tables' answer state (the chosen pool and the
// RTTs it falls back to), not their inputs: a node that missed a round,
// or started later, would otherwise run its hysteresis on another history
// and could choose another pool.
type steeringView struct {
	// Latency is each latency step's state, by record and step index.
	Latency []latencyStepView `json:"latency"`
	// Load is every loadShed pool's load that was set.
	Load map[string]float64 `json:"load"`
}

// latencyStepView is one latency step's state.
type latencyStepView struct {
	Record string                `json:"record"`
	Step   int                   `json:"step"`
	State  failover.LatencyState `json:"state"`
}

// view returns the steering data a node copies.
func (st *steering) view() steeringView {
	v := steeringView{Latency: []latencyStepView{}, Load: st.load.Loads()}
	if v.Load == nil {
		v.Load = map[string]float64{}
	}
	for _, lf := range st.latency {
		v.Latency = append(v.Latency, latencyStepView{Record: lf.record, Step: lf.step, State: lf.table.State()})
	}
	return v
}

// apply copies v into st's tables: a latency step v does not list, and a
// pool without a load, are left as they are (the controller's config may
// lag or lead the node's; checkAnswers says so).
func (st *steering) apply(v steeringView) {
	for _, lf := range st.latency {
		for _, l := range v.Latency {
			if l.Record == lf.record && l.Step == lf.step {
				lf.table.Restore(l.State)
			}
		}
	}
	st.load.Replace(v.Load)
}

// steers reports whether st has a latency or loadShed step.
func (st *steering) steers() bool { return len(st.latency) > 0 || len(st.pools) > 0 }
