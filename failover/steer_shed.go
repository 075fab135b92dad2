package failover

import (
	"cmp"
	"maps"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/libdns/libdns"
)

// ShedConfig is when LoadShed sheds a pool's clients: the share of
// clients shed from a pool grows linearly with the pool's load, from 0 at
// Low to 100 % at High:
//
//	shed = clamp((load − Low) / (High − Low), 0, 1)
//
// Load is in whatever unit the program feeds the LoadTable (utilisation
// 0–1, connections, requests per second): Low and High are in the same
// unit. A client is identified by its network (the first V4Bits or V6Bits
// bits of its prefix), hashed with the pool: at a fixed load the same
// client is always shed, or always kept.
type ShedConfig struct {
	// Low is the load at which shedding starts. With High, the zero pair
	// means the defaults (0.8 and 1: utilisation from 80 % to 100 %).
	Low float64 `json:"low"`
	// High is the load at which every client is shed; it must be above
	// Low.
	High float64 `json:"high"`
	// V4Bits and V6Bits are the client network's length for IPv4 (0 to
	// 32) and IPv6 (0 to 128); 0 means the default, 24 and 56.
	V4Bits int `json:"v4Bits,omitempty"`
	V6Bits int `json:"v6Bits,omitempty"`
}

// DefaultShedConfig returns the defaults: shed from load 0.8 to 1, by /24
// and /56.
func DefaultShedConfig() ShedConfig { return ShedConfig{Low: 0.8, High: 1, V4Bits: 24, V6Bits: 56} }

func (c ShedConfig) withDefaults() ShedConfig {
	d := DefaultShedConfig()
	if c.Low == 0 && c.High == 0 {
		c.Low, c.High = d.Low, d.High
	}
	c.V4Bits = cmp.Or(c.V4Bits, d.V4Bits)
	c.V6Bits = cmp.Or(c.V6Bits, d.V6Bits)
	return c
}

// Validate reports a field out of range as a *FieldError wrapping
// ErrInvalidConfig.
func (c ShedConfig) Validate() error {
	w := c.withDefaults()
	switch {
	case w.Low != w.Low || w.Low < 0:
		return configErr("low", c.Low, ">= 0")
	case !(w.High > w.Low):
		return configErr("high", c.High, "above low (the load at which every client is shed)")
	case c.V4Bits < 0 || c.V4Bits > 32:
		return configErr("v4Bits", c.V4Bits, "[0, 32] (0: the default, 24)")
	case c.V6Bits < 0 || c.V6Bits > 128:
		return configErr("v6Bits", c.V6Bits, "[0, 128] (0: the default, 56)")
	}
	return nil
}

// LoadTable is the load of each pool — an address, or a region's
// addresses — as the program last set it, read lock-free by LoadShed. A
// pool never set has load 0. Safe for concurrent use; the zero value is
// ready (every load 0).
type LoadTable struct {
	mu  sync.Mutex // serialises writers
	cur atomic.Pointer[poolValues[float64]]
	m   map[string]float64 // under mu
}

// Set sets one pool's load (a region name, or an address's text such as
// "192.0.2.1" when the step has no pools map).
func (t *LoadTable) Set(pool string, load float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := maps.Clone(t.m)
	if m == nil {
		m = map[string]float64{}
	}
	m[pool] = load
	t.m = m
	pv := newPoolValues(m)
	t.cur.Store(&pv)
}

// Load returns a pool's load (0 when never set).
func (t *LoadTable) Load(pool string) float64 {
	if pv := t.cur.Load(); pv != nil {
		return pv.byName[pool]
	}
	return 0
}

