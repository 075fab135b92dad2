package memory

import (
	"slices"
	"strings"
	"time"

	"github.com/gslbkit/gslb/internal/zonerecord"
	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/miekg/dns"
)

// SOA is a zone's start-of-authority record. Times are in seconds, as on the
// wire. The zone bumps Serial by one on every call that changes it (RFC 1982
// arithmetic: after 4294967295 comes 1).
type SOA struct {
	// NS is the primary name server (MNAME), fully qualified.
	NS string `json:"ns"`
	// Mbox is the responsible mailbox (RNAME), fully qualified.
	Mbox string `json:"mbox"`
	// Serial is the zone's serial number.
	Serial uint32 `json:"serial"`
	// Refresh, Retry and Expire are the secondary-server timers, in seconds.
	Refresh uint32 `json:"refresh"`
	Retry   uint32 `json:"retry"`
	Expire  uint32 `json:"expire"`
	// Minimum is the negative-caching TTL in seconds (RFC 2308).
	Minimum uint32 `json:"minimum"`
	// TTL is the SOA record's own TTL in seconds.
	TTL uint32 `json:"ttl"`
}

// qualify returns name relative to zone unless it ends with a dot, lower case.
func qualify(name, zone string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	if strings.HasSuffix(name, ".") {
		return name
	}
	if zone == "." {
		return name + "."
	}
	return name + "." + zone
}

func secs(d time.Duration) uint32 { s, _ := zonerecord.TTL(d); return s }

// zone is one immutable version of a zone. Writers build a new zone that
// shares unchanged nodes with the old one.
type zone struct {
	name  string
	soa   SOA
	nodes map[string]*node // owner (fqdn, lower case) → records
	ents  map[string]bool  // empty non-terminals: names with no records but with descendants
	cuts  map[string]bool  // delegation points: names below the apex holding NS records
	wild  bool             // some owner name starts with the "*" label
	// serialPolicy is ZoneConfig.SerialPolicy; a zone replaced by Restore
	// or Resume keeps it.
	serialPolicy SerialPolicy
	// signer is ZoneConfig.Signer (nil: unsigned); kept like serialPolicy.
	signer *dnssec.Signer
}

// node holds the records at one owner name, grouped by type.
type node struct {
	sets map[uint16][]rec
}

func (n *node) clone() *node {
	c := &node{sets: make(map[uint16][]rec, len(n.sets)+1)}
	for t, rs := range n.sets {
		c.sets[t] = rs
	}
	return c
}

func (z *zone) clone() *zone {
	c := *z
	c.nodes = make(map[string]*node, len(z.nodes)+1)
	for k, v := range z.nodes {
		c.nodes[k] = v
	}
	return &c
}

// soaRR returns the zone's SOA as a wire record.
func (z *zone) soaRR() *dns.SOA {
	return &dns.SOA{
		Hdr: dns.RR_Header{Name: z.name, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: z.soa.TTL},
		Ns:  z.soa.NS, Mbox: z.soa.Mbox, Serial: z.soa.Serial,
		Refresh: z.soa.Refresh, Retry: z.soa.Retry, Expire: z.soa.Expire, Minttl: z.soa.Minimum,
	}
}

// rebuildENTs recomputes what is derived from the set of owner names: the
// empty non-terminals below the apex, the delegation points and whether the
// zone holds wildcards.
func (z *zone) rebuildENTs() {
	ents := make(map[string]bool)
	z.cuts, z.wild = nil, false
	for name, nd := range z.nodes {
		if strings.HasPrefix(name, "*.") {
			z.wild = true
		}
		if name != z.name && len(nd.sets[dns.TypeNS]) > 0 {
			if z.cuts == nil {
				z.cuts = make(map[string]bool)
			}
			z.cuts[name] = true
		}
		for n := name; n != z.name; {
			i := strings.IndexByte(n, '.')
			if i < 0 || i == len(n)-1 {
				break
			}
			n = n[i+1:]
			if n == z.name || !dns.IsSubDomain(z.name, n) {
				break
			}
			if _, ok := z.nodes[n]; ok {
				continue
			}
			ents[n] = true
		}
	}
	z.ents = ents
}

// sortedNames returns the zone's owner names, apex first, then in DNS
// canonical order (RFC 4034 section 6.1).
func (z *zone) sortedNames() []string {
	// Sort by a key computed once per name: splitting names in every
	// comparison made a 10,000-name zone take half a second to list.
	type keyed struct{ key, name string }
	ks := make([]keyed, 0, len(z.nodes))
	for n := range z.nodes {
		ks = append(ks, keyed{zonerecord.CanonicalKey(n), n})
	}
	slices.SortFunc(ks, func(a, b keyed) int { return strings.Compare(a.key, b.key) })
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.name
	}
	return names
}

// records returns every record in the zone: names in canonical order, types
// in SupportedTypes order, records in insertion order.
func (z *zone) records() []rec {
	var out []rec
	for _, name := range z.sortedNames() {
		out = append(out, z.nodes[name].sorted()...)
	}
	return out
}

func (n *node) sorted() []rec {
	types := make([]uint16, 0, len(n.sets))
	for t := range n.sets {
		types = append(types, t)
	}
	slices.SortFunc(types, func(a, b uint16) int {
		return zonerecord.TypeOrder(dns.TypeToString[a]) - zonerecord.TypeOrder(dns.TypeToString[b])
	})
	var out []rec
	for _, t := range types {
		out = append(out, n.sets[t]...)
	}
	return out
}

func sortStrings(s []string) { slices.Sort(s) }
