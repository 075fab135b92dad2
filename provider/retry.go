package provider

import (
	"context"
	"errors"
	"fmt"
	"github.com/gslbkit/gslb/internal/fielderr"
	"math"
	"math/rand/v2"
	"time"

	"github.com/gslbkit/gslb/internal/backoff"
	"github.com/gslbkit/gslb/internal/errclass"
	"github.com/gslbkit/gslb/internal/jsontime"
)

// RetryConfig says when and how long to wait before trying a failed call
// again. Only errors that answer Throttled() or Temporary() true (judged
// as Classify judges them, so plain net timeouts and HTTP 429/5xx errors
// count too) are retried; everything else returns at once.
type RetryConfig struct {
	// MaxAttempts is the number of tries including the first, in [1, 20].
	// Default (0) 4. 1 disables retrying.
	MaxAttempts int `json:"maxAttempts"`
	// BaseDelay is the wait before the first retry of a transient error,
	// in [1ms, 1m]. Default (0) 200ms. It doubles per attempt.
	BaseDelay time.Duration `json:"baseDelay"`
	// ThrottledDelay is the wait before the first retry of a throttled
	// error, in [1ms, 5m]; providers that throttle want a longer pause.
	// Default (0) 1s. It doubles per attempt.
	ThrottledDelay time.Duration `json:"throttledDelay"`
	// MaxDelay caps every wait, including a provider's Retry-After hint,
	// in [BaseDelay, 10m]. Default (0) 10s.
	MaxDelay time.Duration `json:"maxDelay"`
	// Jitter is the share of each wait that is randomised, in [0, 1]:
	// 0.5 waits uniformly between half and all of the computed delay.
	// DefaultRetryConfig sets 0.5; a zero Jitter means no jitter (a
	// meaningful zero, not replaced by the default).
	Jitter float64 `json:"jitter"`
	// RetryAppendOnTransient also retries AppendRecords after a transient
	// error. Off by default: a transient error (a timeout, a 502) may come
	// after the provider applied the batch, and appending twice is not
	// idempotent. Throttled AppendRecords calls are always retried (the
	// provider refused them before doing anything). SetRecords and
	// DeleteRecords are idempotent and always retried.
	RetryAppendOnTransient bool `json:"retryAppendOnTransient"`
}

// DefaultRetryConfig returns 4 attempts, 200ms doubling for transient
// errors, 1s doubling for throttling, capped at 10s, half jittered.
func DefaultRetryConfig() RetryConfig {
	return RetryConfig{
		MaxAttempts:    4,
		BaseDelay:      200 * time.Millisecond,
		ThrottledDelay: time.Second,
		MaxDelay:       10 * time.Second,
		Jitter:         0.5,
	}
}

// ErrRetryConfig is wrapped by every RetryConfig validation error (a
// *FieldError).
var ErrRetryConfig = errors.New("provider: invalid retry config")

// withDefaults fills the zero fields that take a default (all but Jitter
// and RetryAppendOnTransient, whose zeros mean something).
func (c RetryConfig) withDefaults() RetryConfig {
	d := DefaultRetryConfig()
	if c.MaxAttempts == 0 {
		c.MaxAttempts = d.MaxAttempts
	}
	if c.BaseDelay == 0 {
		c.BaseDelay = d.BaseDelay
	}
	if c.ThrottledDelay == 0 {
		c.ThrottledDelay = d.ThrottledDelay
	}
	if c.MaxDelay == 0 {
		c.MaxDelay = d.MaxDelay
	}
	return c
}

// Validate reports the first field outside its range, as a *FieldError
// wrapping ErrRetryConfig. Zero fields take their defaults first.
func (c RetryConfig) Validate() error {
	c = c.withDefaults()
	bad := func(f string, v any, allowed string) error { return fielderr.New(ErrRetryConfig, f, v, allowed) }
	switch {
	case c.MaxAttempts < 1 || c.MaxAttempts > 20:
		return bad("maxAttempts", c.MaxAttempts, fielderr.OrDefault(fielderr.Range(1, 20), DefaultRetryConfig().MaxAttempts))
	case c.BaseDelay < time.Millisecond || c.BaseDelay > time.Minute:
		return bad("baseDelay", c.BaseDelay, fielderr.DurationRange(time.Millisecond, time.Minute))
	case c.ThrottledDelay < time.Millisecond || c.ThrottledDelay > 5*time.Minute:
		return bad("throttledDelay", c.ThrottledDelay, fielderr.DurationRange(time.Millisecond, 5*time.Minute))
	case c.MaxDelay < c.BaseDelay || c.MaxDelay > 10*time.Minute:
		return bad("maxDelay", c.MaxDelay, "[baseDelay ("+fielderr.Duration(c.BaseDelay)+"), 10m]")
	case math.IsNaN(c.Jitter) || c.Jitter < 0 || c.Jitter > 1:
		return bad("jitter", c.Jitter, fielderr.Range(0, 1))
	}
	return nil
}

