package route53_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/route53/types"
	"github.com/gslbkit/gslb/internal/errclass"
	"github.com/gslbkit/gslb/internal/testmoto"
	"github.com/gslbkit/gslb/provider"
	"github.com/gslbkit/gslb/provider/providertest"
	"github.com/gslbkit/gslb/provider/route53"
	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newProvider(t *testing.T, f *fakeRoute53, zoneID string) *route53.Provider {
	t.Helper()
	testmoto.Env(t, f.URL)
	cfg := route53.DefaultConfig()
	cfg.HostedZoneID = zoneID
	p, err := route53.New(cfg)
	require.NoError(t, err)
	return p
}

// The adapter passes the conformance suite against a local HTTP server
// speaking Route 53's documented REST/XML wire format (Route 53 itself
// cannot be reached from here), reached through the AWS SDK's endpoint
// override AWS_ENDPOINT_URL_ROUTE_53 with one SDK attempt per call. Like
// Route 53, the server refuses a CNAME beside other data and at the apex.
func TestConformanceFakeRoute53(t *testing.T) {
	f := newFakeRoute53(t, "Z0GSLBKIT", "example.test.")
	providertest.Run(t, newProvider(t, f, "Z0GSLBKIT"), "example.test.", providertest.Capabilities{})
}

// Without a hosted zone ID the zone is found by name; names are normalised.
func TestZoneLookupByName(t *testing.T) {
	f := newFakeRoute53(t, "Z0GSLBKIT", "example.test.")
	p := newProvider(t, f, "")
	_, err := p.SetRecords(context.Background(), "Example.Test", []libdns.Record{libdns.TXT{Name: "hello", Text: "world", TTL: time.Minute}})
	require.NoError(t, err)
	recs, err := p.GetRecords(context.Background(), "example.test")
	require.NoError(t, err)
	assert.Contains(t, recs, libdns.Record(libdns.TXT{Name: "hello", Text: "world", TTL: time.Minute}))

	_, err = p.GetRecords(context.Background(), "other.test.")
	require.Error(t, err)
	assert.Equal(t, errclass.Permanent, errclass.Of(err))
}

// Route 53's error responses are classified, as the local server sends
// them in Route 53's wire format: <Code>Throttling</Code> and
// PriorRequestNotComplete with HTTP 400 are throttled, 5xx transient,
// InvalidChangeBatch and access errors permanent.
func TestClassification(t *testing.T) {
	cases := []struct {
		name    string
		failure fakeFailure
		want    errclass.Class
	}{
		{"Throttling", fakeFailure{400, "Throttling"}, errclass.Throttled},
		{"PriorRequestNotComplete", fakeFailure{400, "PriorRequestNotComplete"}, errclass.Throttled},
		{"HTTP 429", fakeFailure{429, "TooManyRequests"}, errclass.Throttled},
		{"ServiceUnavailable", fakeFailure{503, "ServiceUnavailable"}, errclass.Transient},
		{"InternalFailure", fakeFailure{500, "InternalFailure"}, errclass.Transient},
		{"AccessDenied", fakeFailure{403, "AccessDenied"}, errclass.Permanent},
		{"InvalidInput", fakeFailure{400, "InvalidInput"}, errclass.Permanent},
	}
	f := newFakeRoute53(t, "Z0GSLBKIT", "example.test.")
	p := newProvider(t, f, "Z0GSLBKIT")
	rec := []libdns.Record{libdns.Address{Name: "www", IP: netip.MustParseAddr("192.0.2.1"), TTL: time.Minute}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f.fail(c.failure)
			_, err := p.SetRecords(context.Background(), "example.test.", rec)
			require.Error(t, err)
			assert.Equal(t, c.want, errclass.Of(err), "%v", err)
			assert.Equal(t, c.failure.code, route53.ErrorCode(err))
		})
	}
	t.Run("InvalidChangeBatch", func(t *testing.T) {
		_, err := p.SetRecords(context.Background(), "example.test.", []libdns.Record{libdns.CNAME{Name: "@", Target: "x.example.net.", TTL: time.Minute}})
		var icb *types.InvalidChangeBatch
		require.True(t, errors.As(err, &icb), "%v", err)
		assert.Equal(t, errclass.Permanent, errclass.Of(err))
	})
	t.Run("nobody listening", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.Addr().String()
		require.NoError(t, l.Close())
		testmoto.Env(t, "http://"+addr)
		cfg := route53.DefaultConfig()
		cfg.HostedZoneID = "Z0GSLBKIT"
		q, err := route53.New(cfg)
		require.NoError(t, err)
		_, err = q.GetRecords(context.Background(), "example.test.")
		require.Error(t, err)
		assert.Equal(t, errclass.Transient, errclass.Of(err), "%v", err)
	})
}

