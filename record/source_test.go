package record

import (
	"net/netip"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/require"
)

// viewSource is a Source as another package would write it: plain libdns
// values per view and zone.
type viewSource map[string]struct {
	recs map[string][]libdns.Record
	wd   map[string][]libdns.RR
}

func (v viewSource) Records(view string) map[string][]libdns.Record { return v[view].recs }
func (v viewSource) Withdrawals(view string) map[string][]libdns.RR { return v[view].wd }

func TestFromSourceKeepsViewsAndWithdrawals(t *testing.T) {
	ttl := 30 * time.Second
	src := viewSource{
		"": {
			recs: map[string][]libdns.Record{"example.test.": {
				libdns.CNAME{Name: "app", TTL: ttl, Target: "app.pool.example.test."},
				libdns.Address{Name: "app.pool", TTL: ttl, IP: netip.MustParseAddr("192.0.2.1")},
				libdns.Address{Name: "app.pool", TTL: ttl, IP: netip.MustParseAddr("192.0.2.2")},
			}},
			wd: map[string][]libdns.RR{"example.test.": {{Name: "app.pool", Type: "AAAA"}}},
		},
		"eu": {
			recs: map[string][]libdns.Record{"local.example.test.": {
				libdns.Address{Name: "edge", TTL: ttl, IP: netip.MustParseAddr("192.0.2.9")},
			}},
		},
	}
	d := FromSource(src)
	require.Equal(t, []RRSet{
		{Zone: "example.test.", Name: "app", Type: "CNAME", TTL: ttl, Values: []string{"app.pool.example.test."}},
		{Zone: "example.test.", Name: "app.pool", Type: "A", TTL: ttl, Values: []string{"192.0.2.1", "192.0.2.2"}},
	}, d.Sets)
	require.Equal(t, []Key{{Zone: "example.test.", Name: "app.pool", Type: "AAAA"}}, d.Withdraw)
	require.NoError(t, d.Validate())

	eu := FromSource(src, "eu")
	require.Len(t, eu.Sets, 1)
	require.Equal(t, "local.example.test.", eu.Sets[0].Zone)
	require.Empty(t, eu.Withdraw)
	both := FromSource(src, "", "eu")
	require.Len(t, both.Sets, 3)
	require.Len(t, both.Withdraw, 1)
}
