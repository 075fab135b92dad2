package providertest_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gslbkit/gslb/internal/errclass"
	"github.com/gslbkit/gslb/provider"
	"github.com/gslbkit/gslb/provider/providertest"
	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The reference provider passes the suite with the zero Capabilities.
func TestRunOnReference(t *testing.T) {
	p := &refProvider{recs: []libdns.RR{
		{Name: "@", Type: "SOA", TTL: time.Minute, Data: "ns1.example.test. hostmaster.example.test. 1 60 60 600 30"},
		{Name: "@", Type: "NS", TTL: time.Minute, Data: "ns1.example.test."},
		{Name: "ns1", Type: "A", TTL: time.Minute, Data: "127.0.0.1"},
	}}
	// Cleanups run last-in first-out: this check runs after the suite's own
	// clean-up. Everything the suite created is gone again, the apex untouched.
	t.Cleanup(func() {
		assert.Len(t, p.recs, 3, "records left behind: %v", p.recs)
	})
	providertest.Run(t, p, "example.test.", providertest.Capabilities{})
}

// The suite passes through a chain of every wrapper, with the Faulty
// wrapper injecting nothing.
func TestRunThroughWrappers(t *testing.T) {
	f, err := providertest.NewFaulty(&refProvider{}, providertest.FaultConfig{Seed: 1})
	require.NoError(t, err)
	retry, err := provider.NewRetry(provider.DefaultRetryConfig())
	require.NoError(t, err)
	w := provider.Wrap(f, provider.NewMeter(nil), retry)
	providertest.Run(t, w, "example.test.", providertest.Capabilities{})
}

func TestFaultyValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  providertest.FaultConfig
		ok   bool
	}{
		{"zero", providertest.FaultConfig{}, true},
		{"all throttled", providertest.FaultConfig{ThrottleRate: 1}, true},
		{"negative", providertest.FaultConfig{TransientRate: -0.1}, false},
		{"above one", providertest.FaultConfig{PermanentRate: 1.5}, false},
		{"sum above one", providertest.FaultConfig{ThrottleRate: 0.6, PartialRate: 0.6}, false},
		{"negative latency", providertest.FaultConfig{Latency: -1}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := providertest.NewFaulty(&refProvider{}, c.cfg)
			if c.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
}

func rec(name, ip string) libdns.Record {
	return libdns.Address{Name: name, IP: netip.MustParseAddr(ip), TTL: time.Minute}
}

func TestFaultyInjectedKinds(t *testing.T) {
	ctx := context.Background()
	p := &refProvider{}
	f, err := providertest.NewFaulty(p, providertest.FaultConfig{})
	require.NoError(t, err)
	f.Inject(providertest.Throttle, providertest.Transient, providertest.Permanent, providertest.Partial, providertest.Partial, providertest.NoFault)

	batch := []libdns.Record{rec("a", "192.0.2.1"), rec("b", "192.0.2.2"), rec("c", "192.0.2.3")}
	want := []struct {
		class errclass.Class
	}{{errclass.Throttled}, {errclass.Transient}, {errclass.Permanent}}
	for i, w := range want {
		_, err := f.SetRecords(ctx, "example.test.", batch)
		require.Error(t, err, "call %d", i)
		assert.ErrorIs(t, err, providertest.ErrInjected)
		assert.Equal(t, w.class, errclass.Of(err), "call %d", i)
	}
	assert.Empty(t, p.recs, "refused calls must not reach the provider")

	// Partial: a prefix of the batch lands, then a transient error.
	_, err = f.SetRecords(ctx, "example.test.", batch)
	var fe *providertest.FaultError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, providertest.Partial, fe.Kind)
	assert.Equal(t, errclass.Transient, errclass.Of(err))
	assert.Len(t, p.recs, fe.Applied)
	assert.Less(t, fe.Applied, 3)

	// Partial on a read fails as transient, applying nothing.
	_, err = f.GetRecords(ctx, "example.test.")
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, providertest.Transient, fe.Kind)

	_, err = f.SetRecords(ctx, "example.test.", batch)
	require.NoError(t, err)
	assert.Len(t, p.recs, 3)
	assert.Len(t, f.Faults(), 5)
	assert.Equal(t, 6, f.Calls())
}

