package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/gslbkit/gslb/failover"
)

// ask sends server an A query for name, with an EDNS Client Subnet option
// for ecs when it is valid, and returns the addresses of the answer in
// the order they came (nil on error).
func ask(t *testing.T, server, name string, ecs netip.Prefix) []string {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), dns.TypeA)
	if ecs.IsValid() {
		o := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
		o.SetUDPSize(1232)
		family := uint16(1)
		if ecs.Addr().Is6() {
			family = 2
		}
		o.Option = append(o.Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: family,
			SourceNetmask: uint8(ecs.Bits()), Address: net.IP(ecs.Addr().AsSlice())})
		m.Extra = append(m.Extra, o)
	}
	c := &dns.Client{Net: "udp", Timeout: time.Second}
	r, _, err := c.Exchange(m, server)
	if err != nil {
		return nil
	}
	var out []string
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			out = append(out, a.A.String())
		}
	}
	return out
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

var (
	euClient  = netip.MustParsePrefix("198.51.100.7/32")
	usClient  = netip.MustParsePrefix("203.0.113.0/24")
	farClient = netip.MustParsePrefix("192.0.2.0/24") // outside every prefix
)

// geoYAML is a controller with a geo record and a regionFilter record over
// the same four addresses (eu: .1 .2, us: .3, ap: .4), probed at bs.
func geoYAML(extra string, bs []*backend) string {
	var recs strings.Builder
	for _, rec := range []struct{ name, kind string }{{"geo", "geo"}, {"rf", "regionFilter"}} {
		fmt.Fprintf(&recs, "  - name: %s.example.test.\n    ttl: 1s\n    answer: %s\n    addresses:\n", rec.name, rec.kind)
		for i, reg := range []string{"eu", "eu", "us", "ap"} {
			fmt.Fprintf(&recs, "      - {ip: 192.0.2.%d, regions: [%s], probeAddr: %q}\n", i+1, reg, bs[i].addr())
		}
	}
	return controllerYAML(extra+`
geo:
  prefixes: {"198.51.100.0/24": eu, "203.0.113.0/24": us, "2001:db8:5::/48": us}
  preferences: {eu: [us, ap], us: [eu]}
  default: ap`, recs.String())
}

// TestGeoAnswersByClientSubnet runs gslbd with a geo record and a
// regionFilter record: queries carrying EDNS Client Subnet from two
// regions' prefixes (IPv4 and IPv6) get their region's addresses, a client outside every
// prefix (or without ECS, from 127.0.0.1) gets the default region's, and
// when a region's addresses fail the geo answer falls back along the
// region's preferences while regionFilter answers every healthy address.
func TestGeoAnswersByClientSubnet(t *testing.T) {
	bs := []*backend{newBackend(t), newBackend(t), newBackend(t), newBackend(t)}
	d := startDaemon(t, geoYAML("", bs))
	guard := 60 * time.Second
	is := func(name string, ecs netip.Prefix, want ...string) func() bool {
		return func() bool { return slices.Equal(sorted(ask(t, d.dns, name, ecs)), want) }
	}
	check := func(name string, ecs netip.Prefix, want ...string) {
		t.Helper()
		if got := sorted(ask(t, d.dns, name, ecs)); !slices.Equal(got, want) {
			t.Errorf("%s for %v: %v, want %v", name, ecs, got, want)
		}
	}
	waitFor(t, guard, "eu client answered eu's addresses", is("geo.example.test.", euClient, "192.0.2.1", "192.0.2.2"))
	// Every address had its first result before the first publication
	// (startup hold): the zone holds all four from here on.
	check("geo.example.test.", usClient, "192.0.2.3")
	check("geo.example.test.", netip.MustParsePrefix("2001:db8:5:1::/64"), "192.0.2.3") // an IPv6 client subnet, an A query
	check("geo.example.test.", farClient, "192.0.2.4")
	check("geo.example.test.", netip.Prefix{}, "192.0.2.4") // source 127.0.0.1: no prefix, the default
	check("geo.example.test.", netip.MustParsePrefix("198.51.100.0/25"), "192.0.2.1", "192.0.2.2")
	waitFor(t, guard, "regionFilter record published", is("rf.example.test.", euClient, "192.0.2.1", "192.0.2.2"))
	check("rf.example.test.", usClient, "192.0.2.3")

	bs[0].down.Store(true)
	bs[1].down.Store(true)
	waitFor(t, guard, "eu's addresses failed: eu client answered us (its first preference)", is("geo.example.test.", euClient, "192.0.2.3"))
	waitFor(t, guard, "regionFilter for eu with eu down: every healthy address", is("rf.example.test.", euClient, "192.0.2.3", "192.0.2.4"))
	check("geo.example.test.", usClient, "192.0.2.3")
	bs[2].down.Store(true)
	waitFor(t, guard, "us failed too: eu client answered ap (its second preference)", is("geo.example.test.", euClient, "192.0.2.4"))
	check("geo.example.test.", usClient, "192.0.2.4") // us prefers eu, also down: every healthy address
	bs[0].down.Store(false)
	waitFor(t, guard, "eu back", is("geo.example.test.", euClient, "192.0.2.1"))
	check("geo.example.test.", usClient, "192.0.2.1")

	code, body := get(t, d.http, "/api/status")
	if code != http.StatusOK {
		t.Fatalf("status: %d %s", code, body)
	}
	var st statusView
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, r := range st.Records {
		kinds[r.Name] = r.AnswerKind
	}
	if kinds["geo.example.test."] != "geo" || kinds["rf.example.test."] != "regionFilter" {
		t.Errorf("status answer kinds: %v", kinds)
	}
	if _, page := get(t, d.http, "/"); !strings.Contains(page, "regionFilter") {
		t.Error("status page does not show the answer kind")
	}
}

