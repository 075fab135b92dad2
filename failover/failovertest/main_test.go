package failovertest_test

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"go.uber.org/goleak"

	"github.com/gslbkit/gslb/failover/failovertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// twoRegions is the reference document's deployment: regions eu and us,
// one cluster each, two gateways per cluster with an IPv4 and an IPv6
// address each.
func twoRegions(cfg failovertest.Config) *failovertest.Scenario {
	return failovertest.New(cfg).
		Region("eu").Region("us").
		Cluster("eu-1", "eu").Cluster("us-1", "us").
		Gateway("eu-1", "eu-a", "192.0.2.1", "2001:db8:e::1").
		Gateway("eu-1", "eu-b", "192.0.2.2", "2001:db8:e::2").
		Gateway("us-1", "us-a", "198.51.100.1", "2001:db8:a::1").
		Gateway("us-1", "us-b", "198.51.100.2", "2001:db8:a::2")
}

func cat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// assertHeld asserts that a held answer is not empty and holds only
// addresses of from.
func assertHeld(t *testing.T, got []netip.Addr, from []string) {
	t.Helper()
	require.NotEmpty(t, got, "answer emptied")
	for _, a := range got {
		assert.Contains(t, from, a.String())
	}
}

// neverEmpty declares that, at every zone change, a client in each region
// gets some address for the app name, and only declared ones.
func neverEmpty(s *failovertest.Scenario, regions ...string) *failovertest.Scenario {
	var all []string
	for _, r := range regions {
		all = append(all, s.RegionAddrs(r)...)
	}
	return s.Always("app name answers", func(w *failovertest.World) error {
		for _, r := range regions {
			got := w.Resolve(r, s.AppName())
			if len(got) == 0 {
				return fmt.Errorf("%s: empty answer in %s (chain %v)", s.AppName(), r, w.Chain(r, s.AppName()))
			}
			for _, a := range got {
				if !slices.Contains(all, a.String()) {
					return fmt.Errorf("%s: undeclared address %s in %s", s.AppName(), a, r)
				}
			}
		}
		return nil
	})
}

func sorted(ss []string) []string {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return addrStrings(out)
}

func addrStrings(as []netip.Addr) []string {
	out := make([]string, 0, len(as))
	for _, a := range as {
		out = append(out, a.String())
	}
	return out
}
