package health

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

func ptr(b bool) *bool { return &b }

func TestEndpointReadiness(t *testing.T) {
	cases := []struct {
		name    string
		eps     []Endpoint
		healthy bool
	}{
		{"no endpoints", nil, false},
		{"one ready", []Endpoint{{Conditions: EndpointConditions{Ready: ptr(true)}}}, true},
		{"nil ready counts as ready", []Endpoint{{}}, true},
		{"all not ready", []Endpoint{{Conditions: EndpointConditions{Ready: ptr(false)}}, {Conditions: EndpointConditions{Ready: ptr(false)}}}, false},
		{"terminating but serving is not ready", []Endpoint{{Conditions: EndpointConditions{Ready: ptr(false), Serving: ptr(true), Terminating: ptr(true)}}}, false},
		{"terminating with nil ready is not ready", []Endpoint{{Conditions: EndpointConditions{Terminating: ptr(true)}}}, false},
		{"one of many", []Endpoint{{Conditions: EndpointConditions{Ready: ptr(false)}}, {Conditions: EndpointConditions{Ready: ptr(true)}}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r EndpointReadiness
			r.Set(EndpointSlice{Name: "s1", Endpoints: c.eps})
			require.Equal(t, c.healthy, r.Check(t0).Healthy, r.Check(t0).Reason)
		})
	}
	t.Run("across slices, and a deleted slice no longer counts", func(t *testing.T) {
		var r EndpointReadiness
		r.Set(EndpointSlice{Name: "a", Endpoints: []Endpoint{{Conditions: EndpointConditions{Ready: ptr(false)}}}})
		r.Set(EndpointSlice{Name: "b", Endpoints: []Endpoint{{}}})
		require.True(t, r.Check(t0).Healthy)
		r.Delete("b")
		s := r.Check(t0)
		require.False(t, s.Healthy)
		require.Equal(t, "0 of 1 endpoints ready", s.Reason)
	})
}

// fakeResolver answers from a table and counts lookups.
type fakeResolver struct {
	mu     sync.Mutex
	answer map[string][]netip.Addr
	err    map[string]error
	calls  int
}

func (f *fakeResolver) LookupNetIP(ctx context.Context, _, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if err := f.err[host]; err != nil {
		return nil, err
	}
	return f.answer[host], nil
}

func (f *fakeResolver) set(host string, ips []netip.Addr, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answer[host], f.err[host] = ips, err
}

func TestExternalAddressBackgroundResolver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res := &fakeResolver{answer: map[string][]netip.Addr{}, err: map[string]error{}}
		lb := netip.MustParseAddr("203.0.113.10")
		res.set("lb.example.com", []netip.Addr{lb}, nil)
		cfg := DefaultAddressConfig() // refresh 30s, maxStale 90s
		a, err := NewExternalAddress(cfg, res)
		require.NoError(t, err)
		a.now = time.Now

		require.Equal(t, "no external address", a.Check(time.Now()).Reason)
		a.SetStatus([]netip.Addr{netip.MustParseAddr("198.51.100.1")}, "")
		require.True(t, a.Check(time.Now()).Healthy, "a load-balancer IP is enough")

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- a.Run(ctx) }()

		a.SetStatus(nil, "lb.example.com")
		synctest.Wait()
		require.True(t, a.Check(time.Now()).Healthy, "resolved at once on a new hostname")
		ips, age := a.Addresses(time.Now())
		require.Equal(t, []netip.Addr{lb}, ips)
		require.Zero(t, age)

		// Cache: a temporary failure keeps the last answer up to maxStale.
		res.set("lb.example.com", nil, &net.DNSError{Err: "timeout", IsTimeout: true})
		time.Sleep(31 * time.Second) // virtual time: one refresh
		synctest.Wait()
		require.True(t, a.Check(time.Now()).Healthy)
		_, age = a.Addresses(time.Now())
		require.Equal(t, 31*time.Second, age, "the cached answer carries its age")
		time.Sleep(90 * time.Second)
		synctest.Wait()
		require.False(t, a.Check(time.Now()).Healthy, "beyond maxStale the stale answer no longer counts")

		// Refresh after recovery.
		res.set("lb.example.com", []netip.Addr{lb}, nil)
		time.Sleep(30 * time.Second)
		synctest.Wait()
		require.True(t, a.Check(time.Now()).Healthy)

		// A name that does not exist is unhealthy at once.
		res.set("lb.example.com", nil, &net.DNSError{Err: "no such host", IsNotFound: true})
		time.Sleep(30 * time.Second)
		synctest.Wait()
		s := a.Check(time.Now())
		require.False(t, s.Healthy)
		require.Contains(t, s.Reason, "does not resolve")
		cancel()
		require.NoError(t, <-done)
		res.mu.Lock()
		require.GreaterOrEqual(t, res.calls, 5)
		res.mu.Unlock()
	})
}

