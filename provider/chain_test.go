package provider_test

import (
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gslbkit/gslb/provider"
	"github.com/gslbkit/gslb/provider/providertest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChainConfig(t *testing.T) {
	var c provider.ChainConfig
	require.NoError(t, json.Unmarshal([]byte(`{"retry":{"maxAttempts":3,"baseDelay":"100ms","throttledDelay":"1s","maxDelay":"5s","jitter":0.2},"rateLimit":{"callsPerSecond":2,"burst":1}}`), &c))
	require.NoError(t, c.Validate())
	assert.Equal(t, 3, c.Retry.MaxAttempts)

	c.RateLimit.Burst = -1
	err := c.Validate()
	assert.EqualError(t, err, "provider: invalid chain config: rateLimit.burst = -1: allowed [1, 10000], or 0 for the default (5)")
	assert.ErrorIs(t, err, provider.ErrChainConfig)
	assert.ErrorIs(t, err, provider.ErrRateLimitConfig)
	c = provider.DefaultChainConfig()
	c.Retry.MaxAttempts = 99
	_, _, err = provider.NewChain(&tiny{}, c, nil)
	assert.EqualError(t, err, "provider: invalid chain config: retry.maxAttempts = 99: allowed [1, 20], or 0 for the default (4)")

	_, _, err = provider.NewChain(nil, provider.ChainConfig{}, nil)
	assert.ErrorIs(t, err, provider.ErrNilProvider)
	var nilTiny *tiny
	_, _, err = provider.NewChain(nilTiny, provider.ChainConfig{}, nil)
	assert.ErrorIs(t, err, provider.ErrNilProvider)
}

// ChainConfig{} and DefaultChainConfig() build the same chain: a throttled
// call is retried after 1 s (half jittered: between 0.5 and 1 s) in both.
func TestChainZeroIsDefault(t *testing.T) {
	for name, c := range map[string]provider.ChainConfig{"zero": {}, "default": provider.DefaultChainConfig()} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f, err := providertest.NewFaulty(&tiny{}, providertest.FaultConfig{})
				require.NoError(t, err)
				w, _, err := provider.NewChain(f, c, nil)
				require.NoError(t, err)
				f.Inject(providertest.Throttle)
				start := time.Now()
				_, err = w.SetRecords(t.Context(), "z.", rec)
				require.NoError(t, err)
				assert.Equal(t, 2, f.Calls(), "retried")
				assert.GreaterOrEqual(t, time.Since(start), 500*time.Millisecond)
				assert.LessOrEqual(t, time.Since(start), time.Second)
			})
		})
	}
	// Off, spelled out.
	off := provider.ChainConfig{Retry: &provider.RetryConfig{MaxAttempts: 1}, RateLimit: &provider.RateLimitConfig{Unlimited: true}}
	f, err := providertest.NewFaulty(&tiny{}, providertest.FaultConfig{})
	require.NoError(t, err)
	w, _, err := provider.NewChain(f, off, nil)
	require.NoError(t, err)
	f.Inject(providertest.Throttle)
	_, err = w.SetRecords(t.Context(), "z.", rec)
	require.Error(t, err)
	assert.Equal(t, 1, f.Calls(), "not retried")
}

// TestZeroValues: zero values of the exported types with methods return an
// error or work, never panic.
func TestZeroValues(t *testing.T) {
	ctx := t.Context()
	var w provider.Wrapped
	_, err := w.GetRecords(ctx, "z.")
	var ue *provider.UnsupportedError
	assert.ErrorAs(t, err, &ue)
	assert.False(t, w.Supports(provider.MethodSetRecords))
	var l provider.RateLimit
	_, err = provider.Wrap(&tiny{}, &l).GetRecords(ctx, "z.")
	assert.ErrorIs(t, err, provider.ErrNotConfigured)
	var r provider.Retry
	_, err = provider.Wrap(&tiny{}, &r).GetRecords(ctx, "z.")
	assert.NoError(t, err)
	assert.Equal(t, 4, r.Config().MaxAttempts, "a zero Retry uses the defaults")
	rr, err := provider.NewRetry(provider.RetryConfig{})
	require.NoError(t, err)
	assert.Equal(t, provider.DefaultRetryConfig().MaxDelay, rr.Config().MaxDelay)
	var m provider.Meter
	_, err = provider.Wrap(&tiny{}, &m).GetRecords(ctx, "z.")
	assert.NoError(t, err)
	assert.Equal(t, int64(1), m.Stats().Method(provider.MethodGetRecords).Calls)
	m.Reset()
	for name, v := range map[string]interface{ Validate() error }{
		"RetryConfig": provider.RetryConfig{}, "RateLimitConfig": provider.RateLimitConfig{}, "ChainConfig": provider.ChainConfig{},
	} {
		assert.NoError(t, v.Validate(), name)
	}
}

// The default chain meters once per logical call, retries a throttled
// attempt after 1 s and paces attempts at 5 per second (virtual time).
func TestChainDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, err := providertest.NewFaulty(&tiny{}, providertest.FaultConfig{})
		require.NoError(t, err)
		c := provider.DefaultChainConfig()
		c.Retry.Jitter = 0
		w, m, err := provider.NewChain(f, c, nil)
		require.NoError(t, err)
		f.Inject(providertest.Throttle)
		start := time.Now()
		_, err = w.SetRecords(t.Context(), "z.", rec)
		require.NoError(t, err)
		assert.Equal(t, time.Second, time.Since(start))
		assert.Equal(t, int64(1), m.Stats().Method(provider.MethodSetRecords).Calls)
		assert.Equal(t, 2, f.Calls())
	})
}
