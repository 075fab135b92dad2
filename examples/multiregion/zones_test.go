package main

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/internal/testproc"
	"github.com/gslbkit/gslb/provider"
	"github.com/gslbkit/gslb/provider/memory"
)

// TestViewSubtree checks the RFC 2136 mode's emulated split horizon on an
// in-memory store: each region's view of the local zone is a subtree of
// the one zone, names are rewritten both ways, and a region never sees
// another region's copy.
func TestViewSubtree(t *testing.T) {
	ctx := context.Background()
	n := newNames("example.test")
	store := new(memory.Provider)
	require.NoError(t, store.AddZone(n.global))
	mk := func(region string) *view {
		v, err := newView(region, map[string]provider.Mount{
			n.global: {Store: store},
			n.local:  {Store: store, Zone: n.global, Below: region + ".local"},
		})
		require.NoError(t, err)
		return v
	}
	eu, us := mk("eu-west"), mk("us-east")
	a := func(name, ip string) libdns.Record {
		return libdns.Address{Name: name, TTL: time.Minute, IP: netip.MustParseAddr(ip)}
	}
	_, err := eu.SetRecords(ctx, n.local, []libdns.Record{a("edge", "10.1.1.1"), a("@", "10.1.0.1")})
	require.NoError(t, err)
	_, err = us.SetRecords(ctx, n.local, []libdns.Record{a("edge", "10.2.1.1")})
	require.NoError(t, err)

	names := func(recs []libdns.Record) []string {
		var out []string
		for _, r := range recs {
			if rr := r.RR(); rr.Type == "A" {
				out = append(out, rr.Name+" "+rr.Data)
			}
		}
		return out
	}
	raw, err := store.GetRecords(ctx, n.global)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"edge.eu-west.local 10.1.1.1", "eu-west.local 10.1.0.1", "edge.us-east.local 10.2.1.1"}, names(raw))

	cases := []struct {
		name string
		v    *view
		want []string
	}{
		{"eu-west sees its copy, apex included", eu, []string{"@ 10.1.0.1", "edge 10.1.1.1"}},
		{"us-east sees only its own", us, []string{"edge 10.2.1.1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			recs, err := c.v.GetRecords(ctx, n.local)
			require.NoError(t, err)
			assert.ElementsMatch(t, c.want, names(recs))
		})
	}

	del, err := eu.DeleteRecords(ctx, n.local, []libdns.Record{libdns.RR{Name: "edge", Type: "A"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"edge 10.1.1.1"}, names(del))
	got := us.resolve(ctx, "edge.local.example.test.")
	require.NoError(t, got.err)
	assert.Equal(t, []netip.Addr{netip.MustParseAddr("10.2.1.1")}, got.addrs)

	_, err = eu.GetRecords(ctx, "other.test.")
	assert.ErrorIs(t, err, provider.ErrNotMounted)
}

// TestInterrupted checks that a run cancelled by its caller (Ctrl-C)
// stops every loop and returns nil.
func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out testproc.Buffer
	err := runWith(ctx, []string{"-interval", "200ms", "-pause", "10s", "-dns-port", "-1"}, &out,
		func(i int, slug string, d *deployment) { cancel() })
	require.NoError(t, err, out.String())
	assert.Contains(t, out.String(), "STEP 0 start")
	assert.NotContains(t, out.String(), "STEP 1")
}
