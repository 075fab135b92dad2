package failover_test

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"pgregory.net/rapid"

	"github.com/gslbkit/gslb/failover"
)

// TestPropertyLatencyHysteresis: measurements whose best stays inside the
// band (RTT above (100 − margin) % of the current choice's), or leave it
// for fewer than switchAfter updates in a row, never move the answer; a
// pool faster by the margin for switchAfter updates in a row moves it at
// exactly the last of them.
func TestPropertyLatencyHysteresis(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := failover.LatencyConfig{
			SwitchMargin: rapid.IntRange(1, 99).Draw(t, "margin"),
			SwitchAfter:  rapid.IntRange(1, 6).Draw(t, "after"),
		}
		tab, err := failover.NewLatencyTable(cfg)
		if err != nil {
			t.Fatal(err)
		}
		pools := []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"}
		f := failover.Latency(tab, nil)
		rrs := []libdns.Record{}
		for _, p := range pools {
			rrs = append(rrs, libdns.Address{Name: "www", IP: netip.MustParseAddr(p)})
		}
		first := map[string]time.Duration{pools[0]: time.Millisecond}
		if got, _ := tab.Update(first); got != pools[0] {
			t.Fatalf("first update chose %q, want %q", got, pools[0])
		}
		cur := pools[0]
		band := func(c time.Duration) time.Duration { // the slowest RTT that counts as faster
			return time.Duration(int64(c) * int64(100-cfg.SwitchMargin) / 100)
		}
		inBand := func(label string) map[string]time.Duration {
			c := time.Duration(rapid.Int64Range(1e6, 5e8).Draw(t, label+"cur"))
			m := map[string]time.Duration{cur: c}
			for _, p := range pools {
				if p != cur {
					m[p] = band(c) + 1 + time.Duration(rapid.Int64Range(0, 2*int64(c)).Draw(t, label+p))
				}
			}
			return m
		}
		faster := func(label, who string) map[string]time.Duration {
			m := inBand(label)
			m[who] = time.Duration(rapid.Int64Range(1, int64(band(m[cur]))).Draw(t, label+"fast"))
			return m
		}
		for seg := range rapid.IntRange(0, 8).Draw(t, "segments") {
			streak := rapid.IntRange(0, cfg.SwitchAfter-1).Draw(t, fmt.Sprint("streak", seg))
			for i := range streak {
				who := rapid.SampledFrom(pools[1:]).Draw(t, fmt.Sprint("who", seg, i))
				if who == cur {
					who = pools[0]
				}
				if got, changed := tab.Update(faster(fmt.Sprint(seg, "f", i), who)); changed || got != cur {
					t.Fatalf("a streak of %d < %d moved the answer to %q", i+1, cfg.SwitchAfter, got)
				}
			}
			if got, changed := tab.Update(inBand(fmt.Sprint(seg, "b"))); changed || got != cur {
				t.Fatalf("noise inside the band moved the answer to %q", got)
			}
			if out, scope := f(netip.MustParsePrefix("203.0.113.0/24"), "www.example.", "A", rrs); len(out) != 1 || out[0].(libdns.Address).IP.String() != cur || scope != 0 {
				t.Fatalf("answer %v scope %d, want %s scope 0", out, scope, cur)
			}
		}
		who := pools[2]
		for i := range cfg.SwitchAfter {
			got, changed := tab.Update(faster(fmt.Sprint("sustained", i), who))
			if last := i == cfg.SwitchAfter-1; last != changed || last != (got == who) {
				t.Fatalf("update %d of %d faster by the margin: chose %q (changed %v)", i+1, cfg.SwitchAfter, got, changed)
			}
		}
		cur = who
		if out, _ := f(netip.Prefix{}, "www.example.", "A", rrs); len(out) != 1 || out[0].(libdns.Address).IP.String() != cur {
			t.Fatalf("answer %v after the switch, want %s", out, cur)
		}
		// The chosen address goes: the fastest remaining one, at once.
		without := slices.DeleteFunc(slices.Clone(rrs), func(r libdns.Record) bool { return r.(libdns.Address).IP.String() == cur })
		out, _ := f(netip.Prefix{}, "www.example.", "A", without)
		if len(out) != 1 || out[0].(libdns.Address).IP.String() == cur {
			t.Fatalf("answer %v without the chosen address", out)
		}
	})
}

