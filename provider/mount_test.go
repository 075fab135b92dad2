package provider_test

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/provider"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/record"
	"github.com/gslbkit/gslb/record/fencetest"
)

func addrAt(name, ip string) libdns.Record {
	return libdns.Address{Name: name, TTL: time.Minute, IP: netip.MustParseAddr(ip)}
}

// names returns "name type data" of recs, sorted.
func names(recs []libdns.Record) []string {
	var out []string
	for _, r := range recs {
		rr := r.RR()
		out = append(out, rr.Name+" "+rr.Type+" "+rr.Data)
	}
	slices.Sort(out)
	return out
}

// Two regions' private copies of local.example.test. kept as subtrees of
// the one shared zone: each region reads and writes its own, and the
// shared zone holds both under their region's name.
func TestMountsSubtrees(t *testing.T) {
	ctx := context.Background()
	shared := &memory.Provider{}
	require.NoError(t, shared.AddZone("example.test."))
	view := func(region string) *provider.Mounts {
		m, err := provider.NewMounts(map[string]provider.Mount{
			"example.test.":       {Store: shared},
			"Local.Example.Test.": {Store: shared, Zone: "example.test.", Below: region + ".local"},
		})
		require.NoError(t, err)
		return m
	}
	eu, us := view("eu"), view("us")
	_, err := eu.SetRecords(ctx, "local.example.test.", []libdns.Record{addrAt("edge", "192.0.2.1"), addrAt("@", "192.0.2.9")})
	require.NoError(t, err)
	set, err := us.SetRecords(ctx, "local.example.test", []libdns.Record{addrAt("edge", "192.0.2.2")})
	require.NoError(t, err)
	assert.Equal(t, []string{"edge A 192.0.2.2"}, names(set), "returned renamed back")
	_, err = eu.SetRecords(ctx, "example.test.", []libdns.Record{libdns.CNAME{Name: "app", TTL: time.Minute, Target: "edge.local.example.test."}})
	require.NoError(t, err)

	got, err := eu.GetRecords(ctx, "local.example.test.")
	require.NoError(t, err)
	assert.Equal(t, []string{"@ A 192.0.2.9", "edge A 192.0.2.1"}, names(got))
	got, err = us.GetRecords(ctx, "local.example.test.")
	require.NoError(t, err)
	assert.Equal(t, []string{"edge A 192.0.2.2"}, names(got))

	all, err := shared.GetRecords(ctx, "example.test.")
	require.NoError(t, err)
	var kept []string
	for _, s := range names(all) {
		if !strings.Contains(s, " SOA ") && !strings.Contains(s, " NS ") {
			kept = append(kept, s)
		}
	}
	assert.Equal(t, []string{"app CNAME edge.local.example.test.", "edge.eu.local A 192.0.2.1", "edge.us.local A 192.0.2.2", "eu.local A 192.0.2.9"}, kept,
		"CNAME targets are not rewritten; each region's copy lives below its name")

	del, err := eu.DeleteRecords(ctx, "local.example.test.", []libdns.Record{libdns.RR{Name: "edge", Type: "A"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"edge A 192.0.2.1"}, names(del))
	got, err = us.GetRecords(ctx, "local.example.test.")
	require.NoError(t, err)
	assert.Equal(t, []string{"edge A 192.0.2.2"}, names(got), "the other region's copy untouched")

	zones, err := eu.ListZones(ctx)
	require.NoError(t, err)
	assert.Equal(t, []libdns.Zone{{Name: "example.test."}, {Name: "local.example.test."}}, zones)

	_, err = eu.GetRecords(ctx, "other.test.")
	require.ErrorIs(t, err, provider.ErrNotMounted)
	where, ok := eu.Where("LOCAL.example.test")
	require.True(t, ok)
	assert.Equal(t, "example.test.", where.Zone)
	assert.Equal(t, "eu.local", where.Below)
}

// Fenced writes through a subtree mount: the fence is renamed like any
// record, so each region's copy has a fence of its own, and the kit's
// scenarios hold.
func TestMountsFencing(t *testing.T) {
	fencetest.Run(t, "local.example.test.", func(context.Context) (fencetest.Store, error) {
		shared := &memory.Provider{}
		if err := shared.AddZone("example.test."); err != nil {
			return nil, err
		}
		return provider.NewMounts(map[string]provider.Mount{
			"local.example.test.": {Store: shared, Zone: "example.test.", Below: "eu.local"},
		})
	})
	ctx := context.Background()
	shared := &memory.Provider{}
	require.NoError(t, shared.AddZone("example.test."))
	m, err := provider.NewMounts(map[string]provider.Mount{"local.example.test.": {Store: shared, Zone: "example.test.", Below: "eu.local"}})
	require.NoError(t, err)
	r, err := record.New(m, record.LocalConfig("deploy"), record.Options{FenceToken: 3})
	require.NoError(t, err)
	_, err = r.Apply(ctx, record.Desired{Sets: []record.RRSet{{Zone: "local.example.test.", Name: "edge", Type: "A", TTL: time.Minute, Values: []string{"192.0.2.1"}}}})
	require.NoError(t, err)
	all, err := shared.GetRecords(ctx, "example.test.")
	require.NoError(t, err)
	assert.Contains(t, strings.Join(names(all), "\n"), "_gslb-fence.eu.local TXT deploy 3 ", "the region's fence lives in its subtree")
}

// A store without a method fails that call clearly.
func TestMountsUnsupported(t *testing.T) {
	ctx := context.Background()
	p := &memory.Provider{}
	require.NoError(t, p.AddZone("example.test."))
	m, err := provider.NewMounts(map[string]provider.Mount{"example.test.": {Store: plainStore{p}}})
	require.NoError(t, err)
	require.ErrorIs(t, m.ReplaceRecords(ctx, "example.test.", nil, nil), provider.ErrUnsupported)
	require.ErrorIs(t, m.ReplaceFenced(ctx, "example.test.", libdns.TXT{}, libdns.TXT{}, nil, nil), provider.ErrUnsupported)
	ro, err := provider.NewMounts(map[string]provider.Mount{"example.test.": {Store: getterOnly{p}}})
	require.NoError(t, err)
	_, err = ro.SetRecords(ctx, "example.test.", []libdns.Record{addrAt("a", "192.0.2.1")})
	require.ErrorIs(t, err, provider.ErrUnsupported)
	_, err = ro.AppendRecords(ctx, "example.test.", []libdns.Record{addrAt("a", "192.0.2.1")})
	require.ErrorIs(t, err, provider.ErrUnsupported)
	_, err = ro.DeleteRecords(ctx, "example.test.", []libdns.Record{addrAt("a", "192.0.2.1")})
	require.ErrorIs(t, err, provider.ErrUnsupported)
	var zero provider.Mounts
	_, err = zero.GetRecords(ctx, "example.test.")
	require.ErrorIs(t, err, provider.ErrNotMounted)
}

// getterOnly hides every method of a provider but GetRecords.
type getterOnly struct{ libdns.RecordGetter }

func TestNewMountsErrors(t *testing.T) {
	p := &memory.Provider{}
	for _, c := range []struct {
		mounts map[string]provider.Mount
		want   string
	}{
		{map[string]provider.Mount{"": {Store: p}}, `provider: invalid mounts: mounts[""] = "": allowed a domain name`},
		{map[string]provider.Mount{"a..b.": {Store: p}}, `provider: invalid mounts: mounts["a..b."] = "a..b.": allowed a domain name`},
		{map[string]provider.Mount{"example.test.": {}}, `provider: invalid mounts: mounts["example.test."].Store = <nil>: allowed a provider`},
		{map[string]provider.Mount{"example.test.": {Store: p, Below: "eu."}}, `provider: invalid mounts: mounts["example.test."].Below = "eu.": allowed a relative domain name (no trailing dot)`},
		{map[string]provider.Mount{"example.test.": {Store: p}, "EXAMPLE.test": {Store: p}}, `each zone once`},
	} {
		_, err := provider.NewMounts(c.mounts)
		require.ErrorIs(t, err, provider.ErrMountConfig)
		assert.Contains(t, err.Error(), c.want)
	}
}

// FuzzMountOut feeds a subtree mount whatever a DNS server might return (a
// zone transfer of the shared zone): only names at or below the subtree
// come out, renamed relative to the mounted zone, and what goes in comes
// out again unchanged.
func FuzzMountOut(f *testing.F) {
	f.Add("edge.eu-west.local", "A", "10.1.1.1", "httpbin", "CNAME", "edge.local.example.test.")
	f.Add("eu-west.local", "TXT", "v=gslb1", "edge.global", "CNAME", "httpbin.example.test.")
	f.Add("x.us-east.local", "CNAME", "x.local.example.test.", "@", "NS", "ns1")
	f.Add("", "", "", "httpbin", "A", "not-an-ip")
	f.Add("EDGE.EU-WEST.LOCAL", "AAAA", "2001:db8::1", "xeu-west.local", "A", "192.0.2.1")
	mount := provider.Mount{Store: readOnly{}, Zone: "example.test.", Below: "eu-west.local"}
	f.Fuzz(func(t *testing.T, n1, t1, d1, n2, t2, d2 string) {
		recs := []libdns.Record{
			libdns.RR{Name: n1, Type: t1, Data: d1, TTL: time.Minute},
			libdns.RR{Name: n2, Type: t2, Data: d2, TTL: time.Minute},
		}
		for _, r := range mount.Out(recs) {
			rr := r.RR()
			if rr.Name == "" || strings.HasSuffix(strings.ToLower(rr.Name), ".eu-west.local") && rr.Name != "@" {
				t.Fatalf("record name %q not renamed into the mounted zone", rr.Name)
			}
			in, err := mount.Into([]libdns.Record{r})
			if err != nil {
				t.Fatalf("Into(%v): %v", rr, err)
			}
			back := mount.Out(in)
			if len(back) != 1 || back[0].RR() != rr {
				t.Fatalf("round trip: %v → %v → %v", rr, in, back)
			}
		}
	})
}

// Example of a per-region private zone kept in a subtree of a shared one.
func ExampleMounts() {
	ctx := context.Background()
	shared := &memory.Provider{}
	if err := shared.AddZone("example.test."); err != nil {
		fmt.Println(err)
		return
	}
	eu, err := provider.NewMounts(map[string]provider.Mount{
		"example.test.":       {Store: shared},
		"local.example.test.": {Store: shared, Zone: "example.test.", Below: "eu.local"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := eu.SetRecords(ctx, "local.example.test.", []libdns.Record{
		libdns.Address{Name: "edge", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.1")},
	}); err != nil {
		fmt.Println(err)
		return
	}
	mine, _ := eu.GetRecords(ctx, "local.example.test.")
	all, _ := shared.GetRecords(ctx, "example.test.")
	for _, r := range mine {
		fmt.Println("eu sees:", r.RR().Name, r.RR().Data)
	}
	for _, r := range all {
		if r.RR().Type == "A" {
			fmt.Println("shared zone holds:", r.RR().Name, r.RR().Data)
		}
	}
	// Output:
	// eu sees: edge 192.0.2.1
	// shared zone holds: edge.eu.local 192.0.2.1
}

// record.New grants a Reconciler over a Mounts the fenced writes only when
// every store can fence: two in-memory zones can, a plain libdns provider
// beside one cannot.
func TestMountsCapabilitiesForRecord(t *testing.T) {
	a, b := &memory.Provider{}, &memory.Provider{}
	both, err := provider.NewMounts(map[string]provider.Mount{"a.test.": {Store: a}, "b.test.": {Store: b}})
	require.NoError(t, err)
	_, err = record.New(both, record.LocalConfig("deploy"), record.Options{FenceToken: 1})
	require.NoError(t, err)
	mixed, err := provider.NewMounts(map[string]provider.Mount{"a.test.": {Store: a}, "b.test.": {Store: plainStore{b}}})
	require.NoError(t, err)
	_, err = record.New(mixed, record.LocalConfig("deploy"), record.Options{FenceToken: 1})
	require.ErrorIs(t, err, record.ErrCannotFence)
	assert.Len(t, mixed.Unwrap(), 2)
}
