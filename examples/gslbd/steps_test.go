package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/miekg/dns"
)

// stepsYAML has one record per steering step (and one chaining two), each
// over three addresses: eu .1 and .3, us .2.
const stepsYAML = `zone: example.test.
http: {apiToken: let-me-in-0123456789}
records:
  - name: lat.example.test.
    steps: [{latency: {switchMargin: 20, switchAfter: 3}}]
    addresses: &addrs
      - {ip: 192.0.2.1, regions: [eu], probeAddr: "10.0.0.1:80"}
      - {ip: 192.0.2.2, regions: [us], probeAddr: "10.0.0.2:80"}
      - {ip: 192.0.2.3, regions: [eu], probeAddr: "10.0.0.3:80"}
  - name: latr.example.test.
    steps: [{latency: {pools: region}}]
    addresses: *addrs
  - name: prox.example.test.
    steps: [{proximity: {bias: {us: 95}}}]
    addresses: *addrs
  - name: shed.example.test.
    steps: [{loadShed: {pools: region, low: 0.5, high: 1.5, v4Bits: 24}}]
    addresses: *addrs
  - name: shedprox.example.test.
    steps: [{loadShed: {pools: region, low: 0.5, high: 1.5}}, {proximity: {}}]
    addresses: *addrs
  - name: sticky.example.test.
    steps: [{sticky: {v4Bits: 24}}]
    addresses: *addrs
  - name: first.example.test.
    answer: geo
    steps: [{netFence: {"192.0.2.2": ["10.0.0.0/8"]}}, {firstN: 1}]
    addresses: *addrs
geo:
  prefixes: {"198.51.100.0/24": paris, "203.0.113.0/24": nyc, "10.0.0.0/8": eu}
  coordinates:
    paris: {lat: 48.86, lon: 2.35}
    nyc: {lat: 40.71, lon: -74.01}
    eu: {lat: 50.11, lon: 8.68}
    us: {lat: 38.9, lon: -77.4}
  default: eu
`

// query asks c's embedded zone for name's A records from client ecs and
// returns the addresses and the ECS scope of the reply.
func query(t *testing.T, c *controller, name, ecs string) ([]string, int) {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	o := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
	o.SetUDPSize(1232)
	p := netip.MustParsePrefix(ecs)
	o.Option = []dns.EDNS0{&dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: uint8(p.Bits()), Address: net.IP(p.Addr().AsSlice())}}
	m.Extra = []dns.RR{o}
	q, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	r := new(dns.Msg)
	if err := r.Unpack(c.zone.RespondUDP(q, make([]byte, 4096), netip.MustParseAddr("127.0.0.1"))); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			out = append(out, a.A.String())
		}
	}
	scope := -1
	if opt := r.IsEdns0(); opt != nil {
		for _, e := range opt.Option {
			if s, ok := e.(*dns.EDNS0_SUBNET); ok {
				scope = int(s.SourceScope)
			}
		}
	}
	slices.Sort(out)
	return out, scope
}

