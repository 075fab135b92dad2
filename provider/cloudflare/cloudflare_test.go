package cloudflare_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/errclass"
	"github.com/gslbkit/gslb/provider"
	"github.com/gslbkit/gslb/provider/cloudflare"
	"github.com/gslbkit/gslb/provider/providertest"
	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	token  = "gslbkit-test-token"
	zoneID = "0123456789abcdef0123456789abcdef"
)

func newProvider(t *testing.T, f *fakeCloudflare, mutate func(*cloudflare.Config)) *cloudflare.Provider {
	t.Helper()
	cfg := cloudflare.DefaultConfig()
	cfg.APIToken = token
	cfg.HTTPClient = f.client()
	if mutate != nil {
		mutate(&cfg)
	}
	p, err := cloudflare.New(cfg)
	require.NoError(t, err)
	return p
}

// The adapter passes the conformance suite against a local HTTP server
// speaking Cloudflare's documented API v4 JSON (Cloudflare itself cannot
// be reached from here), reached through the provider's HTTPClient, which
// routes requests for api.cloudflare.com to it. Like Cloudflare, the
// server refuses a CNAME beside other data and accepts (flattens) a CNAME
// at the apex.
func TestConformanceFakeCloudflare(t *testing.T) {
	f := newFakeCloudflare(t, token, zoneID, "example.test")
	providertest.Run(t, newProvider(t, f, nil), "example.test.", providertest.Capabilities{
		CNAMEBesideData: providertest.Refuse,
		ApexCNAME:       providertest.Accept,
		ListZones:       true,
	})
}

// With the zone ID configured no lookup is made; a wrong zone name then
// still acts on that zone (documented), and an unknown name without an
// ID is ErrNoZone.
func TestZoneLookup(t *testing.T) {
	f := newFakeCloudflare(t, token, zoneID, "example.test")
	p := newProvider(t, f, nil)
	_, err := p.GetRecords(context.Background(), "other.test.")
	require.ErrorIs(t, err, cloudflare.ErrNoZone)
	q := newProvider(t, f, func(c *cloudflare.Config) { c.ZoneID = zoneID })
	_, err = q.GetRecords(context.Background(), "Example.Test")
	require.NoError(t, err)
}

// Cloudflare's error answers are classified, as the local server sends
// them in Cloudflare's JSON: HTTP 429 with code 971 is throttled and
// carries its Retry-After, 5xx is transient, a bad token or a conflicting
// record is permanent.
func TestClassification(t *testing.T) {
	f := newFakeCloudflare(t, token, zoneID, "example.test")
	p := newProvider(t, f, func(c *cloudflare.Config) { c.ZoneID = zoneID })
	ctx := context.Background()
	cases := []struct {
		name    string
		failure fakeFailure
		want    errclass.Class
		wait    time.Duration
	}{
		{"429", fakeFailure{429, 971, "7"}, errclass.Throttled, 7 * time.Second},
		{"code 971 on 400", fakeFailure{400, 971, ""}, errclass.Throttled, 0},
		{"503", fakeFailure{503, 0, ""}, errclass.Transient, 0},
		{"500", fakeFailure{500, 10001, ""}, errclass.Transient, 0},
		{"403", fakeFailure{403, 10000, ""}, errclass.Permanent, 0},
		{"400", fakeFailure{400, 9005, ""}, errclass.Permanent, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f.fail(c.failure)
			_, err := p.GetRecords(ctx, "example.test.")
			require.Error(t, err)
			assert.Equal(t, c.want, errclass.Of(err), "%v", err)
			var ae *cloudflare.APIError
			require.True(t, errors.As(err, &ae))
			assert.Equal(t, c.failure.status, ae.StatusCode())
			assert.Equal(t, c.wait, ae.RetryAfter())
		})
	}
	t.Run("CNAME conflict", func(t *testing.T) {
		_, err := p.SetRecords(ctx, "example.test.", []libdns.Record{libdns.Address{Name: "c", IP: netip.MustParseAddr("192.0.2.1"), TTL: time.Minute}})
		require.NoError(t, err)
		_, err = p.SetRecords(ctx, "example.test.", []libdns.Record{libdns.CNAME{Name: "c", Target: "x.example.net.", TTL: time.Minute}})
		var ae *cloudflare.APIError
		require.True(t, errors.As(err, &ae), "%v", err)
		assert.True(t, ae.HasCode(81053))
		assert.Equal(t, errclass.Permanent, errclass.Of(err))
	})
	t.Run("wrong token", func(t *testing.T) {
		q := newProvider(t, f, func(c *cloudflare.Config) { c.APIToken = "wrong"; c.ZoneID = zoneID })
		_, err := q.GetRecords(ctx, "example.test.")
		assert.Equal(t, errclass.Permanent, errclass.Of(err))
	})
	t.Run("bad gateway page", func(t *testing.T) {
		srv := http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte("<html>502 Bad Gateway</html>"))
		})}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		go func() { _ = srv.Serve(l) }()
		defer srv.Close()
		client := &http.Client{Transport: rewrite{target: mustURL("http://" + l.Addr().String()), base: http.DefaultTransport.(*http.Transport).Clone()}}
		q, err := cloudflare.New(cloudflare.Config{APIToken: token, ZoneID: zoneID, Timeout: 5 * time.Second, HTTPClient: client})
		require.NoError(t, err)
		_, err = q.GetRecords(ctx, "example.test.")
		assert.Equal(t, errclass.Transient, errclass.Of(err), "%v", err)
		client.CloseIdleConnections()
	})
	t.Run("nobody listening", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.Addr().String()
		require.NoError(t, l.Close())
		client := &http.Client{Transport: rewrite{target: mustURL("http://" + addr), base: http.DefaultTransport}}
		q, err := cloudflare.New(cloudflare.Config{APIToken: token, ZoneID: zoneID, Timeout: 5 * time.Second, HTTPClient: client})
		require.NoError(t, err)
		_, err = q.GetRecords(ctx, "example.test.")
		assert.Equal(t, errclass.Transient, errclass.Of(err), "%v", err)
	})
}

