package failover_test

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/failover"
)

// explainFixture: app.example.test. has us's two addresses and eu's two;
// 10.0.0.0/16 is eu, 10.1.0.0/16 ap (no addresses: prefers eu), the
// default us.
func explainFixture(t testing.TB) (*failover.Locator, map[netip.Addr][]string, []libdns.Record) {
	loc, err := failover.NewLocator(failover.GeoMap{
		Prefixes: map[netip.Prefix]string{
			netip.MustParsePrefix("10.0.0.0/16"): "eu",
			netip.MustParsePrefix("10.1.0.0/16"): "ap",
		},
		Preferences: map[string][]string{"ap": {"eu", "us"}},
		Default:     "us",
	})
	if err != nil {
		t.Fatal(err)
	}
	tags := map[netip.Addr][]string{}
	var rrs []libdns.Record
	for _, s := range []string{"198.51.100.1 us", "198.51.100.2 us", "198.51.100.11 eu", "198.51.100.12 eu"} {
		var ip, reg string
		fmt.Sscan(s, &ip, &reg)
		a := netip.MustParseAddr(ip)
		tags[a] = []string{reg}
		rrs = append(rrs, libdns.Address{Name: "app", TTL: 30 * time.Second, IP: a})
	}
	return loc, tags, rrs
}

// Explain tells why a client gets its answer: each step with what it kept
// and dropped, the answer and the ECS scope the server sends.
func ExampleExplain() {
	loc, _ := failover.NewLocator(failover.GeoMap{
		Prefixes:    map[netip.Prefix]string{netip.MustParsePrefix("10.1.0.0/16"): "ap", netip.MustParsePrefix("10.0.0.0/16"): "eu"},
		Preferences: map[string][]string{"ap": {"eu", "us"}},
		Default:     "us",
	})
	tags := map[netip.Addr][]string{}
	var rrs []libdns.Record
	for i, reg := range []string{"us", "us", "eu", "eu"} {
		a := netip.AddrFrom4([4]byte{198, 51, 100, byte(1 + i)})
		tags[a] = []string{reg}
		rrs = append(rrs, libdns.Address{Name: "app", TTL: 30 * time.Second, IP: a})
	}
	first, _ := failover.FirstN(1)
	steps := []failover.Step{failover.GeoStep(loc, tags), {Name: "firstN 1", Answer: first}}
	// The query path: StepChain(steps...) is the zone's answer hook.
	hook := failover.StepChain(steps...)
	_, scope := hook(netip.MustParsePrefix("10.1.7.0/24"), "app.example.test.", "A", rrs)
	fmt.Println("hook scope", scope)
	// On request: why.
	fmt.Print(failover.Explain(steps, netip.MustParsePrefix("10.1.7.0/24"), "app.example.test.", "A", rrs))
	fmt.Print(failover.Explain(steps, netip.MustParsePrefix("192.0.2.0/24"), "app.example.test.", "A", rrs))
	// Output:
	// hook scope 16
	// app.example.test. A for 10.1.7.0/24: 4 records
	//   1 geo: kept 198.51.100.3 198.51.100.4; dropped 198.51.100.1 198.51.100.2; scope 16 (client in ap by 10.1.0.0/16 (scope 16); answered eu's addresses (a preference: ap has none))
	//   2 firstN 1: kept 198.51.100.3; dropped 198.51.100.4; scope 0
	//   answer 198.51.100.3; scope 16, ECS scope 16
	// app.example.test. A for 192.0.2.0/24: 4 records
	//   1 geo: kept 198.51.100.1 198.51.100.2; dropped 198.51.100.3 198.51.100.4; scope 1 (client in us by default: no prefix matches (scope 1))
	//   2 firstN 1: kept 198.51.100.1; dropped 198.51.100.2; scope 0
	//   answer 198.51.100.1; scope 1, ECS scope 1
}

