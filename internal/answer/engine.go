package answer

import (
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/gslbkit/gslb/internal/zonedata"
	"github.com/miekg/dns"
)

// The zone model's names here.
type (
	zone = zonedata.Zone
	rec  = zonedata.Rec
)

// Engine answers queries from the zones of a View: the general path
// (Respond, RespondWire) and the fast path over it (RespondFast) with its
// packed-reply cache. It holds the answer hooks, the count of hooks that
// panicked and the cache; its zero value answers with the defaults. Set
// the configuration fields before first use; the methods are safe for
// concurrent use. provider/memory's Provider holds one.
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
	fc            atomic.Pointer[fastCache] // the fast path's cache, see fastpath.go
}

// maxUDPSize is MaxUDPSize with the default applied.
func (p *Engine) maxUDPSize() int {
	if p.MaxUDPSize == 0 {
		return DefaultMaxUDPSize
	}
	return p.MaxUDPSize
}

// View is one consistent pair of a zone set and the answer hooks: what
// one query is answered from. Two Views are equal when both parts are
// the same versions (the fast path's cache belongs to one View).
type View struct {
	st    *zonedata.Set
	hooks *hookTable
}

// View returns the view of zones s (published, never modified) with the
// current answer hooks.
func (p *Engine) View(s *zonedata.Set) View { return View{st: s, hooks: p.hooks.Load()} }

// Respond builds the reply to req from v, as memory.Provider.Respond
// documents; asked is the question name as the query spelled it (the
// reply's is lower case). It returns nil for a response.
func (p *Engine) Respond(v View, req *dns.Msg, src netip.Addr, tcp bool) (m *dns.Msg, asked string) {
	m, asked, _ = p.respond(v, req, src, tcp, nil)
	return m, asked
}

// Pack packs a reply of Respond with the question name written as asked,
// or returns nil when it cannot be packed even as SERVFAIL.
func Pack(m *dns.Msg, asked string) []byte { return pack(m, asked) }

// RespondWire answers one query in wire format from v, as
// memory.Provider.RespondWire documents: the general path.
func (p *Engine) RespondWire(v View, query []byte, src netip.Addr, tcp bool) []byte {
	out, _ := p.respondWire(v, query, src, tcp, nil)
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