// TestGeoWithinWeighted runs a controller and a node with a geo record
// whose region's addresses are answered one at a time by weight (within
// weightedRandom) and a regionFilter record rotated within the region
// (within roundRobin): an eu client gets one of eu's two addresses, about
// three times in four the one of weight 3, never another region's; a us
// client gets us's; with eu's addresses down an eu client gets us's (its
// preference). The node answers the same, and both say so in their status.
func TestGeoWithinWeighted(t *testing.T) {
	bs := []*backend{newBackend(t), newBackend(t), newBackend(t)}
	var recs strings.Builder
	for _, rec := range []struct{ name, kind, within string }{{"gw", "geo", "weightedRandom"}, {"rr", "regionFilter", "roundRobin"}} {
		fmt.Fprintf(&recs, "  - name: %s.example.test.\n    ttl: 1s\n    answer: %s\n    within: %s\n    addresses:\n", rec.name, rec.kind, rec.within)
		for i, a := range []struct {
			reg    string
			weight int
		}{{"eu", 3}, {"eu", 1}, {"us", 1}} {
			fmt.Fprintf(&recs, "      - {ip: 192.0.2.%d, regions: [%s], weight: %d, probeAddr: %q}\n", i+1, a.reg, a.weight, bs[i].addr())
		}
	}
	cfg := controllerYAML(`replication: {secret: 0123456789abcdef0123}
geo:
  prefixes: {"198.51.100.0/24": eu, "203.0.113.0/24": us}
  preferences: {eu: [us], us: [eu]}
  default: us`, recs.String())
	ctl := startDaemon(t, cfg)
	node := startDaemon(t, cfg+fmt.Sprintf("node: {url: \"http://%s/replication\", interval: 200ms}\n", ctl.http), "-node")
	guard := 60 * time.Second
	for _, name := range []string{"gw", "rr"} {
		waitFor(t, guard, name+" published all three addresses", func() bool {
			_, body := get(t, ctl.http, "/api/records/"+name+".example.test.")
			var v recordView
			return json.Unmarshal([]byte(body), &v) == nil && len(v.Answer) == 3
		})
	}
	for _, d := range []*daemon{ctl, node} {
		waitFor(t, guard, "the zone (the node's copy) has all three addresses", func() bool {
			return len(ask(t, d.dns, "rr.example.test.", netip.Prefix{})) == 1 && len(ask(t, d.dns, "rr.example.test.", farClient)) == 1 &&
				len(ask(t, d.dns, "rr.example.test.", euClient)) == 2
		})
		const n = 200 // weights 3/1: P(.2 at least as often as .1 in 200) < 1e-12
		seen := map[string]int{}
		for range n {
			got := ask(t, d.dns, "gw.example.test.", euClient)
			if len(got) != 1 {
				t.Fatalf("gw for an eu client answered %v: want one address", got)
			}
			seen[got[0]]++
		}
		t.Logf("eu client, weights 3/1 within eu, %d queries: %v", n, seen)
		if seen["192.0.2.1"] <= seen["192.0.2.2"] || seen["192.0.2.2"] == 0 || len(seen) != 2 {
			t.Errorf("gw for an eu client: %v, want .1 about 3 times as often as .2, never .3", seen)
		}
		if got := ask(t, d.dns, "gw.example.test.", usClient); !slices.Equal(got, []string{"192.0.2.3"}) {
			t.Errorf("gw for a us client: %v, want .3", got)
		}
		firsts := map[string]bool{}
		for range 2 {
			got := ask(t, d.dns, "rr.example.test.", euClient)
			if len(got) != 2 {
				t.Fatalf("rr for an eu client answered %v: want eu's two addresses", got)
			}
			firsts[got[0]] = true
		}
		if len(firsts) != 2 {
			t.Errorf("rr for an eu client: two queries led with %v, want each of eu's addresses once", firsts)
		}
	}
	code, body := get(t, ctl.http, "/api/records/gw.example.test.")
	var v recordView
	if err := json.Unmarshal([]byte(body), &v); code != http.StatusOK || err != nil || v.AnswerKind != "geo" || v.AnswerWithin != "weightedRandom" {
		t.Errorf("record view: %d %s", code, body)
	}
	if _, page := get(t, ctl.http, "/"); !strings.Contains(page, "geo, then weightedRandom within the region") {
		t.Error("status page does not show within")
	}
	_, body = get(t, node.http, "/api/status")
	var st statusView
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	if st.Answers["gw.example.test."] != "geo" || st.AnswersWithin["gw.example.test."] != "weightedRandom" || st.AnswersWithin["rr.example.test."] != "roundRobin" {
		t.Errorf("node status: answers %v, within %v", st.Answers, st.AnswersWithin)
	}
	if _, page := get(t, node.http, "/"); !strings.Contains(page, "regionFilter, then roundRobin within the region") {
		t.Error("node status page does not show within")
	}

	bs[0].down.Store(true)
	bs[1].down.Store(true)
	for _, d := range []*daemon{ctl, node} {
		waitFor(t, guard, "eu down: an eu client gets us's address", func() bool {
			return slices.Equal(ask(t, d.dns, "gw.example.test.", euClient), []string{"192.0.2.3"})
		})
	}
}

