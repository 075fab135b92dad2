package answer

import (
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/gslbkit/gslb/provider/internal/zonedata"
	"github.com/miekg/dns"
)

// The zone model's names here.
type (
	zone = zonedata.Zone
	rec  = zonedata.Rec
)

// Engine answers queries from the zones last published (Publish): the general path
// (Respond, RespondWire) and the fast path over it (RespondFast) with its
// packed-reply cache. It holds the answer hooks, the count of hooks that
// panicked and the cache; its zero value answers REFUSED to every query,
// with the defaults. Set
// the configuration fields before first use; the methods are safe for
// concurrent use. provider/memory's Provider holds one and publishes its zones with every
// change.
type Engine struct {
	// MaxUDPSize caps UDP replies (0: DefaultMaxUDPSize); FullANYOverUDP
	// and NoAdditional are memory.Config's fields of those names.
	MaxUDPSize     int
	FullANYOverUDP bool
	NoAdditional   bool

	hmu     sync.Mutex // serialises answer-hook registrations
	hookGen uint64     // answer-hook tables set so far, under hmu
	hooks   atomic.Pointer[hookTable]
	// hookPanics counts answer hooks that panicked (answered as "no
	// opinion"); lastHookPanic is the latest panic's value, as text.
	hookPanics    atomic.Uint64
	lastHookPanic atomic.Pointer[string]
	fc            atomic.Pointer[fastCache]    // the fast path's cache, see fastpath.go
	set           atomic.Pointer[zonedata.Set] // the zones, see Publish
}

// maxUDPSize is MaxUDPSize with the default applied.
func (p *Engine) maxUDPSize() int {
	if p.MaxUDPSize == 0 {
		return DefaultMaxUDPSize
	}
	return p.MaxUDPSize
}

// view is one consistent pair of a zone set and the answer hooks: what
// one query is answered from. Two views are equal when both parts are the
// same versions (the fast path's cache belongs to one view).
type view struct {
	st    *zonedata.Set
	hooks *hookTable
}

// noZones is the set a Engine answers from before the first Publish.
var noZones = &zonedata.Set{}

// Publish makes s (published, never modified) the zones the Engine
// answers from.
func (p *Engine) Publish(s *zonedata.Set) { p.set.Store(s) }

// view returns the current zones and hooks.
func (p *Engine) view() view {
	s := p.set.Load()
	if s == nil {
		s = noZones
	}
	return view{st: s, hooks: p.hooks.Load()}
}

// Respond builds the reply to req, as memory.Provider.Respond documents;
// asked is the question name as the query spelled it (the reply's is lower
// case). It returns nil for a response.
func (p *Engine) Respond(req *dns.Msg, src netip.Addr, tcp bool) (m *dns.Msg, asked string) {
	m, asked, _ = p.respond(p.view(), req, src, tcp, nil)
	return m, asked
}

// Pack packs a reply of Respond with the question name written as asked,
// or returns nil when it cannot be packed even as SERVFAIL.
func Pack(m *dns.Msg, asked string) []byte { return pack(m, asked) }

// RespondWire answers one query in wire format, as
// memory.Provider.RespondWire documents: the general path.
func (p *Engine) RespondWire(query []byte, src netip.Addr, tcp bool) []byte {
	out, _ := p.respondWire(p.view(), query, src, tcp, nil)
	return out
}

// HookPanics returns how many times an answer hook panicked and the latest
// panic as text ("" when none did).
func (p *Engine) HookPanics() (n uint64, last string) {
	if m := p.lastHookPanic.Load(); m != nil {
		last = *m
	}
	return p.hookPanics.Load(), last
}

// ZoneHooked reports whether answer hooks act on names of zone (lower
// case, fully qualified), and the generation of the set of hooks.
func (p *Engine) ZoneHooked(zone string) (hooked bool, set uint64) {
	h := p.hooks.Load()
	if h == nil {
		return false, 0
	}
	for n := range h.byName {
		if dns.IsSubDomain(zone, n) {
			return true, h.gen
		}
	}
	for n := range h.byZone {
		if dns.IsSubDomain(n, zone) || dns.IsSubDomain(zone, n) {
			return true, h.gen
		}
	}
	return false, h.gen
}
