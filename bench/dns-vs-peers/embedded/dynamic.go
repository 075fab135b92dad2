package main

import (
	"bufio"
	"fmt"
	"net/netip"
	"os"
	"strings"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/provider/memory"
)

// The dynamic scenario's names (bench/dns-vs-peers/dynamic.sh): w answers
// one of 4 addresses by weight 1/2/3/4, g the 2 addresses of the client's
// region (EDNS Client Subnet, else the source address) from a table of
// prefixes, falling back along the regions' preferences.
var (
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
	return nil
}