// weightedYAML is a controller with a weightedRandom record (.1 weight 3,
// .2 weight 1, .3 weight 0) and a roundRobin record, probed at bs.
func weightedYAML(extra string, bs []*backend) string {
	var recs strings.Builder
	recs.WriteString("  - name: w.example.test.\n    ttl: 1s\n    answer: weightedRandom\n    addresses:\n")
	for i, w := range []int{3, 1, 0} {
		fmt.Fprintf(&recs, "      - {ip: 192.0.2.%d, weight: %d, probeAddr: %q}\n", i+1, w, bs[i].addr())
	}
	recs.WriteString("  - name: rr.example.test.\n    ttl: 1s\n    answer: roundRobin\n    addresses:\n")
	for i := range 3 {
		fmt.Fprintf(&recs, "      - {ip: 192.0.2.%d, probeAddr: %q}\n", i+1, bs[i].addr())
	}
	return controllerYAML(extra, recs.String())
}

// countAnswers asks n times and counts the single address of each answer;
// an answer of any other size is an error.
func countAnswers(t *testing.T, server, name string, n int) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for range n {
		got := ask(t, server, name, netip.Prefix{})
		if len(got) != 1 {
			t.Fatalf("%s answered %v: want exactly one address", name, got)
		}
		seen[got[0]]++
	}
	return seen
}

// TestWeightedRandomAnswers runs gslbd with a weightedRandom record: every
// answer is one published address; over many queries both addresses of
// positive weight appear and the weight-0 one never while they are served;
// a failed address is never answered; the weight-0 one is answered once it
// is the only one left. A roundRobin record rotates its addresses.
func TestWeightedRandomAnswers(t *testing.T) {
	bs := []*backend{newBackend(t), newBackend(t), newBackend(t)}
	d := startDaemon(t, weightedYAML("", bs))
	guard := 60 * time.Second
	waitFor(t, guard, "rr answers all three", func() bool { return len(ask(t, d.dns, "rr.example.test.", netip.Prefix{})) == 3 })
	waitFor(t, guard, "w published", func() bool { return len(ask(t, d.dns, "w.example.test.", netip.Prefix{})) > 0 })

	const n = 200 // P(no .2 in 200 draws at 1/4) = 0.75^200 ≈ 1e-25
	seen := countAnswers(t, d.dns, "w.example.test.", n)
	t.Logf("weights 3/1/0 over %d queries: %v", n, seen)
	if seen["192.0.2.1"] == 0 || seen["192.0.2.2"] == 0 || seen["192.0.2.3"] != 0 || len(seen) != 2 {
		t.Errorf("answers %v: want .1 and .2, never .3 (weight 0)", seen)
	}

	firsts := map[string]bool{}
	for range 3 {
		got := ask(t, d.dns, "rr.example.test.", netip.Prefix{})
		if len(got) != 3 {
			t.Fatalf("roundRobin answered %v", got)
		}
		firsts[got[0]] = true
	}
	if len(firsts) != 3 {
		t.Errorf("roundRobin: three queries led with %v, want each address once", firsts)
	}

	published := func(want ...string) func() bool {
		return func() bool {
			_, body := get(t, d.http, "/api/records/w.example.test.")
			var v recordView
			return json.Unmarshal([]byte(body), &v) == nil && slices.Equal(sorted(v.Answer), want)
		}
	}
	bs[0].down.Store(true)
	waitFor(t, guard, ".1 left w's published set", published("A 192.0.2.2", "A 192.0.2.3"))
	if seen := countAnswers(t, d.dns, "w.example.test.", 50); seen["192.0.2.2"] != 50 {
		t.Errorf("with .1 down: %v, want only .2 (.3 has weight 0)", seen)
	}
	bs[1].down.Store(true)
	waitFor(t, guard, "weight-0 address answered once it is the only one published", func() bool {
		got := ask(t, d.dns, "w.example.test.", netip.Prefix{})
		return slices.Equal(got, []string{"192.0.2.3"})
	})
	if seen := countAnswers(t, d.dns, "w.example.test.", 20); seen["192.0.2.3"] != 20 {
		t.Errorf("with .1 and .2 down: %v, want only .3", seen)
	}
}

