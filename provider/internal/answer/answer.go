package answer

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/libdns/libdns"
)

// AnswerFunc is memory.AnswerFunc's type, unnamed: a memory.AnswerFunc is
// assignable to it.
type AnswerFunc = func(client netip.Prefix, name, qtype string, rrs []libdns.Record) (answer []libdns.Record, scope int)

// hookAnswer is what a hook returned, carried from the fast path to the
// general one (see fasthook.go).
type hookAnswer struct {
	rrs   []libdns.Record
	scope int
}

// callHook asks f, turning a panic into "no opinion" (nil) at the widest
// scope (128, capped at the source prefix length: nothing is known about
// the decision, so no other client may share the answer): a hook's bug
// must not take the DNS server down with it. The panic is counted in
// HookPanics.
func (p *Engine) callHook(f AnswerFunc, client netip.Prefix, name, qtype string, rrs []libdns.Record) (a hookAnswer) {
	defer p.recoverHook(&a, name, qtype) // a method, not a closure: nothing to allocate per query
	a.rrs, a.scope = f(client, name, qtype, rrs)
	return a
}

// recoverHook is callHook's deferred half.
func (p *Engine) recoverHook(a *hookAnswer, name, qtype string) {
	if v := recover(); v != nil {
		p.hookPanics.Add(1)
		msg := fmt.Sprintf("answer hook for %s %s panicked: %v", name, qtype, v)
		p.lastHookPanic.Store(&msg)
		*a = hookAnswer{scope: 128}
	}
}

// hookTable is the immutable set of answer hooks.
type hookTable struct {
	byName map[string]AnswerFunc // owner name → hook
	byZone map[string]AnswerFunc // zone name → hook for every name in it
	gen    uint64                // counts the tables set (see ZoneHooked)
}

// SetHook registers f as the answer hook for the owner name key (lower
// case, fully qualified) or, when zoneWide, for every name of the zone key
// without a hook of its own; nil removes it.
func (p *Engine) SetHook(key string, f AnswerFunc, zoneWide bool) {
	p.hmu.Lock()
	defer p.hmu.Unlock()
	old := p.hooks.Load()
	nt := &hookTable{byName: map[string]AnswerFunc{}, byZone: map[string]AnswerFunc{}}
	p.hookGen++
	nt.gen = p.hookGen
	if old != nil {
		for k, v := range old.byName {
			nt.byName[k] = v
		}
		for k, v := range old.byZone {
			nt.byZone[k] = v
		}
	}
	m := nt.byName
	if zoneWide {
		m = nt.byZone
	}
	if f == nil {
		delete(m, key)
	} else {
		m[key] = f
	}
	if len(nt.byName) == 0 && len(nt.byZone) == 0 {
		p.hooks.Store(nil)
		return
	}
	p.hooks.Store(nt)
}

// hookForSynth returns the hook for an answer to name whose records are
// owned by src (a wildcard when the answer is synthesised): a per-name hook
// for name, else one for src, else the zone-wide one.
func (h *hookTable) hookForSynth(name, src, z string) AnswerFunc {
	if h != nil && src != name {
		if f, ok := h.byName[name]; ok {
			return f
		}
		name = src
	}
	return h.hookFor(name, z)
}

// hookFor returns the hook for owner name (lower case, fully qualified) in
// zone z, or nil.
func (h *hookTable) hookFor(name, z string) AnswerFunc {
	if h == nil {
		return nil
	}
	if f, ok := h.byName[name]; ok {
		return f
	}
	if len(h.byZone) == 0 {
		return nil
	}
	if f, ok := h.byZone[z]; ok {
		return f
	}
	// A zone-wide hook registered for an enclosing name.
	for n := z; ; {
		i := strings.IndexByte(n, '.')
		if i < 0 || i == len(n)-1 {
			return nil
		}
		n = n[i+1:]
		if f, ok := h.byZone[n]; ok {
			return f
		}
	}
}