// TestLatencyPools: with a pools map, the step answers the chosen
// region's addresses.
func TestLatencyPools(t *testing.T) {
	tab, err := failover.NewLatencyTable(failover.LatencyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("198.51.100.1"), netip.MustParseAddr("192.0.2.2")
	f := failover.Latency(tab, map[netip.Addr]string{a: "eu", b: "us", c: "eu"})
	rrs := []libdns.Record{libdns.Address{Name: "w", IP: a}, libdns.Address{Name: "w", IP: b}, libdns.Address{Name: "w", IP: c}}
	if out, _ := f(netip.Prefix{}, "w.example.", "A", rrs); out != nil {
		t.Fatalf("no measurement yet: answer %v, want no opinion", out)
	}
	tab.Update(map[string]time.Duration{"eu": 30 * time.Millisecond, "us": 40 * time.Millisecond})
	if out, _ := f(netip.Prefix{}, "w.example.", "A", rrs); len(out) != 2 || out[0] != rrs[0] || out[1] != rrs[2] {
		t.Fatalf("answer %v, want eu's two addresses", out)
	}
	if out, _ := f(netip.Prefix{}, "w.example.", "A", rrs[1:2]); len(out) != 1 || out[0] != rrs[1] {
		t.Fatalf("eu gone: answer %v, want us", out)
	}
}

// genLatLon draws a point on the globe.
func genLatLon(t *rapid.T, label string) failover.LatLon {
	return failover.LatLon{Lat: rapid.Float64Range(-90, 90).Draw(t, label+"Lat"), Lon: rapid.Float64Range(-180, 180).Draw(t, label+"Lon")}
}

// TestPropertyProximity: with zero bias the answer is the pool nearest the
// client's region (great-circle distance) among those with addresses; a
// positive bias for a pool never takes from it a client it had.
func TestPropertyProximity(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := genGeoMap(t)
		g.Coordinates = map[string]failover.LatLon{}
		for _, r := range []string{"us", "eu", "ap"} {
			g.Coordinates[r] = genLatLon(t, r)
		}
		pools := []string{"eu", "p2", "p3", "p4"} // eu is a client region too
		tags := map[netip.Addr][]string{}
		var rrs []libdns.Record
		for i, p := range pools {
			if _, ok := g.Coordinates[p]; !ok {
				g.Coordinates[p] = genLatLon(t, p)
			}
			a := netip.AddrFrom4([4]byte{198, 51, 100, byte(i + 1)})
			tags[a] = []string{p}
			if rapid.Bool().Draw(t, "has"+p) {
				rrs = append(rrs, libdns.Address{Name: "w", IP: a})
			}
		}
		if len(rrs) == 0 {
			rrs = append(rrs, libdns.Address{Name: "w", IP: netip.AddrFrom4([4]byte{198, 51, 100, 1})})
		}
		loc, err := failover.NewLocator(g)
		if err != nil {
			t.Fatal(err)
		}
		f, err := failover.Proximity(g, tags, nil)
		if err != nil {
			t.Fatal(err)
		}
		p := rapid.SampledFrom(pools).Draw(t, "biased")
		bias := rapid.IntRange(1, 99).Draw(t, "bias")
		fb, err := failover.Proximity(g, tags, map[string]int{p: bias})
		if err != nil {
			t.Fatal(err)
		}
		poolOf := func(out []libdns.Record) string {
			if len(out) != 1 {
				t.Fatalf("answer %v, want one pool's address", out)
			}
			return tags[out[0].(libdns.Address).IP][0]
		}
		for i := range 8 {
			client := genPrefix(t, fmt.Sprint("client", i), rapid.Bool().Draw(t, fmt.Sprint("v6", i)))
			region, scope, placed := loc.LocateScope(client)
			out, s := f(client, "w.example.", "A", rrs)
			if s != scope {
				t.Fatalf("%s: scope %d, want the locator's %d", client, s, scope)
			}
			if !placed {
				if out != nil {
					t.Fatalf("%s unplaced: answer %v, want no opinion", client, out)
				}
				continue
			}
			best := math.Inf(1)
			for _, r := range rrs {
				best = min(best, failover.DistanceKm(g.Coordinates[region], g.Coordinates[tags[r.(libdns.Address).IP][0]]))
			}
			got := poolOf(out)
			if d := failover.DistanceKm(g.Coordinates[region], g.Coordinates[got]); d > best {
				t.Fatalf("%s in %s: answered %s at %.1f km, nearest at %.1f km", client, region, got, d, best)
			}
			outB, _ := fb(client, "w.example.", "A", rrs)
			if got == p && poolOf(outB) != p {
				t.Fatalf("%s in %s: bias %+d for %s moved the client to %s", client, region, bias, p, poolOf(outB))
			}
		}
	})
}

