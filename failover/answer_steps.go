package failover

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/libdns/libdns"
)

// Sticky returns an AnswerFunc that answers one address record per client
// network, the same one for as long as it is among rrs: the client's
// network (its first v4Bits bits for IPv4, v6Bits for IPv6, or its whole
// prefix when shorter) ranks every address by a hash of the pair and the
// highest wins (rendezvous hashing). When an address goes, only the
// networks it served move, spread over the others; when it comes back
// they return to it, and no other network moves. Its scope is the
// network's length (at most the client's): every client in that network
// gets the same address, so a caching resolver may share it among them.
// Without an address record, or without a client: no opinion, scope 0. The
// answer is a one-record subslice of rrs (no allocation per query).
// v4Bits must be 0 to 32 and v6Bits 0 to 128 (0: one address for every
// client); e.g. Sticky(24, 56) keeps each /24 and /56 on one address.
func Sticky(v4Bits, v6Bits int) (AnswerFunc, error) {
	if v4Bits < 0 || v4Bits > 32 {
		return nil, configErr("sticky.v4Bits", v4Bits, "0 to 32")
	}
	if v6Bits < 0 || v6Bits > 128 {
		return nil, configErr("sticky.v6Bits", v6Bits, "0 to 128")
	}
	return func(client netip.Prefix, _, _ string, rrs []libdns.Record) ([]libdns.Record, int) {
		if !client.IsValid() {
			return nil, 0
		}
		a, bits, extra := client.Addr().WithZone(""), client.Bits(), 0
		if a.Is4In6() {
			a, bits, extra = a.Unmap(), max(bits-96, 0), 96
		}
		n := v6Bits
		if a.Is4() {
			n = v4Bits
		}
		n = min(n, bits)
		p, _ := a.Prefix(n)
		k := u128Of(p.Addr())
		seed := mix64(mix64(k.hi^uint64(n)) ^ k.lo)
		best, bestScore, bestAddr := -1, uint64(0), netip.Addr{}
		for i, r := range rrs {
			ad, ok := addrOf(r)
			if !ok {
				continue
			}
			x := u128Of(ad)
			score := mix64(seed ^ mix64(x.hi^mix64(x.lo)))
			if best < 0 || score > bestScore || score == bestScore && ad.Less(bestAddr) {
				best, bestScore, bestAddr = i, score, ad
			}
		}
		if best < 0 {
			return nil, 0
		}
		return rrs[best : best+1 : best+1], n + extra
	}, nil
}

// mix64 is SplitMix64's finaliser: every input bit flips each output bit
// with probability about one half.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// FirstN returns an AnswerFunc that answers at most n records: the first n
// of rrs (of the previous step's answer in a Chain) when there are more,
// else no opinion. It does not look at the client (scope 0); put it after
// the steps that choose and order, e.g. Chain(geo, RoundRobin(),
// FirstN(2)) answers two of the nearest region's addresses, rotating. The
// answer is a subslice of rrs (no allocation per query). n must be at
// least 1.
func FirstN(n int) (AnswerFunc, error) {
	if n < 1 {
		return nil, configErr("firstN.n", n, "at least 1")
	}
	return func(_ netip.Prefix, _, _ string, rrs []libdns.Record) ([]libdns.Record, int) {
		if len(rrs) <= n {
			return nil, 0
		}
		return rrs[:n:n], 0
	}, nil
}

// NetFence returns an AnswerFunc that answers an address only to the
// clients its fence lets in: fence maps an address to the client prefixes
// that may be answered it (IPv4 or IPv6, host bits clear); an address
// absent from fence is answered to every client. A client is let in when
// one of the prefixes contains its whole prefix. E.g. an internal address
// fenced to 10.0.0.0/8 is never answered to clients outside it. When the
// client may see none of the addresses among rrs, it has no opinion and
// every address is answered (an AnswerFunc cannot answer nothing): keep an
// unfenced address among the records where that must not happen. Its scope is that of the fence's
// prefixes as a Locator's (see LocateScope): every client of the scope's
// network is let in by the same prefixes. The answer is shared as
// RegionFilter's is (no allocation per query). fence is copied; a bad
// prefix is an error naming it.
func NetFence(fence map[netip.Addr][]netip.Prefix) (AnswerFunc, error) {
	const outside = "\x00outside" // the region of clients no fence prefix holds
	g := GeoMap{Prefixes: map[netip.Prefix]string{}, Default: outside}
	addrs := make([]netip.Addr, 0, len(fence))
	for a := range fence {
		addrs = append(addrs, a)
	}
	slices.SortFunc(addrs, netip.Addr.Compare)
	for _, a := range addrs {
		for i, p := range fence[a] {
			if !p.IsValid() || p.Masked() != p || p.Addr().Is4In6() || p.Addr().Zone() != "" {
				return nil, configErr(fmt.Sprintf("fence[%s][%d]", a, i), p, "a valid prefix with host bits clear, IPv4 in its own form (10.0.0.0/8)")
			}
			g.Prefixes[p] = "\x00" + p.String()
		}
	}
	loc, err := NewLocator(g)
	if err != nil {
		return nil, err
	}
	// An address is tagged with the region of every fence prefix inside
	// one of its own (a client whose longest match is such a prefix is
	// inside one of the address's); an unfenced one is absent, so tagged
	// with every region.
	tags := map[netip.Addr][]string{}
	for _, a := range addrs {
		ts := []string{} // not nil: fenced, perhaps to no client
		for _, q := range sortedPrefixes(g.Prefixes) {
			for _, l := range fence[a] {
				if l.Bits() <= q.Bits() && l.Contains(q.Addr()) {
					ts = append(ts, g.Prefixes[q])
					break
				}
			}
		}
		tags[a.Unmap()] = append(tags[a.Unmap()], ts...)
		if tags[a.Unmap()] == nil {
			tags[a.Unmap()] = ts
		}
	}
	return geoTagged(loc, tags, true, false), nil
}
