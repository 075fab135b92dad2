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
	Name  string
	SOA   SOA
	Nodes map[string]*node // owner (fqdn, lower case) → records
	ENTs  map[string]bool  // empty non-terminals: names with no records but with descendants
	Cuts  map[string]bool  // delegation points: names below the apex holding NS records
	Wild  bool             // some owner name starts with the "*" label
	// SerialPolicy is ZoneConfig.SerialPolicy; a zone replaced by Restore
	// or Resume keeps it.
	SerialPolicy SerialPolicy
	// Signer is ZoneConfig.Signer (nil: unsigned); kept like serialPolicy.
	Signer *dnssec.Signer
}

// node holds the records at one owner name, grouped by type.
type node struct {
	Sets map[uint16][]rec
}

func (n *node) Clone() *node {
	c := &node{Sets: make(map[uint16][]rec, len(n.Sets)+1)}
	for t, rs := range n.Sets {
		c.Sets[t] = rs
	}
	return c
}

func (z *zone) Clone() *zone {
	c := *z
	c.Nodes = make(map[string]*node, len(z.Nodes)+1)
	for k, v := range z.Nodes {
		c.Nodes[k] = v
	}
	return &c
}

// SOARR returns the zone's SOA as a wire record.
func (z *zone) SOARR() *dns.SOA {
	return &dns.SOA{
		Hdr: dns.RR_Header{Name: z.Name, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: z.SOA.TTL},
		Ns:  z.SOA.NS, Mbox: z.SOA.Mbox, Serial: z.SOA.Serial,
		Refresh: z.SOA.Refresh, Retry: z.SOA.Retry, Expire: z.SOA.Expire, Minttl: z.SOA.Minimum,
	}
}

// RebuildENTs recomputes what is derived from the set of owner names: the
// empty non-terminals below the apex, the delegation points and whether the
// zone holds wildcards.
func (z *zone) RebuildENTs() {
	ents := make(map[string]bool)
	z.Cuts, z.Wild = nil, false
	for name, nd := range z.Nodes {
		if strings.HasPrefix(name, "*.") {
			z.Wild = true
		}
		if name != z.Name && len(nd.Sets[dns.TypeNS]) > 0 {
			if z.Cuts == nil {
				z.Cuts = make(map[string]bool)
			}
			z.Cuts[name] = true
		}
		for n := name; n != z.Name; {
			i := strings.IndexByte(n, '.')
			if i < 0 || i == len(n)-1 {
				break
			}
			n = n[i+1:]
			if n == z.Name || !dns.IsSubDomain(z.Name, n) {
				break
			}
			if _, ok := z.Nodes[n]; ok {
				continue
			}
			ents[n] = true
		}
	}
	z.ENTs = ents
}

// SortedNames returns the zone's owner names, apex first, then in DNS
// canonical order (RFC 4034 section 6.1).
func (z *zone) SortedNames() []string {
	// Sort by a key computed once per name: splitting names in every
	// comparison made a 10,000-name zone take half a second to list.
	type keyed struct{ key, name string }
	ks := make([]keyed, 0, len(z.Nodes))
	for n := range z.Nodes {
		ks = append(ks, keyed{zonerecord.CanonicalKey(n), n})
	}
	slices.SortFunc(ks, func(a, b keyed) int { return strings.Compare(a.key, b.key) })
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.name
	}
	return names
}

// Records returns every record in the zone: names in canonical order, types
// in SupportedTypes order, Records in insertion order.
func (z *zone) Records() []rec {
	var out []rec
	for _, name := range z.SortedNames() {
		out = append(out, z.Nodes[name].Sorted()...)
	}
	return out
}

func (n *node) Sorted() []rec {
	types := make([]uint16, 0, len(n.Sets))
	for t := range n.Sets {
		types = append(types, t)
	}
	slices.SortFunc(types, func(a, b uint16) int {
		return zonerecord.TypeOrder(dns.TypeToString[a]) - zonerecord.TypeOrder(dns.TypeToString[b])
	})
	var out []rec
	for _, t := range types {
		out = append(out, n.Sets[t]...)
	}
	return out
}

func sortStrings(s []string) { slices.Sort(s) }