// The same seed gives the same faults for the same sequence of calls.
func TestFaultyDeterministic(t *testing.T) {
	cfg := providertest.FaultConfig{Seed: 42, ThrottleRate: 0.2, TransientRate: 0.2, PermanentRate: 0.1, PartialRate: 0.2}
	run := func() []providertest.Fault {
		f, err := providertest.NewFaulty(&refProvider{}, cfg)
		require.NoError(t, err)
		for range 200 {
			_, _ = f.SetRecords(context.Background(), "example.test.", []libdns.Record{rec("a", "192.0.2.1"), rec("b", "192.0.2.2")})
		}
		return f.Faults()
	}
	first, second := run(), run()
	assert.Equal(t, first, second)
	counts := map[providertest.FaultKind]int{}
	for _, ft := range first {
		counts[ft.Kind]++
	}
	// Loose bounds: 200 draws at 20 % land far inside [15, 70].
	for _, k := range []providertest.FaultKind{providertest.Throttle, providertest.Transient, providertest.Partial} {
		assert.True(t, counts[k] > 15 && counts[k] < 70, "%s drawn %d times", k, counts[k])
	}
}

// Latency is a timer: inside a bubble it costs virtual time only, and a
// cancelled context cuts it short.
func TestFaultyLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, err := providertest.NewFaulty(&refProvider{}, providertest.FaultConfig{Latency: 3 * time.Second})
		require.NoError(t, err)
		start := time.Now()
		_, err = f.GetRecords(t.Context(), "example.test.")
		require.NoError(t, err)
		assert.Equal(t, 3*time.Second, time.Since(start))

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err = f.GetRecords(ctx, "example.test.")
		assert.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
	})
}

// With Methods set, only those methods are faulted; queued faults wait
// for a matching call.
func TestFaultyMethods(t *testing.T) {
	ctx := context.Background()
	f, err := providertest.NewFaulty(&refProvider{}, providertest.FaultConfig{
		ThrottleRate: 1, Methods: []provider.Method{provider.MethodSetRecords},
	})
	require.NoError(t, err)
	_, err = f.GetRecords(ctx, "example.test.")
	require.NoError(t, err, "reads are not faulted")
	_, err = f.SetRecords(ctx, "example.test.", []libdns.Record{rec("a", "192.0.2.1")})
	assert.Equal(t, errclass.Throttled, errclass.Of(err))

	_, err = providertest.NewFaulty(&refProvider{}, providertest.FaultConfig{Methods: []provider.Method{"Nope"}})
	assert.EqualError(t, err, `providertest: invalid fault config: methods[0] = "Nope": allowed one of "GetRecords", "AppendRecords", "SetRecords", "DeleteRecords", "ListZones", "ReplaceRecords", "ReplaceFenced"`)
}

// TestFieldErrorFormat: the exact message of a few fields.
func TestFieldErrorFormat(t *testing.T) {
	cases := []struct {
		name string
		cfg  providertest.FaultConfig
		want string
	}{
		{"rate", providertest.FaultConfig{ThrottleRate: 2}, "providertest: invalid fault config: throttleRate = 2: allowed [0, 1]"},
		{"latency", providertest.FaultConfig{Latency: -time.Second}, "providertest: invalid fault config: latency = -1s: allowed [0s, 1h]"},
		{"sum", providertest.FaultConfig{ThrottleRate: 0.6, PartialRate: 0.6}, "providertest: invalid fault config: partialRate = 0.6: allowed [0, 1], the four rates summing to <= 1 (they sum to 1.2)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate()
			require.EqualError(t, err, c.want)
			require.ErrorIs(t, err, providertest.ErrFaultConfig)
		})
	}
}

// TestZeroValues: a zero Faulty returns errors, never panics.
func TestZeroValues(t *testing.T) {
	var f providertest.Faulty
	_, err := f.GetRecords(t.Context(), "z.")
	var ue *provider.UnsupportedError
	assert.ErrorAs(t, err, &ue)
	assert.Zero(t, f.Calls())
	assert.Empty(t, f.Faults())
	f.Inject(providertest.Throttle)
	require.NoError(t, providertest.FaultConfig{}.Validate())
}