// replicatedAnswersYAML is geoYAML with a replication secret and a
// weightedRandom record (.8 and .9, weight 1 each, probed at the first two
// backends): a controller's config that nodes follow, and its backends.
func replicatedAnswersYAML(t *testing.T) (string, []*backend) {
	bs := []*backend{newBackend(t), newBackend(t), newBackend(t), newBackend(t)}
	return geoYAML("replication: {secret: 0123456789abcdef0123}", bs) + "  - name: w.example.test.\n    answer: weightedRandom\n    addresses:\n" +
		fmt.Sprintf("      - {ip: 192.0.2.8, weight: 1, probeAddr: %q}\n      - {ip: 192.0.2.9, weight: 1, probeAddr: %q}\n", bs[0].addr(), bs[1].addr()), bs
}

// TestNodeServesPerQueryAnswers runs a controller and a node (-node) on the
// same config file's records and geo block: the node answers per query as
// the controller does (geo by client subnet, one weighted address), from
// its replicated copy, and follows a failover.
func TestNodeServesPerQueryAnswers(t *testing.T) {
	cfg, bs := replicatedAnswersYAML(t)
	ctl := startDaemon(t, cfg)
	node := startDaemon(t, cfg+fmt.Sprintf("node: {url: \"http://%s/replication\", interval: 200ms}\n", ctl.http), "-node")
	guard := 60 * time.Second
	both := func(name string, ecs netip.Prefix, want ...string) func() bool {
		return func() bool {
			return slices.Equal(sorted(ask(t, ctl.dns, name, ecs)), want) && slices.Equal(sorted(ask(t, node.dns, name, ecs)), want)
		}
	}
	waitFor(t, guard, "node answers eu's addresses to an eu client", both("geo.example.test.", euClient, "192.0.2.1", "192.0.2.2"))
	for _, c := range []struct {
		ecs  netip.Prefix
		want []string
	}{{usClient, []string{"192.0.2.3"}}, {farClient, []string{"192.0.2.4"}}} {
		if got := sorted(ask(t, node.dns, "geo.example.test.", c.ecs)); !slices.Equal(got, c.want) {
			t.Errorf("node: geo for %v: %v, want %v", c.ecs, got, c.want)
		}
	}
	waitFor(t, guard, "node has the weighted record", func() bool { return len(ask(t, node.dns, "w.example.test.", netip.Prefix{})) > 0 })
	seen := countAnswers(t, node.dns, "w.example.test.", 100)
	if seen["192.0.2.8"] == 0 || seen["192.0.2.9"] == 0 || len(seen) != 2 {
		t.Errorf("node: weightedRandom over 100 queries: %v, want .8 and .9", seen)
	}
	bs[0].down.Store(true)
	bs[1].down.Store(true)
	waitFor(t, guard, "node falls back along eu's preferences", both("geo.example.test.", euClient, "192.0.2.3"))

	_, body := get(t, node.http, "/api/status")
	var st statusView
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	if st.Answers["geo.example.test."] != "geo" || st.Answers["w.example.test."] != "weightedRandom" || st.Answers["rf.example.test."] != "regionFilter" {
		t.Errorf("node status answers: %v", st.Answers)
	}
}

