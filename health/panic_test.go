package health

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func sel(t *testing.T, p Panic, healthy, total int) (Selection[int], error) {
	t.Helper()
	eps := make([]int, total)
	for i := range eps {
		eps[i] = i
	}
	return Select(p, eps, func(i int) bool { return i < healthy })
}

func TestPanicSelection(t *testing.T) {
	cases := []struct {
		name             string
		p                Panic
		healthy, total   int
		wantUse          int
		wantPanic, noneE bool
	}{
		{"Envoy panic rule: 50 percent exactly is not panic (strict <)", EnvoyPanic(), 2, 4, 2, false, false},
		{"Envoy panic rule: below 50 percent uses all", EnvoyPanic(), 1, 4, 4, true, false},
		{"Envoy panic rule: threshold truncated to a whole percent", Panic{Mode: PanicEnvoy, Threshold: 50.9}, 1, 2, 1, false, false},
		{"Envoy panic rule: 0 disables panic", Panic{Mode: PanicEnvoy}, 1, 10, 1, false, false},
		{"Envoy panic rule: 0 and none healthy is no healthy upstream", Panic{Mode: PanicEnvoy}, 0, 3, 0, false, true},
		{"Envoy panic rule: none healthy with threshold uses all", EnvoyPanic(), 0, 3, 3, true, false},
		{"Envoy panic rule: zero hosts count as 0 percent", EnvoyPanic(), 0, 0, 0, true, true},
		{"gdnsd pool rule: ceil(0.5 x 5) = 3 healthy needed", GdnsdPanic(), 3, 5, 3, false, false},
		{"gdnsd pool rule: below it all are returned", GdnsdPanic(), 2, 5, 5, true, false},
		{"gdnsd pool rule: threshold 0 never panics", Panic{Mode: PanicGdnsd}, 1, 5, 1, false, false},
		{"Route 53 rule: some healthy uses those", Route53Panic(), 1, 3, 1, false, false},
		{"Route 53 rule: all unhealthy uses all", Route53Panic(), 0, 3, 3, true, false},
		{"fail closed: only healthy", FailClosed(), 1, 10, 1, false, false},
		{"fail closed: none healthy is an error", FailClosed(), 0, 3, 0, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, c.p.Validate())
			s, err := sel(t, c.p, c.healthy, c.total)
			require.Len(t, s.Use, c.wantUse)
			require.Equal(t, c.wantPanic, s.Panic)
			require.Equal(t, c.healthy, s.Healthy)
			if c.noneE {
				var nh *NoHealthyUpstreamError
				require.True(t, errors.As(err, &nh))
				require.ErrorIs(t, err, ErrNoHealthyUpstream)
			} else {
				require.NoError(t, err)
			}
		})
	}
}

func TestPanicValidate(t *testing.T) {
	for _, p := range []Panic{{Mode: PanicEnvoy, Threshold: 101}, {Mode: PanicGdnsd, Threshold: 1.5}, {Mode: 9}, {Mode: PanicEnvoy, Threshold: -1}} {
		require.ErrorIs(t, p.Validate(), ErrInvalidConfig, "%+v", p)
	}
}