// TestExplainMatchesChain: for deterministic steps the trace's answer and
// scope are the query path's, for clients in each region, unplaced ones
// and ECS prefixes shorter than the map's.
func TestExplainMatchesChain(t *testing.T) {
	loc, tags, rrs := explainFixture(t)
	sticky, err := failover.StickyStep(24, 56)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := failover.FirstN(1)
	chains := map[string][]failover.Step{
		"geo":          {failover.GeoStep(loc, tags)},
		"geo+sticky":   {failover.GeoStep(loc, tags), sticky},
		"region+first": {failover.RegionFilterStep(loc, tags), {Name: "firstN", Answer: first}},
		"empty":        {{}},
	}
	clients := []string{"10.0.1.0/24", "10.1.2.3/32", "10.2.0.0/24", "10.0.0.0/8", "2001:db8::/56", "::ffff:10.0.1.2/128"}
	for name, steps := range chains {
		hook := failover.StepChain(steps...)
		for _, c := range clients {
			client := netip.MustParsePrefix(c)
			t.Run(name+"/"+c, func(t *testing.T) {
				tr := failover.Explain(steps, client, "app.example.test.", "A", rrs)
				want, scope := rrs, 0
				if hook != nil {
					var got []libdns.Record
					got, scope = hook(client, "app.example.test.", "A", rrs)
					if len(got) > 0 {
						want = got
					}
				}
				if !slices.Equal(tr.Answer, want) || tr.Scope != scope {
					t.Fatalf("trace answers %s scope %d, chain %s scope %d\n%s", failover.RecordData(tr.Answer), tr.Scope, failover.RecordData(want), scope, tr)
				}
				if tr.ECSScope != min(scope, client.Bits()) {
					t.Errorf("ECS scope %d, want %d", tr.ECSScope, min(scope, client.Bits()))
				}
				for _, s := range tr.Steps {
					if len(s.Kept)+len(s.Dropped) != len(s.In) {
						t.Errorf("step %s: kept %d + dropped %d != handed %d", s.Name, len(s.Kept), len(s.Dropped), len(s.In))
					}
				}
			})
		}
	}
}

// TestExplainRoundRobin: a rotation keeps every record, reordered, and a
// trace counts as one query.
func TestExplainRoundRobin(t *testing.T) {
	_, _, rrs := explainFixture(t)
	steps := []failover.Step{{Name: "roundRobin", Answer: failover.RoundRobin()}}
	client := netip.MustParsePrefix("192.0.2.1/32")
	failover.Explain(steps, client, "app.example.test.", "A", rrs) // rotation 0: same order
	tr := failover.Explain(steps, client, "app.example.test.", "A", rrs)
	s := tr.Steps[0]
	if !s.Reordered || len(s.Dropped) != 0 || s.NoOpinion || len(s.Kept) != 4 {
		t.Fatalf("rotation: %+v\n%s", s, tr)
	}
	if tr.Answer[0].RR().Data != "198.51.100.2" {
		t.Errorf("second query's first address %s, want 198.51.100.2", tr.Answer[0].RR().Data)
	}
}

// TestPlacement: the locator's own words for where a client is.
func TestPlacement(t *testing.T) {
	loc, _, _ := explainFixture(t)
	for c, want := range map[string]string{
		"10.0.1.0/24":   "client in eu by 10.0.0.0/16 (scope 16)",
		"10.1.0.0/16":   "client in ap by 10.1.0.0/16 (scope 16)",
		"10.0.0.0/8":    "client in us by default: no prefix matches (scope 8)",
		"2001:db8::/48": "client in us by default: no prefix matches (scope 0)",
	} {
		if got := loc.Placement(netip.MustParsePrefix(c)); got != want {
			t.Errorf("%s: %q, want %q", c, got, want)
		}
	}
	var zero *failover.Locator
	if got := zero.Placement(netip.MustParsePrefix("10.0.0.0/8")); got != "client not placed: no prefix matches and no default (scope 0)" {
		t.Errorf("nil locator: %q", got)
	}
}

// TestStepChainAllocs: the query path of a step chain allocates nothing,
// as its steps alone do not.
func TestStepChainAllocs(t *testing.T) {
	loc, tags, rrs := explainFixture(t)
	sticky, _ := failover.StickyStep(24, 56)
	hook := failover.StepChain(failover.GeoStep(loc, tags), sticky)
	client := netip.MustParsePrefix("10.0.1.0/24")
	hook(client, "app.example.test.", "A", rrs)
	if n := testing.AllocsPerRun(100, func() { hook(client, "app.example.test.", "A", rrs) }); n != 0 {
		t.Errorf("%v allocations per query", n)
	}
}