// TestStepsAnswerPerQuery runs a controller in process with a record per
// steering step: latency answers the address (or region) fed fastest and
// moves only after three updates 20 % faster, proximity the nearest region
// after bias, loadShed moves clients off a region whose load the API
// raised, sticky keeps a client network on one address, and netFence then
// firstN answers one address, never a fenced one outside its fence.
func TestStepsAnswerPerQuery(t *testing.T) {
	c := newTestController(t, stepsYAML)
	rtt := map[string]time.Duration{"192.0.2.1": 30 * time.Millisecond, "192.0.2.2": 20 * time.Millisecond, "192.0.2.3": 40 * time.Millisecond}
	feed := func() {
		c.feedLatency(func(id string) (time.Duration, bool) {
			_, ip, _ := strings.Cut(id, "/")
			d, ok := rtt[ip]
			return d, ok
		})
	}
	check := func(name, ecs string, want ...string) {
		t.Helper()
		if got, _ := query(t, c, name, ecs); !slices.Equal(got, want) {
			t.Fatalf("%s from %s: %v, want %v", name, ecs, got, want)
		}
	}
	all := []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"}
	check("lat.example.test.", "192.0.2.0/24", all...) // not measured yet: every address
	feed()
	check("lat.example.test.", "192.0.2.0/24", "192.0.2.2")
	check("latr.example.test.", "192.0.2.0/24", "192.0.2.2") // us 20 ms, eu 30 ms
	rtt["192.0.2.1"] = 15 * time.Millisecond                 // 25 % faster than .2
	for i := range 3 {
		feed()
		want := "192.0.2.2"
		if i == 2 {
			want = "192.0.2.1"
		}
		check("lat.example.test.", "192.0.2.0/24", want)
	}
	check("latr.example.test.", "192.0.2.0/24", "192.0.2.1", "192.0.2.3") // eu's addresses

	// Proximity: Paris is nearest eu; New York nearest us; us's bias of
	// 95 also draws Paris (6,160 km × 0.05 < 480 km).
	if got, scope := query(t, c, "prox.example.test.", "203.0.113.0/24"); !slices.Equal(got, []string{"192.0.2.2"}) || scope != 24 {
		t.Fatalf("proximity from nyc: %v scope %d", got, scope)
	}
	check("prox.example.test.", "198.51.100.0/24", "192.0.2.2")

	// Load shedding: nothing shed at load 0; at 1 (half way) about half
	// the /24s leave eu; at 1.5 all of them.
	srv := httptest.NewServer(c.handler())
	defer srv.Close()
	put := func(pool, body string) int {
		req, _ := http.NewRequest("PUT", srv.URL+"/api/load/"+pool, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer let-me-in-0123456789")
		req.Header.Set("Content-Type", "application/json")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	shedEU := func() int {
		n := 0
		for i := range 400 {
			if got, _ := query(t, c, "shed.example.test.", fmt.Sprintf("10.%d.%d.0/24", i/256, i%256)); slices.Equal(got, []string{"192.0.2.2"}) {
				n++
			}
		}
		return n
	}
	if n := shedEU(); n != 0 {
		t.Fatalf("load 0: %d of 400 clients shed", n)
	}
	if code := put("eu", `{"load": 1}`); code != http.StatusOK {
		t.Fatalf("PUT /api/load/eu: %d", code)
	}
	if n := shedEU(); n < 160 || n > 240 {
		t.Fatalf("load 1 of [0.5, 1.5]: %d of 400 clients shed, want about 200", n)
	}
	if got, _ := query(t, c, "shed.example.test.", "10.0.7.0/24"); !slices.Equal(got, func() []string { g, _ := query(t, c, "shed.example.test.", "10.0.7.0/24"); return g }()) {
		t.Fatal("one client answered two ways at one load")
	}
	check("shedprox.example.test.", "198.51.100.0/24", "192.0.2.1", "192.0.2.3") // Paris: eu at load 1 (this /24 kept)
	put("eu", `{"load": 1.5}`)
	if n := shedEU(); n != 400 {
		t.Fatalf("load 1.5: %d of 400 clients shed, want all", n)
	}
	check("shedprox.example.test.", "198.51.100.0/24", "192.0.2.2") // eu sheds everyone: Paris gets the next region
	put("eu", `{"load": 0}`)
	check("shedprox.example.test.", "198.51.100.0/24", "192.0.2.1", "192.0.2.3")
	for _, bad := range []struct{ pool, body string }{{"ap", `{"load": 1}`}, {"eu", `{"load": "high"}`}, {"eu", `{"lode": 1}`}} {
		if code := put(bad.pool, bad.body); code != http.StatusNotFound && code != http.StatusBadRequest {
			t.Errorf("PUT %s %s: %d, want 404 or 400", bad.pool, bad.body, code)
		}
	}

	// The status names each record's steps.
	code, body := get(t, strings.TrimPrefix(srv.URL, "http://"), "/api/records/shedprox.example.test.")
	if code != http.StatusOK || !strings.Contains(body, `"answerSteps": [`) || !strings.Contains(body, `"loadShed"`) {
		t.Errorf("record view lacks its steps: %d %s", code, body)
	}

	// Sticky: one address, the same for a /24.
	a, scope := query(t, c, "sticky.example.test.", "192.0.2.0/24")
	for range 5 {
		if b, _ := query(t, c, "sticky.example.test.", "192.0.2.128/25"); len(a) != 1 || !slices.Equal(a, b) || scope != 24 {
			t.Fatalf("sticky: %v then %v (scope %d)", a, b, scope)
		}
	}
	// Geo, then the fence (.2 only to 10/8), then the first one.
	check("first.example.test.", "203.0.113.0/24", "192.0.2.1") // nyc: no geo region of its own: every address, .2 fenced out
	if got, _ := query(t, c, "first.example.test.", "10.1.0.0/16"); len(got) != 1 {
		t.Fatalf("firstN 1 from 10.1/16: %v", got)
	}
}

// TestStepsAllocateNothing: a query to a record with steps allocates
// nothing in the embedded zone's fast path.
func TestStepsAllocateNothing(t *testing.T) {
	c := newTestController(t, stepsYAML)
	c.steer.load.Set("eu", 1)
	c.feedLatency(func(string) (time.Duration, bool) { return time.Millisecond, true })
	buf := make([]byte, 4096)
	src := netip.MustParseAddr("127.0.0.1")
	for _, name := range []string{"lat.example.test.", "latr.example.test.", "prox.example.test.", "shed.example.test.", "shedprox.example.test.", "sticky.example.test.", "first.example.test."} {
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeA)
		o := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
		o.SetUDPSize(1232)
		o.Option = []dns.EDNS0{&dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: 24, Address: net.IP{198, 51, 100, 0}}}
		m.Extra = []dns.RR{o}
		q, _ := m.Pack()
		for range 200 {
			c.zone.RespondUDP(q, buf, src)
		}
		if n := testing.AllocsPerRun(200, func() { c.zone.RespondUDP(q, buf, src) }); n != 0 {
			t.Errorf("%s: %v allocations per query, want 0", name, n)
		}
	}
}