// Behind provider.Retry, throttling answers are waited out.
func TestRetryThroughThrottling(t *testing.T) {
	f := newFakeRoute53(t, "Z0GSLBKIT", "example.test.")
	p := newProvider(t, f, "Z0GSLBKIT")
	rc := provider.DefaultRetryConfig()
	rc.BaseDelay, rc.ThrottledDelay, rc.MaxDelay = time.Millisecond, time.Millisecond, 5*time.Millisecond
	retry, err := provider.NewRetry(rc)
	require.NoError(t, err)
	meter := provider.NewMeter(nil)
	w := provider.Wrap(p, retry, meter)
	f.fail(fakeFailure{400, "Throttling"}, fakeFailure{400, "PriorRequestNotComplete"})
	_, err = w.GetRecords(context.Background(), "example.test.")
	require.NoError(t, err)
	st := meter.Stats().Method(provider.MethodGetRecords)
	assert.Equal(t, int64(3), st.Calls)
	assert.Equal(t, int64(2), st.Throttled)
}

// WaitForSync: after a change batch the adapter asks GetChange until the
// change is INSYNC. The SDK's waiter sleeps at least 30 s in real time
// between tries, so these cases never need a second try: INSYNC at once;
// an error from GetChange, classified like any other; and a change still
// PENDING when the caller's context ends, which returns at once instead of
// sleeping. Without WaitForSync no GetChange is sent.
func TestWaitForSync(t *testing.T) {
	rec := []libdns.Record{libdns.Address{Name: "www", IP: netip.MustParseAddr("192.0.2.1"), TTL: time.Minute}}
	newSyncProvider := func(t *testing.T, f *fakeRoute53, wait bool) *route53.Provider {
		testmoto.Env(t, f.URL)
		cfg := route53.DefaultConfig()
		cfg.HostedZoneID = "Z0GSLBKIT"
		cfg.WaitForSync = wait
		p, err := route53.New(cfg)
		require.NoError(t, err)
		return p
	}
	getChanges := func(f *fakeRoute53) int {
		f.mu.Lock()
		defer f.mu.Unlock()
		n := 0
		for _, r := range f.requests {
			if r == "GET /2013-04-01/change/C1" {
				n++
			}
		}
		return n
	}

	t.Run("INSYNC at once", func(t *testing.T) {
		f := newFakeRoute53(t, "Z0GSLBKIT", "example.test.")
		p := newSyncProvider(t, f, true)
		_, err := p.SetRecords(context.Background(), "example.test.", rec)
		require.NoError(t, err)
		assert.Equal(t, 1, getChanges(f))
	})
	t.Run("not asked", func(t *testing.T) {
		f := newFakeRoute53(t, "Z0GSLBKIT", "example.test.")
		p := newSyncProvider(t, f, false)
		_, err := p.SetRecords(context.Background(), "example.test.", rec)
		require.NoError(t, err)
		assert.Zero(t, getChanges(f))
	})
	t.Run("GetChange throttled", func(t *testing.T) {
		f := newFakeRoute53(t, "Z0GSLBKIT", "example.test.")
		p := newSyncProvider(t, f, true)
		f.mu.Lock()
		f.failGetChange = &fakeFailure{400, "Throttling"}
		f.mu.Unlock()
		_, err := p.SetRecords(context.Background(), "example.test.", rec)
		require.Error(t, err)
		assert.Equal(t, errclass.Throttled, errclass.Of(err), "%v", err)
		assert.Equal(t, "Throttling", route53.ErrorCode(err))
		assert.Contains(t, err.Error(), "INSYNC")
		assert.Equal(t, 1, getChanges(f))
	})
	t.Run("PENDING until the context ends", func(t *testing.T) {
		f := newFakeRoute53(t, "Z0GSLBKIT", "example.test.")
		p := newSyncProvider(t, f, true)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		f.mu.Lock()
		f.changeStatus = []string{"PENDING"}
		f.onGetChange = cancel
		f.mu.Unlock()
		_, err := p.SetRecords(ctx, "example.test.", rec)
		require.Error(t, err)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Contains(t, err.Error(), "INSYNC")
		assert.Equal(t, 1, getChanges(f))
	})
}

// An SPF record given as several strings reaches Route 53 as those quoted
// strings (not one string holding the quotes) and reads back in the same
// form, so the reconciler sees it unchanged only when it is.
func TestTXTStringsOnTheWire(t *testing.T) {
	f := newFakeRoute53(t, "Z0GSLBKIT", "example.test.")
	p := newProvider(t, f, "Z0GSLBKIT")
	ctx := context.Background()
	spf := `"v=spf1 include:a" " include:b ~all"`
	_, err := p.SetRecords(ctx, "example.test.", []libdns.Record{libdns.RR{Name: "@", Type: "TXT", TTL: time.Minute, Data: spf}})
	require.NoError(t, err)
	f.mu.Lock()
	var wire []string
	for k, s := range f.sets {
		if k.typ == "TXT" {
			wire = append(wire, s.Values...)
		}
	}
	f.mu.Unlock()
	assert.Equal(t, []string{spf}, wire)
	recs, err := p.GetRecords(ctx, "example.test.")
	require.NoError(t, err)
	assert.Contains(t, recs, libdns.Record(libdns.RR{Name: "@", Type: "TXT", TTL: time.Minute, Data: spf}))

	// A value over Route 53's 4,000 characters is refused before sending.
	n := len(f.requests)
	_, err = p.SetRecords(ctx, "example.test.", []libdns.Record{libdns.TXT{Name: "big", TTL: time.Minute, Text: strings.Repeat("é", 700)}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "4000")
	assert.Equal(t, n, len(f.requests), "nothing sent")
}