func TestExternalAddressEmptyAnswerIsUnhealthy(t *testing.T) {
	res := &fakeResolver{answer: map[string][]netip.Addr{}, err: map[string]error{}}
	a, err := NewExternalAddress(DefaultAddressConfig(), res)
	require.NoError(t, err)
	a.SetStatus(nil, "empty.example.com")
	require.Error(t, a.Resolve(context.Background()))
	require.False(t, a.Check(time.Now()).Healthy)
	require.True(t, errors.Is(a.Resolve(context.Background()), errNoAddresses))
}

func TestAddressConfigValidate(t *testing.T) {
	c := DefaultAddressConfig()
	c.Timeout = time.Duration(time.Hour)
	require.EqualError(t, c.Validate(), "health: invalid config: timeout = 1h: allowed [10ms, refresh (30s)]")
	_, err := NewExternalAddress(AddressConfig{Refresh: time.Millisecond}, nil)
	require.ErrorIs(t, err, ErrInvalidConfig)
	_, err = NewExternalAddress(AddressConfig{}, nil)
	require.NoError(t, err, "a zero config takes the defaults")
}

// OnChange is called when a lookup changes what the signal knows (first
// answer, other addresses, failing, recovering), not on a lookup that
// repeats the last answer, and not by SetStatus.
func TestExternalAddressOnChange(t *testing.T) {
	res := &fakeResolver{answer: map[string][]netip.Addr{}, err: map[string]error{}}
	a, err := NewExternalAddress(DefaultAddressConfig(), res)
	require.NoError(t, err)
	calls := 0
	a.OnChange(func() { calls++ })
	one, two := netip.MustParseAddr("203.0.113.1"), netip.MustParseAddr("2001:db8::1")
	res.set("lb.example.com", []netip.Addr{one}, nil)
	a.SetStatus(nil, "lb.example.com")
	require.Zero(t, calls, "SetStatus does not call it")
	ctx := context.Background()
	steps := []struct {
		ips  []netip.Addr
		err  error
		want int
	}{
		{[]netip.Addr{one}, nil, 1},                                    // first answer
		{[]netip.Addr{one}, nil, 1},                                    // the same again
		{[]netip.Addr{one, two}, nil, 2},                               // another address
		{nil, &net.DNSError{Err: "timeout", IsTimeout: true}, 3},       // failing
		{nil, &net.DNSError{Err: "timeout", IsTimeout: true}, 3},       // still failing
		{[]netip.Addr{one, two}, nil, 4},                               // recovered
		{nil, &net.DNSError{Err: "no such host", IsNotFound: true}, 5}, // gone
	}
	for i, s := range steps {
		res.set("lb.example.com", s.ips, s.err)
		_ = a.Resolve(ctx)
		require.Equal(t, s.want, calls, "step %d", i)
	}
	a.OnChange(nil)
	res.set("lb.example.com", []netip.Addr{one}, nil)
	require.NoError(t, a.Resolve(ctx))
	require.Equal(t, 5, calls, "removed")
}
