package failover_test

import (
	"math/rand/v2"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/failover"
)

func TestStrategySelect(t *testing.T) {
	weighted := func(ip string, h failover.Health, w int) failover.Endpoint {
		e := ep(ip, h)
		e.Weight = w
		return e
	}
	cases := []struct {
		name string
		s    failover.Strategy
		eps  []failover.Endpoint
		want []string
	}{
		{"all healthy serves passing and warning", failover.Strategy{},
			[]failover.Endpoint{ep("192.0.2.1", failover.Passing), ep("192.0.2.2", failover.Warning), ep("192.0.2.3", failover.Critical), ep("192.0.2.4", failover.Recovery), ep("192.0.2.5", failover.HealthUnknown)},
			[]string{"192.0.2.1", "192.0.2.2"}},
		{"all healthy, none served", failover.Strategy{},
			[]failover.Endpoint{ep("192.0.2.3", failover.Critical)}, nil},
		{"priority: primary region first", failover.Strategy{Kind: failover.Priority, Order: []string{"eu", "us"}},
			[]failover.Endpoint{ep("192.0.2.1", failover.Passing, "us"), ep("192.0.2.2", failover.Passing, "eu"), ep("2001:db8::2", failover.Passing, "eu")},
			[]string{"192.0.2.2", "2001:db8::2"}},
		{"priority: next region when the primary is down", failover.Strategy{Kind: failover.Priority, Order: []string{"eu", "us"}},
			[]failover.Endpoint{ep("192.0.2.1", failover.Passing, "us"), ep("192.0.2.2", failover.Critical, "eu")},
			[]string{"192.0.2.1"}},
		{"priority: unlisted regions by name after listed ones", failover.Strategy{Kind: failover.Priority, Order: []string{"eu"}},
			[]failover.Endpoint{ep("192.0.2.1", failover.Passing, "us"), ep("192.0.2.3", failover.Passing), ep("192.0.2.2", failover.Passing, "ap"), ep("192.0.2.4", failover.Critical, "eu")},
			[]string{"192.0.2.2"}},
		{"priority: untagged last", failover.Strategy{Kind: failover.Priority},
			[]failover.Endpoint{ep("192.0.2.3", failover.Passing), ep("192.0.2.1", failover.Passing, "zz")},
			[]string{"192.0.2.1"}},
		{"priority: home region is the first tag", failover.Strategy{Kind: failover.Priority, Order: []string{"eu", "us"}},
			[]failover.Endpoint{ep("192.0.2.1", failover.Passing, "us", "eu"), ep("192.0.2.2", failover.Passing, "eu", "us")},
			[]string{"192.0.2.2"}},
		{"weighted: weight 0 left out while others are healthy", failover.Strategy{Kind: failover.Weighted},
			[]failover.Endpoint{weighted("192.0.2.1", failover.Passing, 0), weighted("192.0.2.2", failover.Passing, 10), weighted("192.0.2.3", failover.Warning, 1)},
			[]string{"192.0.2.2", "192.0.2.3"}},
		{"weighted: weight 0 used when nothing else is healthy", failover.Strategy{Kind: failover.Weighted},
			[]failover.Endpoint{weighted("192.0.2.1", failover.Passing, 0), weighted("192.0.2.2", failover.Critical, 10)},
			[]string{"192.0.2.1"}},
		{"weighted: nothing healthy", failover.Strategy{Kind: failover.Weighted},
			[]failover.Endpoint{weighted("192.0.2.1", failover.Critical, 0), weighted("192.0.2.2", failover.Critical, 10)}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range tc.s.Select(tc.eps) {
				got = append(got, e.IP.String())
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

var anyClient = netip.MustParsePrefix("203.0.113.7/32")

func TestRoundRobin(t *testing.T) {
	rr := failover.RoundRobin()
	in := addrRecs("192.0.2.1", "192.0.2.2", "192.0.2.3")
	keep := datas(in)
	var firsts []string
	for i := 0; i < 4; i++ {
		out := rrsOf(rr(anyClient, "www.example.com.", "A", in))
		require.Len(t, out, 3)
		assert.ElementsMatch(t, keep, datas(out))
		firsts = append(firsts, out[0].RR().Data)
	}
	assert.Equal(t, []string{"192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.1"}, firsts)
	assert.Equal(t, keep, datas(in), "rrs not modified")
	assert.Nil(t, rrsOf(rr(anyClient, "www.example.com.", "A", in[:1])), "one record: no opinion")
	assert.Nil(t, rrsOf(rr(anyClient, "www.example.com.", "A", nil)))
}

func TestWeightedRandom(t *testing.T) {
	w := map[netip.Addr]int{
		netip.MustParseAddr("192.0.2.1"): 3,
		netip.MustParseAddr("192.0.2.2"): 1,
		netip.MustParseAddr("192.0.2.3"): 0,
	}
	f := failover.WeightedRandom(w, rand.NewPCG(7, 11))
	in := addrRecs("192.0.2.1", "192.0.2.2", "192.0.2.3")
	counts := map[string]int{}
	for i := 0; i < 4000; i++ {
		out := rrsOf(f(anyClient, "www.example.com.", "A", in))
		require.Len(t, out, 1)
		counts[out[0].RR().Data]++
	}
	assert.Zero(t, counts["192.0.2.3"], "weight 0 never chosen while others are present")
	assert.InDelta(t, 3000, counts["192.0.2.1"], 200)
	assert.InDelta(t, 1000, counts["192.0.2.2"], 200)

	// Only weight-0 (or unknown) addresses left: chosen uniformly.
	counts = map[string]int{}
	for i := 0; i < 2000; i++ {
		out := rrsOf(f(anyClient, "www.example.com.", "A", addrRecs("192.0.2.3", "192.0.2.9")))
		counts[out[0].RR().Data]++
	}
	assert.InDelta(t, 1000, counts["192.0.2.3"], 150)
	assert.InDelta(t, 1000, counts["192.0.2.9"], 150)

	// Same seed, same choices.
	g1, g2 := failover.WeightedRandom(w, rand.NewPCG(1, 2)), failover.WeightedRandom(w, rand.NewPCG(1, 2))
	for i := 0; i < 50; i++ {
		assert.Equal(t, datas(rrsOf(g1(anyClient, "", "A", in))), datas(rrsOf(g2(anyClient, "", "A", in))))
	}
	// Non-address records: no opinion.
	assert.Nil(t, rrsOf(f(anyClient, "", "CNAME", []libdns.Record{libdns.CNAME{Name: "www", Target: "x."}})))
	// A libdns.RR of type A counts as an address.
	out := rrsOf(f(anyClient, "", "A", []libdns.Record{libdns.RR{Name: "www", Type: "A", Data: "192.0.2.2"}}))
	assert.Equal(t, []string{"192.0.2.2"}, datas(out))
	// The global source works too.
	assert.Len(t, rrsOf(failover.WeightedRandom(nil, nil)(anyClient, "", "A", in)), 1)
}

func TestAnswerFuncsConcurrent(t *testing.T) {
	loc, err := failover.NewLocator(failover.GeoMap{Default: "eu"})
	require.NoError(t, err)
	in := addrRecs("192.0.2.1", "192.0.2.2")
	fs := []failover.AnswerFunc{
		failover.RoundRobin(),
		failover.WeightedRandom(map[netip.Addr]int{netip.MustParseAddr("192.0.2.1"): 1}, rand.NewPCG(1, 1)),
		failover.Geo(loc, map[netip.Addr][]string{netip.MustParseAddr("192.0.2.2"): {"eu"}}),
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Go(func() {
			for j := 0; j < 200; j++ {
				for _, f := range fs {
					assert.NotEmpty(t, rrsOf(f(anyClient, "www.example.com.", "A", in)))
				}
			}
		})
	}
	wg.Wait()
}

func TestStrategyFunc(t *testing.T) {
	eps := []failover.Endpoint{
		{IP: netip.MustParseAddr("192.0.2.1"), Health: failover.Passing},
		{IP: netip.MustParseAddr("192.0.2.2"), Health: failover.Critical},
		{IP: netip.MustParseAddr("192.0.2.3"), Health: failover.Warning},
	}
	// The user's function may only pick among served endpoints: it asks
	// for a critical one and an unknown address too, which are dropped.
	s := failover.Strategy{Func: func(served []failover.Endpoint) []failover.Endpoint {
		return []failover.Endpoint{served[len(served)-1], eps[1], {IP: netip.MustParseAddr("198.51.100.9")}}
	}}
	require.NoError(t, s.Validate())
	got := s.Select(eps)
	require.Len(t, got, 1)
	require.Equal(t, "192.0.2.3", got[0].IP.String())

	bad := failover.Strategy{Kind: failover.Priority, Func: s.Func}
	require.ErrorIs(t, bad.Validate(), failover.ErrInvalidConfig)

	cfg := failover.DefaultRecordConfig()
	cfg.Strategy = s
	p, err := failover.NewRecordPolicy(cfg)
	require.NoError(t, err)
	dec, err := p.Decide(time.Time{}, failover.Record{Name: "api.example.com", Zone: "example.com", TTL: time.Minute, Endpoints: eps})
	require.NoError(t, err)
	pool, ok := dec.Desired.Lookup("", "api.pool.example.com", "A")
	require.True(t, ok)
	require.Equal(t, []string{"192.0.2.3"}, pool.Values())
}
