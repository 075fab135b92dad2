package provider_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gslbkit/gslb/internal/errclass"
	"github.com/gslbkit/gslb/provider"
	"github.com/gslbkit/gslb/provider/providertest"
	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRetryValidate(t *testing.T) {
	mod := func(f func(*provider.RetryConfig)) provider.RetryConfig {
		c := provider.DefaultRetryConfig()
		f(&c)
		return c
	}
	cases := []struct {
		name    string
		cfg     provider.RetryConfig
		wantErr string
	}{
		{"default", provider.DefaultRetryConfig(), ""},
		{"no retries", mod(func(c *provider.RetryConfig) { c.MaxAttempts = 1 }), ""},
		{"zero value takes the defaults", provider.RetryConfig{}, ""},
		{"zero attempts takes the default", mod(func(c *provider.RetryConfig) { c.MaxAttempts = 0 }), ""},
		{"too many attempts", mod(func(c *provider.RetryConfig) { c.MaxAttempts = 21 }), "provider: invalid retry config: maxAttempts = 21: allowed [1, 20], or 0 for the default (4)"},
		{"tiny base", mod(func(c *provider.RetryConfig) { c.BaseDelay = time.Microsecond }), "provider: invalid retry config: baseDelay = 1µs: allowed [1ms, 1m]"},
		{"throttled", mod(func(c *provider.RetryConfig) { c.ThrottledDelay = time.Hour }), "provider: invalid retry config: throttledDelay = 1h: allowed [1ms, 5m]"},
		{"max below base", mod(func(c *provider.RetryConfig) { c.MaxDelay = time.Millisecond }), "provider: invalid retry config: maxDelay = 1ms: allowed [baseDelay (200ms), 10m]"},
		{"jitter", mod(func(c *provider.RetryConfig) { c.Jitter = 2 }), "provider: invalid retry config: jitter = 2: allowed [0, 1]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := provider.NewRetry(c.cfg)
			if c.wantErr == "" {
				assert.NoError(t, err)
			} else {
				assert.EqualError(t, err, c.wantErr)
				assert.ErrorIs(t, err, provider.ErrRetryConfig)
				var fe *provider.FieldError
				assert.ErrorAs(t, err, &fe)
			}
		})
	}
}

func TestRetryDelay(t *testing.T) {
	c := provider.DefaultRetryConfig()
	cases := []struct {
		name    string
		attempt int
		class   provider.ErrorClass
		hint    time.Duration
		want    time.Duration
	}{
		{"transient first", 0, provider.Temporary, 0, 200 * time.Millisecond},
		{"transient third", 2, provider.Temporary, 0, 800 * time.Millisecond},
		{"throttled first", 0, provider.Throttled, 0, time.Second},
		{"throttled capped", 10, provider.Throttled, 0, 10 * time.Second},
		{"hint wins", 0, provider.Temporary, 3 * time.Second, 3 * time.Second},
		{"hint capped", 0, provider.Throttled, time.Minute, 10 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, c.Delay(tc.attempt, tc.class, tc.hint)) })
	}
}

func newRetry(t *testing.T, f func(*provider.RetryConfig)) *provider.Retry {
	c := provider.DefaultRetryConfig()
	c.Jitter = 0
	if f != nil {
		f(&c)
	}
	r, err := provider.NewRetry(c)
	require.NoError(t, err)
	return r
}

var rec = []libdns.Record{libdns.TXT{Name: "hb", Text: "v=1", TTL: time.Minute}}

// Throttled and transient failures are retried after their back-offs, in
// virtual time; the call then succeeds.
func TestRetryRecovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, err := providertest.NewFaulty(&tiny{}, providertest.FaultConfig{})
		require.NoError(t, err)
		f.Inject(providertest.Throttle, providertest.Transient)
		w := provider.Wrap(f, newRetry(t, nil))
		start := time.Now()
		_, err = w.SetRecords(t.Context(), "z.", rec)
		require.NoError(t, err)
		assert.Equal(t, 3, f.Calls())
		// 1 s after the throttled attempt, then 400 ms (second transient back-off step).
		assert.Equal(t, time.Second+400*time.Millisecond, time.Since(start))
	})
}