// TestAnswerConfigErrors: every bad answer setting is refused with a
// *FieldError naming the field, its value and what is allowed.
func TestAnswerConfigErrors(t *testing.T) {
	const base = `zone: example.test.
probe: {policy: {interval: 10s, timeout: 1s}}
records:
  - name: a.example.test.
    ANSWER
    addresses:
      - {ip: 192.0.2.1, regions: [eu], weight: 1}
      - {ip: 192.0.2.2, regions: [us], weight: WEIGHT}
`
	const geo = "geo: {prefixes: {\"198.51.100.0/24\": eu, \"203.0.113.0/24\": us}, preferences: {eu: [us]}, default: us}\n"
	cfg := func(answer, weight, extra string) string {
		s := strings.Replace(base, "ANSWER", answer, 1)
		return strings.Replace(s, "WEIGHT", weight, 1) + extra
	}
	cases := []struct {
		name, yaml, field, value string
	}{
		{"unknown kind", cfg("answer: nearest", "1", ""), "records[0].answer", "nearest"},
		{"kind in the wrong case", cfg("answer: WeightedRandom", "1", ""), "records[0].answer", "WeightedRandom"},
		{"geo without a geo block", cfg("answer: geo", "1", ""), "records[0].answer", "geo"},
		{"regionFilter without a geo block", cfg("answer: regionFilter", "1", ""), "records[0].answer", "regionFilter"},
		{"geo with the priority strategy", cfg("answer: geo", "1", geo+"policy: {strategy: {kind: priority}}\n"), "records[0].answer", "geo"},
		{"geo block without a geo record", cfg("answer: weightedRandom", "1", geo), "geo", "a geo block"},
		{"weightedRandom with every weight 0", strings.Replace(cfg("answer: weightedRandom", "0", ""), "weight: 1}", "weight: 0}", 1), "records[0].addresses", "every weight 0"},
		{"per-query answers with an external provider", cfg("answer: roundRobin", "1", "provider: {type: rfc2136, rfc2136: {server: \"127.0.0.1:53\"}}\n"), "records[0].answer", "roundRobin"},
		{"prefix with host bits set", cfg("answer: geo", "1", "geo: {prefixes: {\"198.51.100.1/24\": eu}}\n"), "geo.prefixes[198.51.100.1/24]", "198.51.100.1/24"},
		{"prefix to an empty region", cfg("answer: geo", "1", "geo: {prefixes: {\"198.51.100.0/24\": \"\"}}\n"), "geo.prefixes[198.51.100.0/24]", ""},
		{"prefix to a region no address has", cfg("answer: geo", "1", "geo: {prefixes: {\"198.51.100.0/24\": eu-west}}\n"), "geo.prefixes[198.51.100.0/24]", "eu-west"},
		{"default region no address has", cfg("answer: geo", "1", "geo: {prefixes: {\"198.51.100.0/24\": eu}, default: ap}\n"), "geo.default", "ap"},
		{"preference to a region no address has", cfg("answer: geo", "1", "geo: {prefixes: {\"198.51.100.0/24\": eu}, preferences: {eu: [ap]}}\n"), "geo.preferences[eu][0]", "ap"},
		{"preference listed twice", cfg("answer: geo", "1", "geo: {prefixes: {\"198.51.100.0/24\": eu}, preferences: {eu: [us, us]}}\n"), "geo.preferences[eu][1]", "us"},
		{"preferences of a region no client is placed in", cfg("answer: geo", "1", "geo: {prefixes: {\"198.51.100.0/24\": eu}, preferences: {us: [eu]}}\n"), "geo.preferences[us]", "us"},
		{"geo block that places nobody", cfg("answer: geo", "1", "geo: {preferences: {}}\n"), "geo.prefixes", "{}"},
		{"within without geo", cfg("answer: weightedRandom\n    within: roundRobin", "1", ""), "records[0].within", "roundRobin"},
		{"within without an answer", cfg("within: weightedRandom", "1", ""), "records[0].within", "weightedRandom"},
		{"within geo", cfg("answer: geo\n    within: geo", "1", geo), "records[0].within", "geo"},
		{"within in the wrong case", cfg("answer: geo\n    within: WeightedRandom", "1", geo), "records[0].within", "WeightedRandom"},
		{"within weightedRandom with every weight 0", strings.Replace(cfg("answer: regionFilter\n    within: weightedRandom", "0", geo), "weight: 1}", "weight: 0}", 1), "records[0].addresses", "every weight 0"},
		{"geo record without an address in a geo region", cfg("answer: geo", "1",
			"  - name: b.example.test.\n    answer: geo\n    addresses: [{ip: 192.0.2.9, regions: [ap]}]\n"+geo), "records[1].addresses", "no address in a region of the geo block"},
	}
	for _, tc := range cases {
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
			if ce.Path != tc.field || ce.Value != fmt.Sprintf("%q", tc.value) || ce.Allowed == "" {
				t.Fatalf("err = %v: field %q value %s, want %q %q with an allowed range", err, ce.Path, ce.Value, tc.field, tc.value)
			}
			t.Log(err)
		})
	}
	// The same block is fine with a geo record, every weight 0 is fine
	// for the other kinds, and one positive weight for within
	// weightedRandom.
	for _, y := range []string{cfg("answer: geo", "1", geo), cfg("answer: regionFilter", "0", geo), cfg("answer: roundRobin", "0", ""), cfg("answer: all", "0", ""), cfg("", "0", ""),
		cfg("answer: geo\n    within: weightedRandom", "0", geo), cfg("answer: regionFilter\n    within: roundRobin", "0", geo), cfg("answer: geo\n    within: all", "0", geo)} {
		c, err := ParseConfig([]byte(y))
		if err == nil {
			err = c.Validate()
		}
		if err != nil {
			t.Errorf("%v\n%s", err, y)
		}
	}
}

