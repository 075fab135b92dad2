package main

import (
	"bufio"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
)

// The dynamic scenario's names (bench/dns-vs-peers/dynamic.sh): w answers
// one of 4 addresses by weight 1/2/3/4, g the 2 addresses of the client's
// region (EDNS Client Subnet, else the source address) from a table of
// prefixes, falling back along the regions' preferences, k one of 4
// addresses per client network (failover.Sticky, rendezvous hashing of the
// client's /24 or /56).
var (
	dynSticky  = []string{"192.0.2.21", "192.0.2.22", "192.0.2.23", "192.0.2.24"}
	dynWeights = map[string]int{"192.0.2.1": 1, "192.0.2.2": 2, "192.0.2.3": 3, "192.0.2.4": 4}
	dynRegions = map[string][]string{
		"us": {"198.51.100.1", "198.51.100.2"},
		"eu": {"198.51.100.11", "198.51.100.12"},
		"ap": {"198.51.100.21", "198.51.100.22"},
	}
)

// setupDynamic registers the weighted and geo answer hooks on p; nets holds
// one "prefix region" per line.
func setupDynamic(p *memory.Provider, nets string) error {
	f, err := os.Open(nets)
	if err != nil {
		return err
	}
	defer f.Close()
	g := failover.GeoMap{Prefixes: map[netip.Prefix]string{}, Preferences: map[string][]string{"us": {"eu", "ap"}, "eu": {"us", "ap"}, "ap": {"eu", "us"}}, Default: "us"}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 2 {
			continue
		}
		pf, err := netip.ParsePrefix(fs[0])
		if err != nil {
			return fmt.Errorf("%s: %w", nets, err)
		}
		g.Prefixes[pf] = fs[1]
	}
	if err := sc.Err(); err != nil {
		return err
	}
	loc, err := failover.NewLocator(g)
	if err != nil {
		return err
	}
	tags := map[netip.Addr][]string{}
	for reg, as := range dynRegions {
		for _, a := range as {
			tags[netip.MustParseAddr(a)] = []string{reg}
		}
	}
	w := map[netip.Addr]int{}
	for a, n := range dynWeights {
		w[netip.MustParseAddr(a)] = n
	}
	p.SetAnswerFunc("w."+zoneName, memory.AnswerFunc(failover.WeightedRandom(w, nil)))
	p.SetAnswerFunc("g."+zoneName, memory.AnswerFunc(failover.Geo(loc, tags)))
	sticky, err := failover.Sticky(stickyV4, stickyV6)
	if err != nil {
		return err
	}
	p.SetAnswerFunc("k."+zoneName, memory.AnswerFunc(sticky))
	return nil
}

// Sticky's client networks in the scenario.
const stickyV4, stickyV6 = 24, 56

// writeStickyRanks writes, for each prefix of nets (one "prefix ..." per
// line), "prefix a1 a2 a3 a4": the sticky addresses in the order
// failover.Sticky chooses them for that client network (its choice, then
// its choice once that one is gone, ...). dynamic.sh turns it into gdnsd's
// geoip nets map, so gdnsd answers every listed network as k does,
// failing over in the same order.
func writeStickyRanks(nets, out string) error {
	f, err := os.Open(nets)
	if err != nil {
		return err
	}
	defer f.Close()
	sticky, err := failover.Sticky(stickyV4, stickyV6)
	if err != nil {
		return err
	}
	var b strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 {
			continue
		}
		pf, err := netip.ParsePrefix(fs[0])
		if err != nil {
			return fmt.Errorf("%s: %w", nets, err)
		}
		var rrs []libdns.Record
		for _, a := range dynSticky {
			rrs = append(rrs, libdns.Address{Name: "k", IP: netip.MustParseAddr(a)})
		}
		b.WriteString(pf.String())
		for len(rrs) > 0 {
			got, _ := sticky(pf, "k."+zoneName, "A", rrs)
			if len(got) != 1 {
				return fmt.Errorf("sticky answered %d records for %s", len(got), pf)
			}
			chosen := got[0].RR().Data
			b.WriteString(" " + chosen)
			rrs = slices.DeleteFunc(rrs, func(r libdns.Record) bool { return r.RR().Data == chosen })
		}
		b.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return os.WriteFile(out, []byte(b.String()), 0o644)
}