// TestStepConfigErrors: each step's bad settings are config errors naming
// the field and its value.
func TestStepConfigErrors(t *testing.T) {
	rec := func(steps string) string {
		return "zone: example.test.\nrecords:\n  - name: a.example.test.\n    steps: " + steps +
			"\n    addresses:\n      - {ip: 192.0.2.1, regions: [eu], probeAddr: \"10.0.0.1:80\"}\n      - {ip: 192.0.2.2, probeAddr: \"10.0.0.2:80\"}\n"
	}
	geo := "geo: {prefixes: {\"10.0.0.0/8\": eu}, coordinates: {eu: {lat: 50, lon: 8}}}\n"
	for _, tc := range []struct{ name, yaml, field, value string }{
		{"two kinds in a step", rec("[{firstN: 1, sticky: {}}]"), "records[0].steps[0]", "sticky, firstN"},
		{"empty step", rec("[{}]"), "records[0].steps[0]", "no step"},
		{"firstN 0", rec("[{firstN: 0}]"), "records[0].steps[0].firstN", "0"},
		{"sticky v4Bits", rec("[{sticky: {v4Bits: 33}}]"), "records[0].steps[0].sticky.v4Bits", "33"},
		{"fence of another address", rec(`[{netFence: {"192.0.2.9": ["10.0.0.0/8"]}}]`), "records[0].steps[0].netFence[192.0.2.9]", "192.0.2.9"},
		{"fence prefix", rec(`[{netFence: {"192.0.2.1": ["10.0.0.1/8"]}}]`), "records[0].steps[0].netFence[192.0.2.1][0]", "10.0.0.1/8"},
		{"latency pools", rec("[{latency: {pools: zone}}]"), "records[0].steps[0].latency.pools", "zone"},
		{"latency region without regions", rec("[{latency: {pools: region}}]"), "records[0].steps[0].latency.pools", "region"},
		{"switchMargin", rec("[{latency: {switchMargin: 100}}]"), "records[0].steps[0].latency.switchMargin", "100"},
		{"switchAfter", rec("[{latency: {switchAfter: 101}}]"), "records[0].steps[0].latency.switchAfter", "101"},
		{"proximity without geo", rec("[{proximity: {}}]"), "records[0].steps[0].proximity", "a proximity step"},
		{"proximity bias", rec("[{proximity: {bias: {eu: -100}}}]") + geo, "records[0].steps[0].proximity.bias[eu]", "-100"},
		{"coordinates", rec("[{proximity: {}}]") + "geo: {prefixes: {\"10.0.0.0/8\": eu}, coordinates: {eu: {lat: 95, lon: 8}}}\n", "geo.coordinates[eu].lat", "95"},
		{"shed watermarks", rec("[{loadShed: {low: 2, high: 1}}]"), "records[0].steps[0].loadShed.high", "1"},
		{"shed bits", rec("[{loadShed: {v6Bits: 129}}]"), "records[0].steps[0].loadShed.v6Bits", "129"},
		{"steps with rfc2136", rec("[{firstN: 1}]") + "provider: {type: rfc2136, rfc2136: {server: \"127.0.0.1:53\"}}\n", "records[0].steps", "1 steps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.yaml))
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			err = c.Validate()
			var ce *FieldError
			if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("err = %v, want a *FieldError", err)
			}
			if ce.Path != tc.field || strings.Trim(ce.Value, `"`) != tc.value || ce.Allowed == "" {
				t.Fatalf("err = %v: field %q value %s, want %q %q", err, ce.Path, ce.Value, tc.field, tc.value)
			}
		})
	}
	// A zero written for a field whose zero means "the default" is refused
	// in YAML, with its line.
	_, err := ParseConfig([]byte(rec("[{latency: {switchAfter: 0}}]")))
	var ye *YAMLError
	if !errors.As(err, &ye) || ye.Field != "records[0].steps[0].latency.switchAfter" {
		t.Fatalf("switchAfter 0: %v, want a YAMLError naming it", err)
	}
}

