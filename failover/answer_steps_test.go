package failover_test

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"testing"

	"github.com/libdns/libdns"
	"pgregory.net/rapid"

	"github.com/gslbkit/gslb/failover"
)

// genAddrRecords draws 1 to 8 distinct address records, IPv4 or IPv6.
func genAddrRecords(t *rapid.T) []libdns.Record {
	n := rapid.IntRange(1, 8).Draw(t, "n")
	var rrs []libdns.Record
	seen := map[netip.Addr]bool{}
	for i := range n {
		var a netip.Addr
		if rapid.Bool().Draw(t, fmt.Sprint("v6", i)) {
			a = genAddr6(t, fmt.Sprint("rr", i))
		} else {
			a = genAddr4(t, fmt.Sprint("rr", i))
		}
		if !seen[a] {
			seen[a] = true
			rrs = append(rrs, libdns.Address{Name: "www", IP: a})
		}
	}
	return rrs
}

// TestPropertySticky: Sticky answers one of the addresses, the same one
// to every client of the scope's network (its length: the configured one,
// at most the client's); when an address goes, only the clients it served
// move, and when it comes back they return to it.
func TestPropertySticky(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v4, v6 := rapid.IntRange(0, 32).Draw(t, "v4Bits"), rapid.IntRange(0, 128).Draw(t, "v6Bits")
		f, err := failover.Sticky(v4, v6)
		if err != nil {
			t.Fatal(err)
		}
		rrs := genAddrRecords(t)
		gone := rapid.IntRange(0, len(rrs)-1).Draw(t, "gone")
		without := slices.Delete(slices.Clone(rrs), gone, gone+1)
		for i := range 8 {
			v6c := rapid.Bool().Draw(t, fmt.Sprint("clientV6", i))
			client := genPrefix(t, fmt.Sprint("client", i), v6c)
			out, scope := f(client, "www.example.", "A", rrs)
			if len(out) != 1 || !slices.Contains(rrs, out[0]) {
				t.Fatalf("%s: answer %v, want one of %v", client, out, rrs)
			}
			want := min(map[bool]int{false: v4, true: v6}[v6c], client.Bits())
			if scope != want {
				t.Fatalf("%s: scope %d, want %d", client, scope, want)
			}
			// Another client of the same length in the scope's network.
			var b netip.Addr
			if v6c {
				b = genAddr6(t, fmt.Sprint("other", i))
			} else {
				b = genAddr4(t, fmt.Sprint("other", i))
			}
			bs, cs := b.AsSlice(), client.Addr().AsSlice()
			for k := range bs {
				for bit := range 8 {
					if k*8+bit < scope {
						m := byte(0x80) >> bit
						bs[k] = bs[k]&^m | cs[k]&m
					}
				}
			}
			b, _ = netip.AddrFromSlice(bs)
			other, _ := b.Prefix(client.Bits())
			if got, _ := f(other, "www.example.", "A", rrs); !slices.Equal(got, out) {
				t.Fatalf("%s and %s share the scope /%d but got %v and %v", client, other, scope, out, got)
			}
			// An address goes: only its clients move.
			if len(without) > 0 {
				after, _ := f(client, "www.example.", "A", without)
				if out[0] != rrs[gone] && !slices.Equal(after, out) {
					t.Fatalf("%s moved from %v to %v when %v went", client, out, after, rrs[gone])
				}
				if out[0] == rrs[gone] && (len(after) != 1 || after[0] == rrs[gone]) {
					t.Fatalf("%s still answered %v after it went", client, after)
				}
			}
			// Order does not matter.
			rev := slices.Clone(rrs)
			slices.Reverse(rev)
			if got, _ := f(client, "www.example.", "A", rev); !slices.Equal(got, out) {
				t.Fatalf("%s: %v, reordered %v", client, out, got)
			}
		}
	})
}

// TestStickySpreads: with four addresses, 4,096 client /24s split about
// evenly (each gets a quarter ± 20 %), and removing one moves only its
// quarter.
func TestStickySpreads(t *testing.T) {
	f, err := failover.Sticky(24, 56)
	if err != nil {
		t.Fatal(err)
	}
	var rrs []libdns.Record
	for i := range 4 {
		rrs = append(rrs, libdns.Address{Name: "www", IP: netip.AddrFrom4([4]byte{192, 0, 2, byte(i + 1)})})
	}
	counts := map[string]int{}
	moved := 0
	for i := range 4096 {
		c := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 0}), 24)
		out, _ := f(c, "", "A", rrs)
		counts[out[0].RR().Data]++
		after, _ := f(c, "", "A", rrs[1:])
		if out[0] != after[0] {
			moved++
			if out[0] != rrs[0] {
				t.Fatalf("%s moved from %v though it stayed", c, out[0])
			}
		}
	}
	for a, n := range counts {
		if n < 1024*8/10 || n > 1024*12/10 {
			t.Errorf("%s: %d of 4,096 networks, want about 1,024", a, n)
		}
	}
	if moved != counts["192.0.2.1"] {
		t.Errorf("%d networks moved, want 192.0.2.1's %d", moved, counts["192.0.2.1"])
	}
}

// TestPropertyFirstN: FirstN answers at most n records, the first of
// those it is handed, at scope 0.
func TestPropertyFirstN(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 10).Draw(t, "n")
		f, err := failover.FirstN(n)
		if err != nil {
			t.Fatal(err)
		}
		rrs := genAddrRecords(t)
		out, scope := f(genPrefix(t, "client", false), "", "A", rrs)
		if scope != 0 {
			t.Fatalf("scope %d, want 0", scope)
		}
		if len(out) == 0 {
			out = rrs // no opinion
		}
		if len(out) > n || !slices.Equal(out, rrs[:len(out)]) || len(out) < min(n, len(rrs)) {
			t.Fatalf("n %d: %v of %v", n, out, rrs)
		}
	})
}

