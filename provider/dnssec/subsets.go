package dnssec

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
)

// Reuse is how long a caller may keep serving signatures Sign returned
// (in a reply it caches, say) before asking again: a quarter of
// Config.Refresh, at most an hour. Sign hands out a signature until
// Refresh before its expiration, so one reused that long still has three
// quarters of Refresh left when last served.
func (s *Signer) Reuse() time.Duration { return min(s.cfg.Refresh/4, time.Hour) }

// Subsets keeps the RRSIGs of subsets of one RRset packed in wire form,
// for a server that answers with a subset chosen per query (a weighted or
// geographic choice) and assembles its replies from packed parts: a
// subset seen before costs one copy. A subset is a bit mask over the
// RRset's records (bit i: set[i]), so the RRset has at most 64 records.
// Each RRSIG is packed as an answer record whose owner is a compression
// pointer to offset 12 (the question's name), so the RRset's owner must be
// the name asked. It keeps at most MaxSubsets subsets (more are signed,
// through the Signer's cache, each time) and is safe for concurrent use.
type Subsets struct {
	s    *Signer
	set  []dns.RR
	subs atomic.Pointer[map[uint64]*packed] // replaced whole on each addition
	mu   sync.Mutex                         // serialises additions
}

// MaxSubsets bounds the subsets one Subsets keeps.
const MaxSubsets = 256

type packed struct {
	b     []byte
	n     int
	gen   uint64
	until int64 // Unix seconds
}

// NewSubsets returns the Subsets of set (1 to 64 records of one RRset), or
// nil when set has more than 64 records or none.
func (s *Signer) NewSubsets(set []dns.RR) *Subsets {
	if len(set) == 0 || len(set) > 64 {
		return nil
	}
	return &Subsets{s: s, set: set}
}

// AppendPacked appends the packed RRSIGs of the subset to out and returns
// how many records it appended; ok is false when they cannot be made now
// (ErrOverBudget, an empty subset). Signatures are reused for
// Signer.Reuse and until the keys change.
func (h *Subsets) AppendPacked(out []byte, subset uint64, now time.Time) (_ []byte, n int, ok bool) {
	if m := h.subs.Load(); m != nil {
		if p := (*m)[subset]; p != nil && p.gen == h.s.Generation() && now.Unix() < p.until {
			return append(out, p.b...), p.n, true
		}
	}
	p := h.sign(subset, now)
	if p == nil {
		return out, 0, false
	}
	return append(out, p.b...), p.n, true
}

func (h *Subsets) sign(subset uint64, now time.Time) *packed {
	gen := h.s.Generation()
	var rrset []dns.RR
	for i, rr := range h.set {
		if subset&(1<<uint(i)) != 0 {
			rrset = append(rrset, rr)
		}
	}
	if len(rrset) == 0 {
		return nil
	}
	sigs, err := h.s.Sign(rrset, now)
	if err != nil {
		return nil
	}
	p := &packed{n: len(sigs), gen: gen, until: now.Add(h.s.Reuse()).Unix()}
	var tmp [1024]byte
	for _, sig := range sigs {
		c := *sig
		c.Hdr.Name = "."
		off, err := dns.PackRR(&c, tmp[:], 0, nil, false)
		if err != nil || off < 1 {
			return nil
		}
		p.b = append(p.b, 0xC0, 12)
		p.b = append(p.b, tmp[1:off]...)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	old := h.subs.Load()
	next := map[uint64]*packed{}
	if old != nil {
		if len(*old) >= MaxSubsets {
			return p
		}
		for k, v := range *old {
			next[k] = v
		}
	}
	next[subset] = p
	h.subs.Store(&next)
	return p
}
