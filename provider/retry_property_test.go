package provider_test

import (
	"context"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/errclass"
	"github.com/gslbkit/gslb/provider"
	"github.com/gslbkit/gslb/provider/providertest"
	"pgregory.net/rapid"
)

// Whatever the faults, Retry never makes more than MaxAttempts calls,
// never retries a permanent error, never retries AppendRecords after a
// transient error unless allowed, and fails only with the last fault's
// class. Delays are 1 ms of real time (no bubble: rapid drives the loop).
func TestRetryProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		kinds := rapid.SliceOfN(rapid.SampledFrom([]providertest.FaultKind{
			providertest.NoFault, providertest.Throttle, providertest.Transient, providertest.Permanent,
		}), 1, 8).Draw(rt, "faults")
		method := rapid.SampledFrom([]provider.Method{provider.MethodSetRecords, provider.MethodAppendRecords, provider.MethodGetRecords}).Draw(rt, "method")
		cfg := provider.DefaultRetryConfig()
		cfg.MaxAttempts = rapid.IntRange(1, 6).Draw(rt, "attempts")
		cfg.RetryAppendOnTransient = rapid.Bool().Draw(rt, "appendTransient")
		cfg.BaseDelay, cfg.ThrottledDelay, cfg.MaxDelay = time.Millisecond, time.Millisecond, time.Millisecond
		r, err := provider.NewRetry(cfg)
		if err != nil {
			rt.Fatal(err)
		}
		f, err := providertest.NewFaulty(&tiny{}, providertest.FaultConfig{})
		if err != nil {
			rt.Fatal(err)
		}
		f.Inject(kinds...)
		_, err = provider.Wrap(f, r).Invoke(context.Background(), provider.Call{Method: method, Zone: "z.", Records: rec})

		calls := f.Calls()
		if calls > cfg.MaxAttempts {
			rt.Fatalf("%d calls, max %d", calls, cfg.MaxAttempts)
		}
		// Replay the decision the retry should have made after each call.
		for i := 0; i < calls-1 && i < len(kinds); i++ {
			switch kinds[i] {
			case providertest.NoFault, providertest.Permanent:
				rt.Fatalf("call %d (%s) was followed by a retry", i+1, kinds[i])
			case providertest.Transient:
				if method == provider.MethodAppendRecords && !cfg.RetryAppendOnTransient {
					rt.Fatalf("AppendRecords retried after a transient error")
				}
			}
		}
		last := providertest.NoFault
		if calls-1 < len(kinds) {
			last = kinds[calls-1]
		}
		want := map[providertest.FaultKind]errclass.Class{
			providertest.NoFault: errclass.None, providertest.Throttle: errclass.Throttled,
			providertest.Transient: errclass.Transient, providertest.Permanent: errclass.Permanent,
		}[last]
		if got := errclass.Of(err); got != want {
			rt.Fatalf("error class %s, want %s (last fault %s): %v", got, want, last, err)
		}
	})
}