// TestReadmeStepsExample: the README's steering example is a valid config.
func TestReadmeStepsExample(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "### Steering steps")
	_, blk, ok2 := strings.Cut(sec, "```yaml\n")
	blk, _, ok3 := strings.Cut(blk, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md: no yaml block under Steering steps")
	}
	c, err := ParseConfig([]byte("zone: gslb.example.test.\n" + blk))
	if err == nil {
		err = c.Validate()
	}
	if err != nil {
		t.Fatalf("README steering example: %v", err)
	}
}

// TestLatencyLoopFeedsEveryInterval: the controller's latency loop hands
// the steps one round per probe interval (virtual time), so a faster
// address takes over after switchAfter intervals, and the loop ends with
// its context.
func TestLatencyLoopFeedsEveryInterval(t *testing.T) {
	c := newTestController(t, stepsYAML)
	var lat *latencyFeed
	for _, lf := range c.steer.latency {
		if lf.record == "lat.example.test." && lf.pools == nil {
			lat = lf
		}
	}
	interval := c.byName["lat.example.test."].spec.check.Policy.Interval
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		rtt := map[string]time.Duration{"192.0.2.1": 30 * time.Millisecond, "192.0.2.2": 20 * time.Millisecond}
		c.steer.rtt = func(id string) (time.Duration, bool) {
			mu.Lock()
			defer mu.Unlock()
			_, ip, _ := strings.Cut(id, "/")
			d, ok := rtt[ip]
			return d, ok
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- c.latencyLoop(ctx) }()
		time.Sleep(interval + time.Millisecond)
		synctest.Wait()
		if got := lat.table.Chosen(); got != "192.0.2.2" {
			t.Fatalf("after one interval: %q, want 192.0.2.2", got)
		}
		mu.Lock()
		rtt["192.0.2.1"] = 10 * time.Millisecond
		mu.Unlock()
		for i := range 3 {
			time.Sleep(interval)
			synctest.Wait()
			want := "192.0.2.2"
			if i == 2 {
				want = "192.0.2.1"
			}
			if got := lat.table.Chosen(); got != want {
				t.Fatalf("interval %d of the faster address: %q, want %q", i+1, got, want)
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// TestNodeSteps: a node validates and installs a record's steps (a record
// with steps but no answer kind is answered per query there too), and
// refuses a bad step naming its field.
func TestNodeSteps(t *testing.T) {
	const y = "zone: example.test.\nreplication: {secret: 0123456789abcdef}\nnode: {url: http://ctl:8053/replication}\n" + `records:
  - name: s.example.test.
    steps: [{sticky: {v4Bits: 24}}, {firstN: 1}]
    addresses: [{ip: 192.0.2.1}, {ip: 192.0.2.2}]
`
	c, err := ParseConfig([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ValidateNode(); err != nil {
		t.Fatalf("ValidateNode: %v", err)
	}
	if d := digestAnswers(c); d.Names["s.example.test."] == "" {
		t.Errorf("a record with steps is missing from the answer digest: %v", d.Names)
	}
	c, err = ParseConfig([]byte(strings.Replace(y, "firstN: 1", "firstN: 0", 1)))
	if err != nil {
		t.Fatal(err)
	}
	var ce *FieldError
	if err := c.ValidateNode(); !errors.As(err, &ce) || ce.Path != "records[0].steps[1].firstN" {
		t.Fatalf("err = %v, want records[0].steps[1].firstN", err)
	}
}
