package health

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFieldErrorFormat: the exact message of a few fields, one shape.
func TestFieldErrorFormat(t *testing.T) {
	_, gateErr := NewGate(GateCheck{Name: "a", Check: CheckFunc(func(time.Time) Signal { return Signal{} }), RecoveryThreshold: -1})
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"panic threshold", Panic{Threshold: -5}.Validate(), "health: invalid config: threshold = -5: allowed [0, 100] (percent) for mode envoy"},
		{"outlier duration", OutlierConfig{Interval: -time.Second}.Validate(), "health: invalid config: interval = -1s: allowed [1ms, 1h]"},
		{"outlier nested", OutlierConfig{SuccessRate: SuccessRateConfig{MinimumHosts: -1}}.Validate(), "health: invalid config: successRate.minimumHosts = -1: allowed [1, 100000]"},
		{"gate check", gateErr, "health: invalid config: checks[0].recoveryThreshold = -1: allowed [0, 65535]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.EqualError(t, c.err, c.want)
			require.ErrorIs(t, c.err, ErrInvalidConfig)
			var fe *FieldError
			require.True(t, errors.As(c.err, &fe))
		})
	}
}

// TestSelectValidates: Select refuses a Panic that Validate refuses.
func TestSelectValidates(t *testing.T) {
	_, err := Select(Panic{Threshold: -5}, []int{1, 2}, func(int) bool { return true })
	require.ErrorIs(t, err, ErrInvalidConfig)
	_, err = Select(Panic{Mode: PanicAllUnhealthy, Threshold: -5}, []int{1}, func(int) bool { return true })
	require.ErrorIs(t, err, ErrInvalidConfig)
}

// TestRunTwice: a second concurrent Run of each loop returns ErrRunning.
func TestRunTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, err := NewDetector(OutlierConfig{}, nil)
		require.NoError(t, err)
		a, err := NewExternalAddress(AddressConfig{}, stubResolver{})
		require.NoError(t, err)
		s := &IstioSync{BaseURL: "http://istiod.invalid", Interval: time.Hour, Client: &http.Client{Transport: failRT{}}}
		for name, run := range map[string]func(context.Context) error{"Detector": d.Run, "ExternalAddress": a.Run, "IstioSync": s.Run} {
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- run(ctx) }()
			synctest.Wait()
			require.ErrorIs(t, run(ctx), ErrRunning, name)
			cancel()
			require.NoError(t, <-done, name)
		}
	})
}

// failRT fails every request without touching the network.
type failRT struct{}

func (failRT) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("no network here")
}

type stubResolver struct{}

func (stubResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("192.0.2.1")}, nil
}

// TestZeroValues: zero values of the exported types with methods work or
// return an error, never panic.
func TestZeroValues(t *testing.T) {
	now := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NotPanics(t, func() {
		var d Detector
		d.Add("a")
		d.Report(now, "a", Outcome{})
		d.ActiveCheckPassed(now, "a")
		d.Tick(now)
		_ = d.Healthy("a", true)
		_ = d.Ejected("a")
		d.Remove("a")
		require.NoError(t, d.Run(ctx))

		var o Outlier
		o.Add("a")
		o.Tick(now, nil)
		_ = o.Config()

		var a ExternalAddress
		require.ErrorIs(t, a.Run(ctx), ErrNotConfigured)
		a.SetStatus(nil, "x.example.")
		require.ErrorIs(t, a.Resolve(ctx), ErrNotConfigured)
		_ = a.Check(now)
		_, _ = a.Addresses(now)

		var g Gate
		_ = g.Evaluate(now)
		_ = g.Checks()
		var sg SafeGate
		_ = sg.Evaluate(now)
		_ = sg.Last()

		var er EndpointReadiness
		_ = er.Check(now)
		er.Set(EndpointSlice{Name: "s"})
		er.Delete("s")
		_, _ = er.Ready()

		s := IstioSync{Client: &http.Client{Transport: failRT{}}}
		require.Error(t, s.Poll(ctx))
		_ = s.Check(now)
		require.NoError(t, s.Run(ctx))
	})
	for name, v := range map[string]interface{ Validate() error }{
		"Panic": Panic{}, "OutlierConfig": OutlierConfig{}, "AddressConfig": AddressConfig{},
	} {
		require.NoError(t, v.Validate(), name)
	}
}