func TestRetryGivesUp(t *testing.T) {
	cases := []struct {
		name      string
		method    provider.Method
		faults    []providertest.FaultKind
		cfg       func(*provider.RetryConfig)
		wantCalls int
		wantClass errclass.Class
	}{
		{"permanent is not retried", provider.MethodSetRecords, []providertest.FaultKind{providertest.Permanent}, nil, 1, errclass.Permanent},
		{"attempts run out", provider.MethodSetRecords, []providertest.FaultKind{providertest.Throttle, providertest.Throttle, providertest.Throttle, providertest.Throttle}, nil, 4, errclass.Throttled},
		{"append not retried on transient", provider.MethodAppendRecords, []providertest.FaultKind{providertest.Transient}, nil, 1, errclass.Transient},
		{"append retried on throttle", provider.MethodAppendRecords, []providertest.FaultKind{providertest.Throttle, providertest.NoFault}, nil, 2, errclass.None},
		{"append retried when allowed", provider.MethodAppendRecords, []providertest.FaultKind{providertest.Transient, providertest.NoFault},
			func(c *provider.RetryConfig) { c.RetryAppendOnTransient = true }, 2, errclass.None},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f, err := providertest.NewFaulty(&tiny{}, providertest.FaultConfig{})
				require.NoError(t, err)
				f.Inject(c.faults...)
				w := provider.Wrap(f, newRetry(t, c.cfg))
				_, err = w.Invoke(t.Context(), provider.Call{Method: c.method, Zone: "z.", Records: rec})
				assert.Equal(t, c.wantCalls, f.Calls())
				assert.Equal(t, c.wantClass, errclass.Of(err), "%v", err)
				if c.wantCalls > 1 && err != nil {
					var re *provider.RetryError
					require.True(t, errors.As(err, &re))
					assert.Equal(t, c.wantCalls, re.Attempts)
					assert.ErrorIs(t, err, providertest.ErrInjected)
				}
			})
		})
	}
}

// A deadline nearer than the next back-off ends the call at once; a
// cancellation during a wait ends it with the context's error.
func TestRetryContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, err := providertest.NewFaulty(&tiny{}, providertest.FaultConfig{ThrottleRate: 1})
		require.NoError(t, err)
		w := provider.Wrap(f, newRetry(t, nil))
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err = w.SetRecords(ctx, "z.", rec)
		require.Error(t, err)
		assert.Zero(t, time.Since(start))
		assert.Equal(t, 1, f.Calls())

		ctx2, cancel2 := context.WithCancel(t.Context())
		go func() {
			time.Sleep(100 * time.Millisecond)
			cancel2()
		}()
		_, err = w.SetRecords(ctx2, "z.", rec)
		assert.ErrorIs(t, err, context.Canceled)
		assert.ErrorIs(t, err, providertest.ErrInjected)
	})
}

// hinted is a throttled error carrying a Retry-After.
type hinted struct{ wait time.Duration }

func (h hinted) Error() string             { return "slow down" }
func (h hinted) Throttled() bool           { return true }
func (h hinted) RetryAfter() time.Duration { return h.wait }

func TestRetryHonoursRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		fail := provider.InterceptorFunc(func(ctx context.Context, c provider.Call, next provider.Invoker) (provider.Result, error) {
			calls++
			if calls == 1 {
				return provider.Result{}, hinted{wait: 4 * time.Second}
			}
			return next(ctx, c)
		})
		w := provider.Wrap(&tiny{}, newRetry(t, nil), fail)
		start := time.Now()
		_, err := w.GetRecords(t.Context(), "z.")
		require.NoError(t, err)
		assert.Equal(t, 4*time.Second, time.Since(start))
	})
}

// A SetRecords applied only in part (Faulty's Partial) fails as transient;
// Retry sends the whole batch again and, SetRecords being idempotent, the
// zone ends as asked.
func TestRetryHealsPartialSet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &tiny{}
		f, err := providertest.NewFaulty(p, providertest.FaultConfig{})
		require.NoError(t, err)
		f.Inject(providertest.Partial)
		w := provider.Wrap(f, newRetry(t, nil))
		batch := []libdns.Record{
			libdns.TXT{Name: "a", Text: "1"}, libdns.TXT{Name: "b", Text: "2"}, libdns.TXT{Name: "c", Text: "3"},
		}
		_, err = w.SetRecords(t.Context(), "z.", batch)
		require.NoError(t, err)
		assert.Equal(t, 2, f.Calls())
		assert.ElementsMatch(t, batch, p.recs)
		require.Len(t, f.Faults(), 1)
		assert.Equal(t, providertest.Partial, f.Faults()[0].Kind)
	})
}
