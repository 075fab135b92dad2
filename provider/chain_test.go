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

	c.RateLimit.Burst = 0
	assert.ErrorContains(t, c.Validate(), "rateLimit: provider: rate limit burst 0")
	c = provider.DefaultChainConfig()
	c.Retry.MaxAttempts = 99
	_, _, err := provider.NewChain(&tiny{}, c, nil)
	assert.ErrorContains(t, err, "retry: provider: retry maxAttempts 99")

	_, _, err = provider.NewChain(&tiny{}, provider.ChainConfig{}, nil)
	assert.NoError(t, err, "no retry and no limit is a valid chain: a meter alone")
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