// Behind provider.Retry a 429 is waited out, the Retry-After hint capped
// by MaxDelay.
func TestRetryThroughThrottling(t *testing.T) {
	f := newFakeCloudflare(t, token, zoneID, "example.test")
	p := newProvider(t, f, func(c *cloudflare.Config) { c.ZoneID = zoneID })
	rc := provider.DefaultRetryConfig()
	rc.BaseDelay, rc.ThrottledDelay, rc.MaxDelay = time.Millisecond, time.Millisecond, 5*time.Millisecond
	retry, err := provider.NewRetry(rc)
	require.NoError(t, err)
	meter := provider.NewMeter(nil)
	w := provider.Wrap(p, retry, meter)
	f.fail(fakeFailure{429, 971, "1"}, fakeFailure{502, 0, ""})
	_, err = w.SetRecords(context.Background(), "example.test.", []libdns.Record{libdns.TXT{Name: "hb", Text: "v=1; ts=2", TTL: time.Minute}})
	require.NoError(t, err)
	st := meter.Stats().Method(provider.MethodSetRecords)
	assert.Equal(t, int64(3), st.Calls)
	assert.Equal(t, int64(1), st.Throttled)
	assert.Equal(t, int64(1), st.Transient)
}

// A TXT given as several strings is sent as those quoted strings and read
// back in the same form; content over Cloudflare's 2,048 characters is
// refused before sending.
func TestTXTStringsContent(t *testing.T) {
	f := newFakeCloudflare(t, token, zoneID, "example.test")
	p := newProvider(t, f, nil)
	ctx := context.Background()
	spf := `"v=spf1 include:a" " include:b ~all"`
	_, err := p.SetRecords(ctx, "example.test.", []libdns.Record{libdns.RR{Name: "@", Type: "TXT", TTL: time.Minute, Data: spf}})
	require.NoError(t, err)
	recs, err := p.GetRecords(ctx, "example.test.")
	require.NoError(t, err)
	assert.Contains(t, recs, libdns.Record(libdns.RR{Name: "@", Type: "TXT", TTL: time.Minute, Data: spf}))

	_, err = p.SetRecords(ctx, "example.test.", []libdns.Record{libdns.TXT{Name: "big", TTL: time.Minute, Text: strings.Repeat("x", 2100)}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "2048")
}