// TestNodeAnswerConfig: a node validates the records it answers per
// query (and only those) and the geo block.
func TestNodeAnswerConfig(t *testing.T) {
	const head = "zone: example.test.\nreplication: {secret: 0123456789abcdef}\nnode: {url: http://ctl:8053/replication}\n"
	ok := head + `geo: {prefixes: {"198.51.100.0/24": eu}}
records:
  - name: a.example.test
    answer: geo
    addresses: [{ip: 192.0.2.1, regions: [eu]}]
  - name: b.example.test.
    probe: {type: ICMP}          # not a node's business
    addresses: [{ip: nonsense}]
`
	c, err := ParseConfig([]byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ValidateNode(); err != nil {
		t.Fatalf("ValidateNode: %v", err)
	}
	if c.Records[0].Name != "a.example.test." {
		t.Errorf("name not normalised: %q", c.Records[0].Name)
	}
	for _, tc := range []struct{ name, yaml, field string }{
		{"outside the node's zones", strings.Replace(ok, "name: a.example.test", "name: a.other.test", 1), "records[0].name"},
		{"bad address", strings.Replace(ok, "ip: 192.0.2.1,", "ip: 192.0.2.300,", 1), "records[0].addresses[0].ip"},
		{"geo without a block", strings.Replace(ok, `geo: {prefixes: {"198.51.100.0/24": eu}}`, "", 1), "records[0].answer"},
		{"bad prefix region", strings.Replace(ok, ": eu}}", ": us}}", 1), "geo.prefixes[198.51.100.0/24]"},
		{"duplicate name", ok + "  - {name: a.example.test., answer: roundRobin, addresses: [{ip: 192.0.2.2}]}\n", "records[2].name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			var ce *FieldError
			if err := c.ValidateNode(); !errors.As(err, &ce) || ce.Path != tc.field {
				t.Fatalf("err = %v, want field %q", err, tc.field)
			}
		})
	}
}

