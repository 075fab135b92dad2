package memory

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/libdns/libdns"
)

// AnswerFunc chooses the answer for one query. client is the EDNS Client Subnet prefix
// when present, else the query's source address as a /32 or /128; name is the queried
// owner name, lower case, fully qualified; qtype is "A", "AAAA", ...; rrs are the records
// the zone holds at that name and type. It returns the records to answer with (a subset
// or reordering); a nil or empty return means "no opinion": answer with rrs.
// It must be safe for concurrent use and must not retain or modify rrs:
// the fast path hands the same rrs slice to every query for a name until
// the zone changes, so a hook that sorts or rotates rrs in place corrupts
// other queries' answers (return a new slice or a subslice instead).
//
// The records in rrs are the libdns structs for their type (libdns.Address
// for A and AAAA, libdns.TXT, ...), named relative to the zone as GetRecords
// returns them. A returned record is matched to the zone's records by type
// and data (keeping the zone's TTL); one the zone does not hold is answered
// as returned, with the TTL it carries; records of another type are dropped.
// The hook runs for the RRset that ends a query, including at the end of a
// CNAME chain (the name passed is then the chain's last owner), and never for
// ANY queries, for the SOA and NS records at the apex, or for referrals. For
// an answer synthesised from a wildcard (RFC 4592) name is the queried name
// and rrs are the wildcard's records (named "*.…"); the hook registered for
// the queried name is used, else the one for the wildcard's name, else the
// zone's.
//
// scope is how many leading bits of client the answer depends on (its "no
// opinion" included): every client whose prefix shares them would be
// answered alike. A query with an EDNS Client Subnet option is answered
// with SCOPE PREFIX-LENGTH = min(scope, SOURCE PREFIX-LENGTH), never wider
// than asked; RFC 7871 section 7.2.1 defines it as the leftmost bits of
// the address the response covers, and a caching resolver serves the
// answer to every client inside that network. So a hook that chooses by
// client must not report less than its decision needs (return the client
// prefix's length, its Bits, when unsure); 0 says the answer suits every
// client. A
// negative scope counts as 0.
type AnswerFunc func(client netip.Prefix, name, qtype string, rrs []libdns.Record) (answer []libdns.Record, scope int)

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
func (p *Provider) callHook(f AnswerFunc, client netip.Prefix, name, qtype string, rrs []libdns.Record) (a hookAnswer) {
	defer p.recoverHook(&a, name, qtype) // a method, not a closure: nothing to allocate per query
	a.rrs, a.scope = f(client, name, qtype, rrs)
	return a
}

// recoverHook is callHook's deferred half.
func (p *Provider) recoverHook(a *hookAnswer, name, qtype string) {
	if v := recover(); v != nil {
		p.hookPanics.Add(1)
		msg := fmt.Sprintf("answer hook for %s %s panicked: %v", name, qtype, v)
		p.lastHookPanic.Store(&msg)
		*a = hookAnswer{scope: 128}
	}
}

// HookPanics returns how many times an answer hook panicked, and the
// latest panic as text ("" when none did). A hook that panics is taken to
// have no opinion: the query is answered with every record the zone holds
// for it, so a bug in a hook degrades answers instead of stopping the
// server; watch this count to find such bugs.
func (p *Provider) HookPanics() (n uint64, last string) {
	if m := p.lastHookPanic.Load(); m != nil {
		last = *m
	}
	return p.hookPanics.Load(), last
}

// hookTable is the immutable set of answer hooks.
type hookTable struct {
	byName map[string]AnswerFunc // owner name → hook
	byZone map[string]AnswerFunc // zone name → hook for every name in it
	gen    uint64                // counts the tables set (see ZoneHooked)
}

// SetAnswerFunc registers f as the answer hook for the owner name fqdn (any
// case, trailing dot optional); nil removes it. A per-name hook takes
// precedence over a zone-wide one. The name need not hold records yet.
// Queries already being answered may still use the previous hook.
func (p *Provider) SetAnswerFunc(fqdn string, f AnswerFunc) {
	p.setHook(zoneKey(fqdn), f, false)
}

// SetZoneAnswerFunc registers f as the answer hook for every name in the
// zone (and in zones below it that have no hook of their own) that has no
// per-name hook; nil removes it.
func (p *Provider) SetZoneAnswerFunc(zoneName string, f AnswerFunc) {
	p.setHook(zoneKey(zoneName), f, true)
}

func (p *Provider) setHook(key string, f AnswerFunc, zoneWide bool) {
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
