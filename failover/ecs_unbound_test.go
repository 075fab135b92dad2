package failover_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/internal/testunbound"
	"github.com/gslbkit/gslb/provider/memory"
)

// TestGeoBehindSubnetCachingUnbound is the adopter's setup: failover.Geo
// on the embedded zone behind unbound with its subnet cache (it forwards
// each client's subnet and caches each answer for the ECS scope the zone
// returns, RFC 7871 section 7.3). Clients in two regions and one the map
// does not place ask in both orders, through a flat map and a nested one
// (10/8 → us with 10.1/16 → eu inside it): every client must get its own
// answer, whoever asked first.
func TestGeoBehindSubnetCachingUnbound(t *testing.T) {
	testunbound.Require(t)
	us := []string{"198.51.100.1", "198.51.100.2"}
	eu := []string{"198.51.100.11", "198.51.100.12"}
	all := append(slices.Clone(us), eu...)
	slices.Sort(all)
	p := netip.MustParsePrefix
	maps := map[string]failover.GeoMap{
		"flat":   {Prefixes: map[netip.Prefix]string{p("10.1.0.0/16"): "us", p("10.2.0.0/16"): "eu"}},
		"nested": {Prefixes: map[netip.Prefix]string{p("10.0.0.0/8"): "us", p("10.1.0.0/16"): "eu"}},
	}
	// client subnet (as the resolver's clients send it) → the answer it
	// must get; 192.0.2.0/24 is placed by neither map (no opinion: all).
	want := map[string]map[string][]string{
		"flat":   {"10.1.5.0/24": us, "10.2.5.0/24": eu, "192.0.2.0/24": all},
		"nested": {"10.2.3.0/24": us, "10.1.7.0/24": eu, "192.0.2.0/24": all, "10.200.0.0/24": us},
	}
	orders := map[string][]string{
		"flat/unplaced-first":   {"192.0.2.0/24", "10.1.5.0/24", "10.2.5.0/24"},
		"flat/unplaced-last":    {"10.1.5.0/24", "10.2.5.0/24", "192.0.2.0/24"},
		"nested/outer-first":    {"10.2.3.0/24", "10.1.7.0/24", "192.0.2.0/24", "10.200.0.0/24"},
		"nested/inner-first":    {"10.1.7.0/24", "192.0.2.0/24", "10.2.3.0/24", "10.200.0.0/24"},
		"nested/unplaced-first": {"192.0.2.0/24", "10.200.0.0/24", "10.1.7.0/24", "10.2.3.0/24"},
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range orders {
			if !yield(k) {
				return
			}
		}
	})
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			m := maps[strings.Split(name, "/")[0]]
			auth := serveGeoZone(t, m, us, eu)
			resolver := testunbound.Start(t, testunbound.Config{Stubs: map[string]string{"example.test.": auth}, SubnetCache: true, Ready: "ready.example.test."})
			for round := range 2 { // the second round is answered from unbound's cache
				for _, c := range orders[name] {
					got := askWithSubnet(t, resolver, "g.example.test.", netip.MustParsePrefix(c))
					if exp := want[strings.Split(name, "/")[0]][c]; !slices.Equal(got, exp) {
						t.Errorf("round %d, client %s: unbound answered %v, want %v", round, c, got, exp)
					}
				}
			}
		})
	}
}

// serveGeoZone serves example.test. on a loopback UDP port through the
// embedded zone's fast path (RespondUDP), g.example.test. answered by
// failover.Geo over m; it returns the address.
func serveGeoZone(t *testing.T, m failover.GeoMap, us, eu []string) string {
	t.Helper()
	z, err := memory.New(memory.DefaultConfig())
	require.NoError(t, err)
	require.NoError(t, z.AddZone("example.test."))
	tags := map[netip.Addr][]string{}
	var rs []libdns.Record
	for reg, as := range map[string][]string{"us": us, "eu": eu} {
		for _, s := range as {
			a := netip.MustParseAddr(s)
			tags[a] = []string{reg}
			rs = append(rs, libdns.Address{Name: "g", TTL: time.Hour, IP: a})
		}
	}
	rs = append(rs, libdns.Address{Name: "ready", TTL: time.Hour, IP: netip.MustParseAddr("192.0.2.53")})
	_, err = z.AppendRecords(context.Background(), "example.test.", rs)
	require.NoError(t, err)
	loc, err := failover.NewLocator(m)
	require.NoError(t, err)
	z.SetAnswerFunc("g.example.test.", memory.AnswerFunc(failover.Geo(loc, tags)))

	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf, out := make([]byte, 4096), make([]byte, 4096)
		for {
			n, from, err := pc.ReadFrom(buf)
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if err != nil {
				continue
			}
			src, _ := netip.ParseAddr(from.(*net.UDPAddr).IP.String())
			if r := z.RespondUDP(buf[:n], out, src); r != nil {
				_, _ = pc.WriteTo(r, from)
			}
		}
	}()
	t.Cleanup(func() {
		pc.Close()
		wg.Wait()
	})
	return pc.LocalAddr().String()
}

// askWithSubnet asks resolver for name's A records as a client behind
// subnet (an EDNS Client Subnet option, as dig +subnet= sends) and returns
// the addresses, sorted.
func askWithSubnet(t *testing.T, resolver, name string, subnet netip.Prefix) []string {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	m.SetEdns0(1232, false)
	m.IsEdns0().Option = append(m.IsEdns0().Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1,
		SourceNetmask: uint8(subnet.Bits()), Address: subnet.Addr().AsSlice()})
	c := &dns.Client{Timeout: 5 * time.Second}
	r, _, err := c.Exchange(m, resolver)
	require.NoError(t, err, "ask %s as %s", name, subnet)
	require.Equal(t, dns.RcodeSuccess, r.Rcode, "ask %s as %s: %v", name, subnet, r)
	var out []string
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			out = append(out, a.A.String())
		}
	}
	slices.Sort(out)
	return out
}
