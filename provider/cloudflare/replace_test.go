package cloudflare_test

import (
	"context"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/provider/cloudflare"
	"github.com/gslbkit/gslb/record"
)

var _ record.Replacer = (*cloudflare.Provider)(nil)

// ReplaceRecords against the fake API: one batch deletes a name and
// switches another from addresses to a CNAME (the fake, like Cloudflare,
// refuses a CNAME beside other data, and applies a batch's deletes
// first); a Reconciler's type switch is one write.
func TestReplaceRecords(t *testing.T) {
	ctx := context.Background()
	f := newFakeCloudflare(t, token, zoneID, "example.test")
	p := newProvider(t, f, nil)
	at := func(name, typ string) []string {
		recs, err := p.GetRecords(ctx, "example.test.")
		require.NoError(t, err)
		var out []string
		for _, r := range recs {
			if rr := r.RR(); rr.Name == name && rr.Type == typ {
				out = append(out, rr.Data)
			}
		}
		slices.Sort(out)
		return out
	}
	addr := func(name, ip string) libdns.Record {
		return libdns.Address{Name: name, TTL: time.Minute, IP: netip.MustParseAddr(ip)}
	}
	_, err := p.SetRecords(ctx, "example.test.", []libdns.Record{addr("app", "192.0.2.1"), addr("app", "192.0.2.2"), addr("old", "192.0.2.1"), addr("keep", "192.0.2.1")})
	require.NoError(t, err)
	recs, err := p.GetRecords(ctx, "example.test.")
	require.NoError(t, err)
	var del []libdns.Record
	for _, r := range recs {
		if rr := r.RR(); rr.Type == "A" && (rr.Name == "app" || rr.Name == "old") {
			del = append(del, r)
		}
	}
	require.Len(t, del, 3)
	require.NoError(t, p.ReplaceRecords(ctx, "example.test.", del, []libdns.Record{
		libdns.CNAME{Name: "app", TTL: time.Minute, Target: "pool.example.test."},
		addr("keep", "192.0.2.1"), // already so: nothing sent for it
	}))
	assert.Empty(t, at("app", "A"))
	assert.Empty(t, at("old", "A"))
	assert.Equal(t, []string{"pool.example.test."}, at("app", "CNAME"))
	assert.Equal(t, []string{"192.0.2.1"}, at("keep", "A"))
	require.NoError(t, p.ReplaceRecords(ctx, "example.test.", nil, nil))

	cfg := record.CloudflareConfig("deploy")
	cfg.AllowTypeSwitch = true
	r, err := record.New(p, cfg, record.Options{})
	require.NoError(t, err)
	_, err = r.Apply(ctx, record.Desired{Sets: []record.RRSet{{Zone: "example.test.", Name: "web", Type: "A", TTL: time.Minute, Values: []string{"192.0.2.7"}}}})
	require.NoError(t, err)
	rep, err := r.Apply(ctx, record.Desired{Sets: []record.RRSet{{Zone: "example.test.", Name: "web", Type: "CNAME", TTL: time.Minute, Values: []string{"pool.example.test."}}}})
	require.NoError(t, err)
	assert.Equal(t, []string{"pool.example.test."}, at("web", "CNAME"))
	assert.Empty(t, at("web", "A"))
	assert.Equal(t, 1, rep.Writes, "the switch is one atomic write")
}