// Delay returns the wait after the failed attempt number attempt (0-based)
// whose error has class cl, before jitter: exponential from BaseDelay or
// ThrottledDelay, at least hint (a provider's Retry-After), capped at
// MaxDelay. It is the pure core of Retry.
func (c RetryConfig) Delay(attempt int, cl ErrorClass, hint time.Duration) time.Duration {
	c = c.withDefaults()
	base := c.BaseDelay
	if cl == Throttled {
		base = c.ThrottledDelay
	}
	d := backoff.Exponential{Base: base, Max: c.MaxDelay, Factor: 2}.BaseDelay(attempt)
	if hint > d {
		d = hint
	}
	if max := c.MaxDelay; d > max {
		d = max
	}
	return d
}

// retryable reports whether a call of method m that failed with class cl
// may be tried again under c.
func (c RetryConfig) retryable(m Method, cl errclass.Class) bool {
	switch cl {
	case errclass.Throttled:
		return true
	case errclass.Transient:
		return m != MethodAppendRecords || c.RetryAppendOnTransient
	}
	return false
}

// retryAfter is satisfied by errors that carry a provider's hint of how long
// to wait (an HTTP Retry-After header).
type retryAfter interface{ RetryAfter() time.Duration }

// RetryError is returned when a call still fails after retrying (or when
// the context ends during a wait). It unwraps to the last attempt's error,
// so Throttled()/Temporary() and errors.Is see through it.
type RetryError struct {
	Method   Method
	Attempts int
	// Err is the last attempt's error.
	Err error
	// Ctx is the context's error when it ended during a wait, else nil.
	Ctx error
}

// Error reports the method, the number of attempts and the last error.
func (e *RetryError) Error() string {
	if e.Ctx != nil {
		return fmt.Sprintf("provider: %s gave up after %d attempt(s) (%v): %v", e.Method, e.Attempts, e.Ctx, e.Err)
	}
	return fmt.Sprintf("provider: %s failed after %d attempt(s): %v", e.Method, e.Attempts, e.Err)
}

// Unwrap returns the last attempt's error and, when set, the context's
// error, so errors.Is(err, context.Canceled) works too.
func (e *RetryError) Unwrap() []error {
	if e.Ctx != nil {
		return []error{e.Err, e.Ctx}
	}
	return []error{e.Err}
}

// Retry is an Interceptor that tries a failed call again, up to
// MaxAttempts, when its error is throttled or transient, waiting a jittered
// exponential back-off in between. Waits are timers that honour ctx (so
// Retry runs in virtual time inside a testing/synctest bubble); Retry gives
// up without waiting when ctx's deadline would pass before the next try.
// Errors from the last attempt are returned wrapped in *RetryError only
// when more than one attempt was made. Safe for concurrent use.
type Retry struct {
	cfg RetryConfig
}

// NewRetry validates cfg and returns the interceptor; zero fields take
// their defaults. cfg is copied.
func NewRetry(cfg RetryConfig) (*Retry, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Retry{cfg: cfg.withDefaults()}, nil
}

// Config returns the configuration the interceptor uses, defaults filled
// in. A zero Retry is usable: it retries as RetryConfig{} does.
func (r *Retry) Config() RetryConfig { return r.cfg.withDefaults() }

// Intercept calls next until it succeeds, fails permanently, runs out of
// attempts, or ctx ends.
func (r *Retry) Intercept(ctx context.Context, c Call, next Invoker) (Result, error) {
	if r.cfg.MaxAttempts == 0 {
		r = &Retry{cfg: r.cfg.withDefaults()}
	}
	for attempt := 0; ; attempt++ {
		res, err := next(ctx, c)
		if err == nil {
			return res, nil
		}
		cl := errclass.Of(err)
		if attempt+1 >= r.cfg.MaxAttempts || !r.cfg.retryable(c.Method, cl) {
			return res, r.wrap(c, attempt+1, err)
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return res, &RetryError{Method: c.Method, Attempts: attempt + 1, Err: err, Ctx: ctxErr}
		}
		var hint time.Duration
		var ra retryAfter
		if errors.As(err, &ra) {
			hint = ra.RetryAfter()
		}
		d := backoff.Exponential{Base: r.cfg.Delay(attempt, Classify(err), hint), Factor: 1, Jitter: r.cfg.Jitter}.Delay(0, randSource{})
		if hint > 0 && d < hint {
			d = min(hint, r.cfg.MaxDelay)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
			return res, r.wrap(c, attempt+1, err)
		}
		if werr := sleep(ctx, d); werr != nil {
			return res, &RetryError{Method: c.Method, Attempts: attempt + 1, Err: err, Ctx: werr}
		}
	}
}

func (r *Retry) wrap(c Call, attempts int, err error) error {
	if attempts <= 1 {
		return err
	}
	return &RetryError{Method: c.Method, Attempts: attempts, Err: err}
}

// randSource draws from math/rand/v2's goroutine-safe generator.
type randSource struct{}

// Float64 returns a uniform float in [0, 1).
func (randSource) Float64() float64 { return rand.Float64() }

// sleep waits d on a timer, returning early with ctx's error.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// MarshalJSON writes RetryConfig with its durations as strings such as "10s".
func (c RetryConfig) MarshalJSON() ([]byte, error) {
	type plain RetryConfig
	return jsontime.Marshal(plain(c))
}

// UnmarshalJSON reads RetryConfig, its durations as strings such as "10s" or as
// numbers of seconds. Unknown keys, and keys in the wrong case, are errors.
func (c *RetryConfig) UnmarshalJSON(b []byte) error {
	type plain RetryConfig
	return jsontime.Unmarshal(b, (*plain)(c))
}