// TestAnswerConfigYAMLAndJSON: the answer field and the geo block read the
// same in YAML and JSON, and YAML type errors in them name path and line.
func TestAnswerConfigYAMLAndJSON(t *testing.T) {
	y := `zone: example.test.
records:
  - name: a.example.test.
    answer: geo
    addresses: [{ip: 192.0.2.1, regions: [eu]}, {ip: "2001:db8::1", regions: [us]}]
geo:
  prefixes:
    "198.51.100.0/24": eu
    "2001:db8:1::/48": us
  preferences: {eu: [us]}
  default: us
`
	j := `{"zone": "example.test.", "records": [{"name": "a.example.test.", "answer": "geo",
  "addresses": [{"ip": "192.0.2.1", "regions": ["eu"]}, {"ip": "2001:db8::1", "regions": ["us"]}]}],
 "geo": {"prefixes": {"198.51.100.0/24": "eu", "2001:db8:1::/48": "us"}, "preferences": {"eu": ["us"]}, "default": "us"}}`
	var got []Config
	for _, src := range []string{y, j} {
		c, err := ParseConfig([]byte(src))
		if err == nil {
			err = c.Validate()
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c)
	}
	for i, c := range got {
		if c.Records[0].Answer != AnswerGeo || c.Geo == nil || len(c.Geo.Prefixes) != 2 || c.Geo.Default != "us" ||
			c.Geo.Prefixes[netip.MustParsePrefix("2001:db8:1::/48")] != "us" || !slices.Equal(c.Geo.Preferences["eu"], []string{"us"}) {
			t.Errorf("config %d: answer %q geo %+v", i, c.Records[0].Answer, c.Geo)
		}
	}
	for _, tc := range []struct{ name, yaml, want string }{
		{"bad prefix key", strings.Replace(y, `"2001:db8:1::/48"`, `"2001:db8:1::/129"`, 1), `config: geo.prefixes.2001:db8:1::/129 (line 9): key "2001:db8:1::/129": `},
		{"answer as a list", strings.Replace(y, "answer: geo", "answer: [geo]", 1), `config: records[0].answer (line 4): want a string, got a list`},
		{"preferences as a string", strings.Replace(y, "{eu: [us]}", "{eu: us}", 1), `config: geo.preferences.eu (line 10): want a list`},
		{"unknown geo field", y + "  fallback: us\n", `config: geo.fallback (line 12): unknown field "fallback" (allowed: coordinates, default, preferences, prefixes)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestCheckPrintsAnswerKinds: -check says how each record is answered.
func TestCheckPrintsAnswerKinds(t *testing.T) {
	r := RecordSpec{Answer: AnswerGeo, Within: AnswerWeightedRandom, Addresses: []AddressSpec{{IP: "192.0.2.1", Regions: []string{"eu"}, Weight: 3}, {IP: "192.0.2.2", Regions: []string{"eu"}, Weight: 1}}}
	if got, want := answerSummary(Config{}, r), "geo (regions eu; within the region: one address per query, weights 192.0.2.1=3, 192.0.2.2=1)"; got != want {
		t.Errorf("summary with within weightedRandom: %q, want %q", got, want)
	}
	var out syncBuffer
	if err := run(context.Background(), []string{"-config", "gslbd.example.yaml", "-check"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  app.gslb.example.test.: answer all (every published address)\n",
		"  api.gslb.example.test.: answer weightedRandom (one address per query; weights 192.0.2.50=3, 192.0.2.51=1)\n",
		"  www.gslb.example.test.: answer geo (regions eu-west, us-east; 3 prefixes, default us-east)\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-check output lacks %q:\n%s", want, out.String())
		}
	}
	out = syncBuffer{}
	if err := run(context.Background(), []string{"-config", "gslbd.example.yaml", "-check", "-node"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "  www.gslb.example.test.: answer geo") || strings.Contains(out.String(), "app.gslb.example.test.") {
		t.Errorf("-check -node output:\n%s", out.String())
	}
	// A per-query kind with an external provider is refused.
	y, err := os.ReadFile("gslbd.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	s := strings.Replace(string(y), "  type: embedded ", "  type: rfc2136\n  rfc2136: {server: \"127.0.0.1:53\"}\n ", 1)
	if err := os.WriteFile(bad, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), []string{"-config", bad, "-check"}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "records[1].answer") || !strings.Contains(err.Error(), "provider.type embedded") {
		t.Fatalf("per-query answer with rfc2136: %v", err)
	}
}

// TestAnswerHooksAllocateNothing: the hooks gslbd registers for
// weightedRandom and geo records (the library's, unwrapped), and for geo
// with within weightedRandom (the two chained), answer queries
// with EDNS Client Subnet on the embedded zone's fast path with no
// allocation per query, the geo region's addresses adjacent or not.
func TestAnswerHooksAllocateNothing(t *testing.T) {
	c := newTestController(t, `zone: example.test.
records:
  - name: w.example.test.
    answer: weightedRandom
    addresses:
      - {ip: 192.0.2.1, weight: 3, probeAddr: "10.0.0.1:80"}
      - {ip: 192.0.2.2, weight: 1, probeAddr: "10.0.0.2:80"}
  - name: g.example.test.
    answer: geo
    addresses:
      - {ip: 192.0.2.1, regions: [eu], probeAddr: "10.0.0.1:80"}
      - {ip: 192.0.2.2, regions: [us], probeAddr: "10.0.0.2:80"}
      - {ip: 192.0.2.3, regions: [eu], probeAddr: "10.0.0.3:80"}
  - name: gw.example.test.
    answer: geo
    within: weightedRandom
    addresses:
      - {ip: 192.0.2.1, regions: [eu], weight: 3, probeAddr: "10.0.0.1:80"}
      - {ip: 192.0.2.2, regions: [us], weight: 1, probeAddr: "10.0.0.2:80"}
      - {ip: 192.0.2.3, regions: [eu], weight: 1, probeAddr: "10.0.0.3:80"}
geo:
  prefixes: {"198.51.100.0/24": eu, "203.0.113.0/24": us}
  default: us
`)
	buf := make([]byte, 4096)
	src := netip.MustParseAddr("127.0.0.1")
	for _, tc := range []struct {
		name string
		ecs  string
		want int
	}{{"w.example.test.", "198.51.100.0/24", 1}, {"g.example.test.", "198.51.100.0/24", 2}, {"g.example.test.", "203.0.113.0/24", 1},
		{"gw.example.test.", "198.51.100.0/24", 1}, {"gw.example.test.", "203.0.113.0/24", 1}} {
		m := new(dns.Msg)
		m.SetQuestion(tc.name, dns.TypeA)
		o := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
		o.SetUDPSize(1232)
		p := netip.MustParsePrefix(tc.ecs)
		o.Option = []dns.EDNS0{&dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: uint8(p.Bits()), Address: net.IP(p.Addr().AsSlice())}}
		m.Extra = []dns.RR{o}
		q, err := m.Pack()
		if err != nil {
			t.Fatal(err)
		}
		r := new(dns.Msg)
		if err := r.Unpack(c.zone.RespondUDP(q, buf, src)); err != nil || len(r.Answer) != tc.want {
			t.Fatalf("%s for %s: %v (%v), want %d addresses", tc.name, tc.ecs, r.Answer, err, tc.want)
		}
		if allocs := testing.AllocsPerRun(200, func() { c.zone.RespondUDP(q, buf, src) }); allocs != 0 {
			t.Errorf("%s for %s: %v allocations per query, want 0", tc.name, tc.ecs, allocs)
		}
	}
}

// TestAnswerDigest: the digest of a config's per-query answers ignores
// what does not change an answer (name case and final dot, the order of
// addresses and of an address's regions, an IPv4 address written as
// IPv4-mapped IPv6, within "all") and tells apart what does (a weight, a
// region, within, a record only one side answers per query, the geo
// block).
func TestAnswerDigest(t *testing.T) {
	base := func() Config {
		return Config{
			Records: []RecordSpec{
				{Name: "a.example.test.", Answer: AnswerGeo, Addresses: []AddressSpec{
					{IP: "192.0.2.1", Regions: []string{"eu", "us"}, Weight: 2}, {IP: "192.0.2.2", Regions: []string{"us"}}}},
				{Name: "b.example.test.", Addresses: []AddressSpec{{IP: "192.0.2.3"}}}, // all: not per query
			},
			Geo: &failover.GeoMap{Prefixes: map[netip.Prefix]string{netip.MustParsePrefix("198.51.100.0/24"): "eu"}, Default: "us"},
		}
	}
	d := digestAnswers(base())
	if len(d.Names) != 1 || d.Geo == "" {
		t.Fatalf("digest %+v: want one name and the geo block", d)
	}
	same := base()
	same.Records[0].Name = "A.Example.Test"
	same.Records[0].Within = AnswerAll
	same.Records[0].Addresses = []AddressSpec{{IP: "192.0.2.2", Regions: []string{"us"}}, {IP: "::ffff:192.0.2.1", Regions: []string{"us", "eu"}, Weight: 2}}
	if diff := d.differences(digestAnswers(same)); len(diff) != 0 {
		t.Errorf("an equivalent config differs in %v", diff)
	}
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   []string
	}{
		{"weight", func(c *Config) { c.Records[0].Addresses[1].Weight = 1 }, []string{"a.example.test."}},
		{"region", func(c *Config) { c.Records[0].Addresses[1].Regions = []string{"eu"} }, []string{"a.example.test."}},
		{"within", func(c *Config) { c.Records[0].Within = AnswerWeightedRandom }, []string{"a.example.test."}},
		{"kind", func(c *Config) { c.Records[0].Answer = AnswerRegionFilter }, []string{"a.example.test."}},
		{"one more per-query record", func(c *Config) { c.Records[1].Answer = AnswerRoundRobin }, []string{"b.example.test."}},
		{"no per-query record", func(c *Config) { c.Records[0].Answer = AnswerAll; c.Geo = nil }, []string{"a.example.test.", "geo"}},
		{"geo default", func(c *Config) { c.Geo.Default = "eu" }, []string{"geo"}},
	} {
		c := base()
		tc.change(&c)
		if got := d.differences(digestAnswers(c)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: differences %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestNodeComparesAnswersWithController runs a controller and two nodes:
// one with the controller's records and geo block (and interval and
// timeout left out, the defaults), one whose file lags
// (a weight changed, a record without its answer kind). The first reports
// its answers as the controller's, the second names what differs, in its
// status, on its status page and in gslbd_node_answers_differ, and stays
// ready: a difference is a warning. The controller's digest endpoint wants
// the replication secret.
func TestNodeComparesAnswersWithController(t *testing.T) {
	cfg, _ := replicatedAnswersYAML(t)
	ctl := startDaemon(t, cfg)
	follow := fmt.Sprintf("node: {url: \"http://%s/replication\", interval: 200ms}\n", ctl.http)
	// Interval and timeout left out take the defaults (10 s, 5 s): the
	// first comparison is made at start.
	same := startDaemon(t, cfg+fmt.Sprintf("node: {url: \"http://%s/replication\"}\n", ctl.http), "-node")
	lagging := strings.Replace(cfg, "{ip: 192.0.2.9, weight: 1,", "{ip: 192.0.2.9, weight: 2,", 1)
	lagging = strings.Replace(lagging, "    answer: regionFilter\n", "", 1)
	stale := startDaemon(t, lagging+follow, "-node")

	checked := func(d *daemon) statusView {
		var st statusView
		waitFor(t, 60*time.Second, "the node compared its answers with the controller's", func() bool {
			_, body := get(t, d.http, "/api/status")
			return json.Unmarshal([]byte(body), &st) == nil && st.AnswersCheck != nil && st.AnswersCheck.CheckedAt != nil
		})
		return st
	}
	if st := checked(same); !st.AnswersCheck.Same || len(st.AnswersCheck.Differ) != 0 || st.AnswersCheck.Error != "" {
		t.Errorf("node with the controller's config: %+v", st.AnswersCheck)
	}
	st := checked(stale)
	if want := []string{"rf.example.test.", "w.example.test."}; st.AnswersCheck.Same || !slices.Equal(st.AnswersCheck.Differ, want) {
		t.Errorf("lagging node: %+v, want differ %v", st.AnswersCheck, want)
	}
	if _, page := get(t, stale.http, "/"); !strings.Contains(page, "differ from the controller's config") || !strings.Contains(page, "<code>w.example.test.</code>") {
		t.Error("lagging node's status page does not say what differs")
	}
	if _, m := get(t, stale.http, "/metrics"); !strings.Contains(m, "gslbd_node_answers_differ 2") {
		t.Errorf("lagging node's metrics lack gslbd_node_answers_differ 2")
	}
	waitFor(t, 60*time.Second, "the lagging node is ready once synced", func() bool {
		code, _ := get(t, stale.http, "/readyz")
		return code == http.StatusOK
	})
	if code, _ := get(t, ctl.http, "/replication/answers"); code != http.StatusUnauthorized {
		t.Errorf("GET /replication/answers without the secret: %d, want 401", code)
	}
}