// TestPropertyLoadShed: over many client networks the share shed from a
// pool is within 3 points of the linear rule, and one client is always
// answered alike at a fixed load.
func TestPropertyLoadShed(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		low := rapid.Float64Range(0, 10).Draw(t, "low")
		cfg := failover.ShedConfig{Low: low, High: low + rapid.Float64Range(0.1, 10).Draw(t, "width")}
		var tab failover.LoadTable
		f, err := failover.LoadShed(&tab, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, b := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")
		rrs := []libdns.Record{libdns.Address{Name: "w", IP: a}, libdns.Address{Name: "w", IP: b}}
		load := rapid.Float64Range(cfg.Low-1, cfg.High+1).Draw(t, "load")
		tab.Set(a.String(), load)
		want := min(max((load-cfg.Low)/(cfg.High-cfg.Low), 0), 1)
		shed, n := 0, 4000
		for i := range n {
			client := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 0}), 24)
			out, scope := f(client, "w.example.", "A", rrs)
			again, _ := f(client, "w.example.", "A", rrs)
			if !slices.Equal(out, again) {
				t.Fatalf("%s answered %v then %v", client, out, again)
			}
			if len(out) == 1 && out[0] == rrs[1] {
				shed++
			} else if out != nil {
				t.Fatalf("%s: answer %v, want no opinion or the other address", client, out)
			}
			if wantScope := map[bool]int{true: 24, false: 0}[want > 0 && want < 1]; scope != wantScope {
				t.Fatalf("%s: scope %d at share %.3f, want %d", client, scope, want, wantScope)
			}
		}
		if got := float64(shed) / float64(n); math.Abs(got-want) > 0.03 {
			t.Fatalf("load %.3f in [%.3f, %.3f]: shed %.3f of clients, want %.3f", load, cfg.Low, cfg.High, got, want)
		}
	})
}