func TestStepsConfig(t *testing.T) {
	for name, err := range map[string]error{
		"v4Bits":   second(failover.Sticky(33, 56)),
		"v6Bits":   second(failover.Sticky(24, -1)),
		"firstN.n": second(failover.FirstN(0)),
		"fence":    second(failover.NetFence(map[netip.Addr][]netip.Prefix{netip.MustParseAddr("192.0.2.1"): {netip.MustParsePrefix("10.1.2.3/8")}})),
	} {
		var fe *failover.FieldError
		if !errors.Is(err, failover.ErrInvalidConfig) || !errors.As(err, &fe) {
			t.Errorf("%s: %v, want a *FieldError wrapping ErrInvalidConfig", name, err)
		}
	}
}

func second(_ failover.AnswerFunc, err error) error { return err }

// TestStepsNoAllocations: Sticky, FirstN, NetFence and a chain of Geo and
// them answer with no allocation per query.
func TestStepsNoAllocations(t *testing.T) {
	sticky, _ := failover.Sticky(24, 56)
	first, _ := failover.FirstN(2)
	loc, err := failover.NewLocator(failover.GeoMap{Prefixes: map[netip.Prefix]string{netip.MustParsePrefix("10.0.0.0/8"): "us"}})
	if err != nil {
		t.Fatal(err)
	}
	var rrs []libdns.Record
	tags := map[netip.Addr][]string{}
	for i := range 6 {
		a := netip.AddrFrom4([4]byte{192, 0, 2, byte(i + 1)})
		tags[a] = []string{"us"}
		rrs = append(rrs, libdns.Address{Name: "www", IP: a})
	}
	fence, err := failover.NetFence(map[netip.Addr][]netip.Prefix{
		netip.MustParseAddr("192.0.2.1"): {netip.MustParsePrefix("10.0.0.0/8")},
		netip.MustParseAddr("192.0.2.4"): {netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("2001:db8::/32")},
	})
	if err != nil {
		t.Fatal(err)
	}
	chain := failover.Chain(failover.Geo(loc, tags), fence, first, sticky)
	clients := []netip.Prefix{netip.MustParsePrefix("10.1.2.0/24"), netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("2001:db8::/56")}
	for name, f := range map[string]failover.AnswerFunc{"sticky": sticky, "firstN": first, "netFence": fence, "chain": chain} {
		i := 0
		if n := testing.AllocsPerRun(200, func() { i++; _, _ = f(clients[i%len(clients)], "www.example.", "A", rrs) }); n != 0 {
			t.Errorf("%s: %v allocations per query", name, n)
		}
	}
}

// TestPropertyNetFence: NetFence answers exactly the addresses the client
// is let in to (in order), no opinion when none, and every client of the
// scope's network (at most the client's prefix) is let in to the same ones.
func TestPropertyNetFence(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rrs := genAddrRecords(t)
		fence := map[netip.Addr][]netip.Prefix{}
		for i, r := range rrs {
			if rapid.IntRange(0, 3).Draw(t, fmt.Sprint("fenced", i)) == 0 {
				continue // unfenced
			}
			ps := []netip.Prefix{}
			for j := range rapid.IntRange(0, 3).Draw(t, fmt.Sprint("nfence", i)) {
				ps = append(ps, genPrefix(t, fmt.Sprint("fence", i, j), rapid.Bool().Draw(t, fmt.Sprint("fv6", i, j))))
			}
			fence[r.(libdns.Address).IP] = ps
		}
		f, err := failover.NetFence(fence)
		if err != nil {
			t.Fatal(err)
		}
		allowed := func(c netip.Prefix) []libdns.Record {
			var out []libdns.Record
			for _, r := range rrs {
				ps, fenced := fence[r.(libdns.Address).IP]
				ok := !fenced
				for _, l := range ps {
					ok = ok || l.Addr().Is4() == c.Addr().Is4() && l.Bits() <= c.Bits() && l.Contains(c.Addr())
				}
				if ok {
					out = append(out, r)
				}
			}
			return out
		}
		v6 := rapid.Bool().Draw(t, "clientV6")
		client := genPrefix(t, "client", v6)
		out, scope := f(client, "www.example.", "A", rrs)
		want := allowed(client)
		if len(want) == 0 && len(out) != 0 || len(want) > 0 && !slices.Equal(out, want) {
			t.Fatalf("%s: %v, want %v (fence %v)", client, out, want, fence)
		}
		if scope < 0 || scope > client.Bits() {
			t.Fatalf("%s: scope %d", client, scope)
		}
		var b netip.Addr
		if v6 {
			b = genAddr6(t, "other")
		} else {
			b = genAddr4(t, "other")
		}
		bs, cs := b.AsSlice(), client.Addr().AsSlice()
		for k := range bs {
			for bit := range 8 {
				if k*8+bit < scope {
					m := byte(0x80) >> bit
					bs[k] = bs[k]&^m | cs[k]&m
				}
			}
		}
		b, _ = netip.AddrFromSlice(bs)
		other, _ := b.Prefix(client.Bits())
		others := []netip.Prefix{other}
		net, _ := client.Addr().Prefix(scope)
		for _, ps := range fence {
			for _, q := range ps {
				if net.Contains(q.Addr()) {
					o, _ := q.Addr().Prefix(client.Bits())
					others = append(others, o)
				}
			}
		}
		for _, o := range others {
			if got := allowed(o); !slices.Equal(got, want) {
				t.Fatalf("%s and %s share the scope /%d but are let in to %v and %v (fence %v)", client, o, scope, want, got, fence)
			}
		}
	})
}