// LoadShed returns an AnswerFunc that sheds clients from loaded pools:
// each address's pool (pools maps an address to its pool name, e.g. its
// region; nil makes every address its own pool, named by its text) has a
// load in t, the share of clients shed grows with it as cfg says, and a
// client is shed from a pool when a hash of its network and the pool falls
// below that share. A shed client is answered the other records: the
// addresses of the pools it is not shed from. A client kept by every pool,
// or shed from every pool (shedding never leaves a client without an
// answer), gets no opinion.
//
// Its scope is the hashed network's length (at most the client's) while
// some pool among rrs sheds part of its clients, else 0 (nobody, or
// everybody, is shed: the answer does not depend on the client). The
// answer is a subslice of rrs when the kept records are adjacent, else a
// slice remembered per set of kept records (no allocation per query for up
// to 10 records per name). More than 64 records, or no client: no
// opinion.
func LoadShed(t *LoadTable, cfg ShedConfig, pools map[netip.Addr]string) (AnswerFunc, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	keys := newPoolKeys(pools)
	var plans planCache[shedPlan]
	build := func(rrs []libdns.Record) shedPlan {
		pl := shedPlan{recs: rrs}
		if len(rrs) <= shedMaskMax {
			pl.subsets = make([]atomic.Pointer[[]libdns.Record], 1<<len(rrs))
		}
		return pl
	}
	return func(client netip.Prefix, name, qtype string, rrs []libdns.Record) ([]libdns.Record, int) {
		pv := t.cur.Load()
		if pv == nil || !client.IsValid() || len(rrs) > 64 {
			return nil, 0
		}
		a, bits, extra := client.Addr().WithZone(""), client.Bits(), 0
		if a.Is4In6() {
			a, bits, extra = a.Unmap(), max(bits-96, 0), 96
		}
		n := cfg.V6Bits
		if a.Is4() {
			n = cfg.V4Bits
		}
		n = min(n, bits)
		p, _ := a.Prefix(n)
		k := u128Of(p.Addr())
		seed := mix64(mix64(k.hi^uint64(n)) ^ k.lo)
		var kept uint64
		nkept, partial := 0, false
		for i, r := range rrs {
			load, ad, pool, ok := pv.of(&keys, r)
			share := 0.0
			if ok {
				share = shedShare(cfg, load)
			}
			if share > 0 && share < 1 {
				partial = true
			}
			if !ok && !isAddr(r) {
				continue // not an address: never answered alone, never shed
			}
			var ph uint64
			if keys.byName {
				ph = fnv64(pool)
			} else {
				x := u128Of(ad)
				ph = mix64(x.hi ^ mix64(x.lo))
			}
			u := float64(mix64(seed^ph)>>11) / (1 << 53)
			if u >= share {
				kept |= 1 << i
				nkept++
			}
		}
		scope := 0
		if partial {
			scope = n + extra
		}
		if nkept == 0 || kept == 1<<len(rrs)-1 || nkept == countAddrs(rrs) {
			return nil, scope
		}
		return shedPick(&plans, build, name, qtype, rrs, kept, nkept), scope
	}, nil
}

// shedMaskMax is how many records a name may have for LoadShed to
// remember each set of kept records (2^shedMaskMax slots per plan).
const shedMaskMax = 10

// shedPlan is LoadShed's plan for one set of records: the answer for each
// set of kept records (by bit mask), built on first use.
type shedPlan struct {
	recs    []libdns.Record
	subsets []atomic.Pointer[[]libdns.Record]
}

// shedPick returns the records of rrs whose bit is set in kept (nkept of
// them): a subslice when adjacent, else a remembered slice.
func shedPick(plans *planCache[shedPlan], build func([]libdns.Record) shedPlan, name, qtype string, rrs []libdns.Record, kept uint64, nkept int) []libdns.Record {
	first := 0
	for kept&(1<<first) == 0 {
		first++
	}
	if kept>>first == 1<<nkept-1 {
		return rrs[first : first+nkept : first+nkept]
	}
	pl := plans.get(name, qtype, rrs, build)
	if pl != nil && pl.subsets != nil {
		if p := pl.subsets[kept].Load(); p != nil {
			return *p
		}
	}
	out := make([]libdns.Record, 0, nkept)
	for i, r := range rrs {
		if kept&(1<<i) != 0 {
			out = append(out, r)
		}
	}
	if pl != nil && pl.subsets != nil {
		mine := make([]libdns.Record, 0, nkept)
		for i, r := range pl.recs {
			if kept&(1<<i) != 0 {
				mine = append(mine, r)
			}
		}
		pl.subsets[kept].Store(&mine)
	}
	return out
}

// shedShare is the share of a pool's clients shed at load.
func shedShare(cfg ShedConfig, load float64) float64 {
	return min(max((load-cfg.Low)/(cfg.High-cfg.Low), 0), 1)
}

func isAddr(r libdns.Record) bool { _, ok := addrOf(r); return ok }

func countAddrs(rrs []libdns.Record) int {
	n := 0
	for _, r := range rrs {
		if isAddr(r) {
			n++
		}
	}
	return n
}

// fnv64 is FNV-1a of s, mixed: a pool name's hash, the same in every
// process (so a controller and its nodes shed the same clients).
func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := range len(s) {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return mix64(h)
}

// Loads returns every pool's load that was set (a copy).
func (t *LoadTable) Loads() map[string]float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.m)
}

// Replace sets every pool's load to m's (a pool absent from m: 0), in one
// step: a query sees the old loads or the new ones. m is copied.
func (t *LoadTable) Replace(m map[string]float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m = maps.Clone(m)
	if t.m == nil {
		t.m = map[string]float64{}
	}
	pv := newPoolValues(t.m)
	t.cur.Store(&pv)
}