// TestSteerConfigErrors: bad settings are field errors naming the field.
func TestSteerConfigErrors(t *testing.T) {
	g := failover.GeoMap{Prefixes: map[netip.Prefix]string{netip.MustParsePrefix("10.0.0.0/8"): "eu"},
		Coordinates: map[string]failover.LatLon{"eu": {Lat: 50, Lon: 8}, "us": {Lat: 39, Lon: -77}}}
	tags := map[netip.Addr][]string{netip.MustParseAddr("192.0.2.1"): {"us"}}
	for _, c := range []struct {
		name, want string
		err        func() error
	}{
		{"margin", "switchMargin = 100", func() error {
			_, err := failover.NewLatencyTable(failover.LatencyConfig{SwitchMargin: 100})
			return err
		}},
		{"after", "switchAfter = -1", func() error { _, err := failover.NewLatencyTable(failover.LatencyConfig{SwitchAfter: -1}); return err }},
		{"high", "high = 1", func() error {
			_, err := failover.LoadShed(new(failover.LoadTable), failover.ShedConfig{Low: 2, High: 1}, nil)
			return err
		}},
		{"v4Bits", "v4Bits = 33", func() error {
			_, err := failover.LoadShed(new(failover.LoadTable), failover.ShedConfig{V4Bits: 33}, nil)
			return err
		}},
		{"bias", "bias[us] = 100", func() error { _, err := failover.Proximity(g, tags, map[string]int{"us": 100}); return err }},
		{"bias region", `bias[ap]`, func() error { _, err := failover.Proximity(g, tags, map[string]int{"ap": 1}); return err }},
		{"lat", "coordinates[eu].lat = 91", func() error {
			g2 := g
			g2.Coordinates = map[string]failover.LatLon{"eu": {Lat: 91}}
			_, err := failover.Proximity(g2, tags, nil)
			return err
		}},
		{"pool coords", "coordinates[ap]", func() error {
			_, err := failover.Proximity(g, map[netip.Addr][]string{netip.MustParseAddr("192.0.2.1"): {"ap"}}, nil)
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.err()
			var fe *failover.FieldError
			if !errors.Is(err, failover.ErrInvalidConfig) || !errors.As(err, &fe) {
				t.Fatalf("error %v, want a FieldError wrapping ErrInvalidConfig", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not name %q", err, c.want)
			}
		})
	}
}

// steerAllocCases are the steering steps' fast-path queries, for
// TestAnswerFuncsAllocs.
func steerAllocCases(t testing.TB) map[string]func() {
	a, b, c := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2"), netip.MustParseAddr("192.0.2.3")
	rrs := []libdns.Record{libdns.Address{Name: "w", IP: a}, libdns.Address{Name: "w", IP: b}, libdns.Address{Name: "w", IP: c}}
	client := netip.MustParsePrefix("10.1.2.0/24")
	tab, err := failover.NewLatencyTable(failover.LatencyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	tab.Update(map[string]time.Duration{"192.0.2.2": time.Millisecond})
	lat := failover.Latency(tab, nil)
	ptab, err := failover.NewLatencyTable(failover.LatencyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ptab.Update(map[string]time.Duration{"eu": time.Millisecond, "us": 2 * time.Millisecond})
	latPools := failover.Latency(ptab, map[netip.Addr]string{a: "eu", b: "us", c: "eu"})
	latFallback := failover.Latency(ptab, map[netip.Addr]string{a: "eu", b: "us", c: "eu"})
	g := failover.GeoMap{Prefixes: map[netip.Prefix]string{netip.MustParsePrefix("10.0.0.0/8"): "eu"},
		Coordinates: map[string]failover.LatLon{"eu": {Lat: 50.1, Lon: 8.7}, "us": {Lat: 39, Lon: -77.5}}}
	prox, err := failover.Proximity(g, map[netip.Addr][]string{a: {"eu"}, b: {"us"}, c: {"eu"}}, map[string]int{"us": 50})
	if err != nil {
		t.Fatal(err)
	}
	var load failover.LoadTable
	load.Set("192.0.2.2", 0.9)
	shed, err := failover.LoadShed(&load, failover.ShedConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sticky, _ := failover.Sticky(24, 56)
	first, _ := failover.FirstN(2)
	fence, _ := failover.NetFence(map[netip.Addr][]netip.Prefix{a: {netip.MustParsePrefix("10.0.0.0/8")}})
	clients := make([]netip.Prefix, 64)
	for i := range clients {
		clients[i] = netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 1, byte(i), 0}), 24)
	}
	i := 0
	return map[string]func(){
		"latency":                        func() { _ = rrsOf(lat(client, "w.example.", "A", rrs)) },
		"latency pools":                  func() { _ = rrsOf(latPools(client, "w.example.", "A", rrs)) },
		"latency pools, chosen one down": func() { _ = rrsOf(latFallback(client, "w.example.", "A", rrs[1:2])) },
		"proximity":                      func() { _ = rrsOf(prox(client, "w.example.", "A", rrs)) },
		"loadShed":                       func() { i++; _ = rrsOf(shed(clients[i%len(clients)], "w.example.", "A", rrs)) },
		"sticky":                         func() { _ = rrsOf(sticky(client, "w.example.", "A", rrs)) },
		"firstN":                         func() { _ = rrsOf(first(client, "w.example.", "A", rrs)) },
		"netFence":                       func() { _ = rrsOf(fence(client, "w.example.", "A", rrs)) },
	}
}

// TestSteerZeroValues: a zero LatencyTable or LoadTable is usable: no
// opinion until fed, then the default hysteresis and rule.
func TestSteerZeroValues(t *testing.T) {
	var lt failover.LatencyTable
	f := failover.Latency(&lt, nil)
	rrs := []libdns.Record{libdns.Address{Name: "w", IP: netip.MustParseAddr("192.0.2.1")}, libdns.Address{Name: "w", IP: netip.MustParseAddr("192.0.2.2")}}
	if out, _ := f(netip.Prefix{}, "w.example.", "A", rrs); out != nil {
		t.Fatalf("zero table: %v, want no opinion", out)
	}
	if got, _ := lt.Update(map[string]time.Duration{"192.0.2.2": time.Millisecond}); got != "192.0.2.2" || lt.Chosen() != got {
		t.Fatalf("zero table after an update: %q", got)
	}
	var load failover.LoadTable
	if load.Load("eu") != 0 {
		t.Fatal("zero LoadTable: load not 0")
	}
	shed, err := failover.LoadShed(&load, failover.ShedConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out, scope := shed(netip.MustParsePrefix("10.0.0.0/24"), "w.example.", "A", rrs); out != nil || scope != 0 {
		t.Fatalf("zero LoadTable: %v scope %d, want no opinion at scope 0", out, scope)
	}
}

// BenchmarkSteer measures each steering step per query (the cases of
// TestAnswerFuncsAllocs).
func BenchmarkSteer(b *testing.B) {
	cases := steerAllocCases(b)
	for _, name := range slices.Sorted(maps.Keys(cases)) {
		f := cases[name]
		b.Run(name, func(b *testing.B) {
			for range 130 {
				f()
			}
			b.ReportAllocs()
			for b.Loop() {
				f()
			}
		})
	}
}

// TestSteerStateCopies: a table restored from another's State and a
// LoadTable replaced with another's Loads answer as the originals do.
func TestSteerStateCopies(t *testing.T) {
	src, _ := failover.NewLatencyTable(failover.LatencyConfig{SwitchAfter: 2})
	src.Update(map[string]time.Duration{"192.0.2.1": 50 * time.Millisecond, "192.0.2.2": 60 * time.Millisecond})
	src.Update(map[string]time.Duration{"192.0.2.1": 50 * time.Millisecond, "192.0.2.2": 10 * time.Millisecond}) // streak 1: stays
	dst, _ := failover.NewLatencyTable(failover.LatencyConfig{SwitchAfter: 2})
	dst.Restore(src.State())
	if dst.Chosen() != "192.0.2.1" || !maps.Equal(dst.State().RTT, src.State().RTT) {
		t.Fatalf("restored %+v, source %+v", dst.State(), src.State())
	}
	var rrs []libdns.Record
	for _, ip := range []string{"192.0.2.1", "192.0.2.2"} {
		rrs = append(rrs, libdns.Address{Name: "app", IP: netip.MustParseAddr(ip)})
	}
	client := netip.MustParsePrefix("198.51.100.0/24")
	a, _ := failover.Latency(src, nil)(client, "app", "A", rrs)
	b, _ := failover.Latency(dst, nil)(client, "app", "A", rrs)
	if !slices.Equal(a, b) {
		t.Fatalf("latency answers differ: %v, %v", a, b)
	}
	var l1, l2 failover.LoadTable
	l1.Set("192.0.2.1", 0.9)
	l2.Set("192.0.2.2", 5)
	l2.Replace(l1.Loads())
	if l2.Load("192.0.2.2") != 0 || l2.Load("192.0.2.1") != 0.9 || !maps.Equal(l1.Loads(), l2.Loads()) {
		t.Fatalf("replaced loads %v, want %v", l2.Loads(), l1.Loads())
	}
}
