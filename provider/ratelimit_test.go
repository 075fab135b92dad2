package provider_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gslbkit/gslb/internal/errclass"
	"github.com/gslbkit/gslb/provider"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRateLimitValidate(t *testing.T) {
	cases := []struct {
		name    string
		cfg     provider.RateLimitConfig
		wantErr string
	}{
		{"default", provider.DefaultRateLimitConfig(), ""},
		{"cloudflare", provider.CloudflareRateLimitConfig(), ""},
		{"zero value takes the defaults", provider.RateLimitConfig{}, ""},
		{"unlimited", provider.RateLimitConfig{Unlimited: true}, ""},
		{"negative rate", provider.RateLimitConfig{CallsPerSecond: -1}, "provider: invalid rate limit config: callsPerSecond = -1: allowed (0, 10000], or 0 for the default (5)"},
		{"negative burst", provider.RateLimitConfig{Burst: -1}, "provider: invalid rate limit config: burst = -1: allowed [1, 10000], or 0 for the default (5)"},
		{"huge rate", provider.RateLimitConfig{CallsPerSecond: 1e9, Burst: 1}, "provider: invalid rate limit config: callsPerSecond = 1e+09: allowed (0, 10000], or 0 for the default (5)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := provider.NewRateLimit(c.cfg)
			if c.wantErr == "" {
				assert.NoError(t, err)
			} else {
				assert.EqualError(t, err, c.wantErr)
				assert.ErrorIs(t, err, provider.ErrRateLimitConfig)
			}
		})
	}
}

// In virtual time: a burst of 2 at 1 call per second lets two calls go at
// once and spaces the next ones a second apart.
func TestRateLimitPaces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, err := provider.NewRateLimit(provider.RateLimitConfig{CallsPerSecond: 1, Burst: 2})
		require.NoError(t, err)
		w := provider.Wrap(&tiny{}, l)
		start := time.Now()
		var at []time.Duration
		for range 4 {
			_, err := w.GetRecords(t.Context(), "z.")
			require.NoError(t, err)
			at = append(at, time.Since(start))
		}
		assert.Equal(t, []time.Duration{0, 0, time.Second, 2 * time.Second}, at)
	})
}

// A deadline too near for the next token fails at once as throttled; a
// cancelled context fails with its error.
func TestRateLimitContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, err := provider.NewRateLimit(provider.RateLimitConfig{CallsPerSecond: 0.1, Burst: 1})
		require.NoError(t, err)
		w := provider.Wrap(&tiny{}, l)
		_, err = w.GetRecords(t.Context(), "z.")
		require.NoError(t, err)

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		_, err = w.GetRecords(ctx, "z.")
		require.Error(t, err)
		assert.Equal(t, errclass.Throttled, errclass.Of(err))
		assert.Zero(t, time.Since(start), "it must not wait for a token it cannot get in time")

		ctx2, cancel2 := context.WithCancel(t.Context())
		cancel2()
		_, err = w.GetRecords(ctx2, "z.")
		assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	})
}
