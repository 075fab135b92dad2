package answer

import (
	"net/netip"
	"time"

	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// Answer hooks on the fast path. A name whose answer a hook chooses cannot
// reuse one packed reply, but everything in it except the choice stays the
// same until the zone or the hooks change: the header, the question, the OPT
// record and each record the hook can choose, packed as an answer owned by
// the question (its name compressed to a pointer to offset 12, as the
// general path writes it). The fast path keeps those parts, keyed as the
// cached replies are, and per query asks the hook, maps each record it
// returns back to the zone's record by type and data (a subslice of the
// records it was given is recognised by identity, with no comparison) and
// concatenates the chosen parts; the EDNS Client Subnet option is echoed at
// SCOPE PREFIX-LENGTH = min(the hook's scope, SOURCE PREFIX-LENGTH), as the
// general path does (see AnswerFunc). No allocation happens on
// this path, so a hook that allocates nothing (failover.WeightedRandom,
// failover.Geo) answers at the cost of its own decision.
//
// Only the plain case is kept: the queried name holds (or a wildcard
// synthesises) records of the queried type A, AAAA or TXT directly (no
// CNAME, no delegation, no additional section), with a per-name,
// wildcard or zone-wide hook. Signed (a DO query to a signed zone), the
// chosen subset's RRSIGs follow (dnssec.Subsets; a wildcard's shared by
// its names), and for a name a wildcard synthesises the authority
// section with the proof NSEC, taken from the general path's reply and
// renewed with it (signed.go). A returned record the zone does not hold, or a
// reply that would not fit, goes to the general path with the hook's answer
// already in hand (the hook is never asked twice for one query).

// hookedEntry is what the fast path keeps for one hooked question.
type hookedEntry struct {
	p     *Engine // asks the hook (Provider.callHook)
	f     AnswerFunc
	name  string          // the owner name handed to f (lower case, fully qualified)
	typ   string          // "A", "AAAA" or "TXT"
	in    []libdns.Record // the zone's records as handed to f (shared: hooks must not modify it)
	addrs []netip.Addr    // for A and AAAA: in[i]'s address
	data  []string        // for TXT: in[i]'s data
	parts [][]byte        // in[i] packed as an answer record owned by the question
	all   int             // the sum of len(parts)
	head  []byte          // header (ID 0, RD and CD clear, ANCOUNT 0) and question in lower case
	opt   []byte          // the OPT record with no options, or nil without EDNS
	sig   *dnssec.Subsets // a signed zone's DO query: the chosen subsets' RRSIGs (signed.go)
	proof *proof          // and for a name a wildcard synthesises, the authority section (signed.go)
	mark  *signedMark     // set alone (no hook): the entry is a signed zone's packed reply
}

// newHookedEntry builds the entry for the question in key (lower case, wire
// form: name, type, class) from reply, the general path's packed answer to
// the query, when the question is of the plain kind above; nil otherwise.
func newHookedEntry(p *Engine, c *fastCache, key []byte, nameLen int, fq fastQuery, reply []byte) *hookedEntry {
	v := c.v
	if v.hooks == nil || len(key) < nameLen+4 || key[nameLen+2] != 0 || key[nameLen+3] != 1 {
		return nil // class IN only
	}
	qtype := uint16(key[nameLen])<<8 | uint16(key[nameLen+1])
	if qtype != dns.TypeA && qtype != dns.TypeAAAA && qtype != dns.TypeTXT {
		return nil
	}
	name, ok := wireName(key[:nameLen])
	if !ok {
		return nil
	}
	z := v.st.Closest(name)
	if z == nil || z.CutFor(name) != "" {
		return nil
	}
	n, src := z.Nodes[name], name
	if n == nil {
		if name == z.Name || z.ENTs[name] {
			return nil
		}
		w := z.WildcardFor(name)
		if w == "" {
			return nil
		}
		n, src = z.Nodes[w], w
	}
	if n == nil {
		return nil
	}
	set := n.Get(qtype)
	f := v.hooks.hookForSynth(name, src, z.Name)
	if len(set) == 0 || f == nil {
		return nil
	}
	var sig *dnssec.Subsets
	signed := signedDO(z, key)
	if signed {
		if sig = c.hookSigs(z.Signer, set, src, qtype, src != name); sig == nil {
			return nil // the general path signs the chosen records
		}
	}
	// The reply's fixed parts: NOERROR with AA, no authority records but
	// a signed wildcard answer's proof, the OPT (if any) last.
	qEnd := fq.nameEnd + 4
	if len(reply) < qEnd || reply[3]&0x0F != 0 || reply[2]&0x06 != 0x04 ||
		reply[10] != 0 || reply[11] > 1 {
		return nil
	}
	var pr *proof
	if ns := int(reply[8])<<8 | int(reply[9]); ns != 0 {
		if !signed || src == name {
			return nil
		}
		off := skipRRs(reply, qEnd, int(reply[6])<<8|int(reply[7]))
		if off < 0 {
			return nil
		}
		if pr = newProof(reply, off, ns, fq.nameEnd, z); pr == nil {
			return nil
		}
	}
	h := &hookedEntry{p: p, f: f, name: name, typ: dns.TypeToString[qtype], in: hookInput(z.Name, set), sig: sig, proof: pr}
	h.head = append([]byte(nil), reply[:qEnd]...)
	h.head[0], h.head[1] = 0, 0
	h.head[2] &^= 0x01
	h.head[3] &^= 0x10
	h.head[6], h.head[7] = 0, 0
	copy(h.head[12:], key[:nameLen])
	if reply[11] == 1 {
		end := len(reply) - fq.ecsLen
		if end < qEnd+11 || reply[end-11] != 0 || reply[end-10] != 0 || reply[end-9] != 41 ||
			int(reply[end-2])<<8|int(reply[end-1]) != fq.ecsLen {
			return nil
		}
		h.opt = append([]byte(nil), reply[end-11:end]...)
		h.opt[9], h.opt[10] = 0, 0
	}
	var tmp [512]byte
	for _, r := range set {
		rr := dns.Copy(r.Wire)
		rr.Header().Name = "."
		off, err := dns.PackRR(rr, tmp[:], 0, nil, false)
		if err != nil || off < 1 {
			return nil
		}
		part := make([]byte, 0, off+1)
		part = append(part, 0xC0, 12)
		part = append(part, tmp[1:off]...)
		h.parts = append(h.parts, part)
		h.all += len(part)
		switch qtype {
		case dns.TypeTXT:
			h.data = append(h.data, r.Data())
		default:
			a, err := netip.ParseAddr(r.Data())
			if err != nil {
				return nil
			}
			h.addrs = append(h.addrs, a)
		}
	}
	return h
}

// size is what the fast cache counts for h (see fastCacheBytes): at least
// fastHookedBytes, more when its parts (and a wildcard's proof) are larger,
// so names a wildcard synthesises, each with an entry, stay within the
// cache's bound whatever the wildcard's RRset.
func (h *hookedEntry) size() int {
	n := len(h.head) + len(h.opt) + h.all + len(h.in)*(32+24) + len(h.parts)*24 + len(h.addrs)*24 + 256
	for _, d := range h.data {
		n += len(d) + 16
	}
	if h.proof != nil {
		n += len(h.proof.b) + len(h.proof.ptrs)*2 + 64
	}
	return max(n, fastHookedBytes)
}

// wireName turns a lower-case wire-form name (the cache key's) into
// presentation form with the escapes miekg/dns uses, so it matches the
// zone's keys.
func wireName(b []byte) (string, bool) {
	name, _, err := dns.UnpackDomainName(b, 0)
	return name, err == nil
}

// unheld marks a returned record the entry cannot map (the zone does not
// hold it, or its kind is not one the fast path compares).
const unheld = -2

// index maps a record a hook returned to the position of the zone's
// record it names: -1 for a record the general path drops (nil, or of
// another type), unheld for one it must build.
func (h *hookedEntry) index(r libdns.Record) int {
	switch r := r.(type) {
	case nil:
		return -1
	case libdns.Address:
		if h.typ == "TXT" || r.IP.Is6() != (h.typ == "AAAA") {
			return -1
		}
		for i, a := range h.addrs {
			if a == r.IP {
				return i
			}
		}
	case libdns.TXT:
		if h.typ != "TXT" {
			return -1
		}
		for i, d := range h.data {
			if d == r.Text {
				return i
			}
		}
	}
	return unheld
}

// respond answers query from the entry into buf. When it cannot (a record
// to build, a reply too large for the limit), ok is false and got and
// scope are the hook's answer, for the general path.
func (h *hookedEntry) respond(query, buf []byte, fq fastQuery, src netip.Addr) (out []byte, got []libdns.Record, scope int, ok bool) {
	a := h.p.callHook(h.f, fastClient(query, fq, src), h.name, h.typ, h.in)
	got, scope = a.rrs, a.scope
	out = append(buf[:0], h.head...)
	count := 0
	if len(got) > 0 {
		base := -1
		if len(got) <= len(h.in) {
			for j := range len(h.in) - len(got) + 1 {
				if &h.in[j] == &got[0] {
					base = j
					break
				}
			}
		}
		for k, r := range got {
			j := base + k
			if base < 0 {
				if j = h.index(r); j == unheld {
					return nil, got, scope, false
				}
				if j < 0 {
					continue
				}
			}
			out = append(out, h.parts[j]...)
			count++
		}
	}
	if count == 0 {
		for _, p := range h.parts {
			out = append(out, p...)
		}
		count = len(h.parts)
	}
	if h.sig != nil {
		var n int
		if out, n, ok = h.sig.AppendPacked(out, h.chosen(got), time.Now()); !ok {
			return nil, got, scope, false
		}
		count += n
	}
	if h.proof != nil {
		if !h.proof.mark.fresh() {
			return nil, got, scope, false // the general path answers; respondFast renews the entry
		}
		if out, ok = h.proof.appendTo(out); !ok {
			return nil, got, scope, false
		}
	}
	if count > 0xFFFF || len(out)+len(h.opt)+fq.ecsLen > fq.limit {
		return nil, got, scope, false
	}
	out[0], out[1] = query[0], query[1]
	out[2] |= query[2] & 0x01 // RD
	out[3] |= query[3] & 0x10 // CD
	out[6], out[7] = byte(count>>8), byte(count)
	copy(out[12:fq.nameEnd], query[12:fq.nameEnd])
	if h.opt != nil {
		out = append(out, h.opt...)
		if fq.ecsLen > 0 {
			out[len(out)-2], out[len(out)-1] = byte(fq.ecsLen>>8), byte(fq.ecsLen)
			o := len(out)
			out = append(out, query[fq.ecs:fq.ecs+fq.ecsLen]...)
			if src := int(out[o+6]); scope > 0 {
				out[o+7] = byte(min(scope, src)) // SCOPE PREFIX-LENGTH, at most SOURCE PREFIX-LENGTH
			}
		}
	}
	return out, nil, scope, true
}

// fastClient is the client prefix hooks see (clientPrefix's result), from
// the query's EDNS Client Subnet option in the form parseFast accepted, else
// from src.
func fastClient(query []byte, fq fastQuery, src netip.Addr) netip.Prefix {
	if fq.ecsLen > 0 {
		d := query[fq.ecs+4 : fq.ecs+fq.ecsLen]
		bits := int(d[2])
		var a [16]byte
		copy(a[:], d[4:])
		if d[1] == 1 {
			return netip.PrefixFrom(netip.AddrFrom4([4]byte(a[:4])), bits)
		}
		return netip.PrefixFrom(netip.AddrFrom16(a), bits)
	}
	if !src.IsValid() {
		return netip.Prefix{}
	}
	src = src.Unmap()
	return netip.PrefixFrom(src, src.BitLen())
}
