package provider

import (
	"context"
	"errors"
	"fmt"
	"github.com/gslbkit/gslb/internal/fielderr"
	"math"

	"github.com/gslbkit/gslb/internal/errclass"
	"golang.org/x/time/rate"
)

// RateLimitConfig bounds how fast calls reach a provider: a token bucket
// refilled at CallsPerSecond holding at most Burst tokens; each call (each
// attempt, when a Retry sits outside the limiter) takes one token.
type RateLimitConfig struct {
	// CallsPerSecond is the sustained rate, in calls per second, in
	// (0, 10000]. Default (0) 5 (Route 53's documented limit per account).
	CallsPerSecond float64 `json:"callsPerSecond"`
	// Burst is how many calls may go at once after a quiet spell, in
	// [1, 10000]. Default (0) 5.
	Burst int `json:"burst"`
	// Unlimited turns the limit off: every call goes at once and the
	// other fields are ignored. Off by default.
	Unlimited bool `json:"unlimited,omitempty"`
}

// DefaultRateLimitConfig returns 5 calls per second with a burst of 5,
// which suits Route 53 (five requests per second per account).
func DefaultRateLimitConfig() RateLimitConfig {
	return RateLimitConfig{CallsPerSecond: 5, Burst: 5}
}

// CloudflareRateLimitConfig derives from the default: Cloudflare allows
// 1200 requests per five minutes per user, so 4 per second with a burst of
// 10 stays inside it.
func CloudflareRateLimitConfig() RateLimitConfig {
	c := DefaultRateLimitConfig()
	c.CallsPerSecond = 4
	c.Burst = 10
	return c
}

// ErrRateLimitConfig is wrapped by every RateLimitConfig validation error
// (a *FieldError).
var ErrRateLimitConfig = errors.New("provider: invalid rate limit config")

// withDefaults fills the zero fields.
func (c RateLimitConfig) withDefaults() RateLimitConfig {
	d := DefaultRateLimitConfig()
	if c.CallsPerSecond == 0 {
		c.CallsPerSecond = d.CallsPerSecond
	}
	if c.Burst == 0 {
		c.Burst = d.Burst
	}
	return c
}

// Validate reports the first field outside its range, as a *FieldError
// wrapping ErrRateLimitConfig. Zero fields take their defaults first.
func (c RateLimitConfig) Validate() error {
	c, d := c.withDefaults(), DefaultRateLimitConfig()
	if math.IsNaN(c.CallsPerSecond) || c.CallsPerSecond <= 0 || c.CallsPerSecond > 10000 {
		return fielderr.New(ErrRateLimitConfig, "callsPerSecond", c.CallsPerSecond, fielderr.OrDefault("(0, 10000]", d.CallsPerSecond))
	}
	if c.Burst < 1 || c.Burst > 10000 {
		return fielderr.New(ErrRateLimitConfig, "burst", c.Burst, fielderr.OrDefault(fielderr.Range(1, 10000), d.Burst))
	}
	return nil
}

// RateLimit is an Interceptor that makes each call wait for a token
// (golang.org/x/time/rate). Waiting honours ctx: a cancelled ctx returns its
// error at once, and a deadline too near for the next token returns an
// error answering Throttled() true without waiting. Waits use timers, so the
// limiter runs in virtual time inside a testing/synctest bubble. Safe for
// concurrent use; one RateLimit may sit in front of several providers that
// share a quota.
type RateLimit struct {
	lim *rate.Limiter
}

// NewRateLimit validates cfg and returns a limiter with a full bucket; zero
// fields take their defaults.
func NewRateLimit(cfg RateLimitConfig) (*RateLimit, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Unlimited {
		return &RateLimit{lim: rate.NewLimiter(rate.Inf, 0)}, nil
	}
	cfg = cfg.withDefaults()
	return &RateLimit{lim: rate.NewLimiter(rate.Limit(cfg.CallsPerSecond), cfg.Burst)}, nil
}

// Intercept waits for a token, then passes the call on. A zero RateLimit
// (not made by NewRateLimit) returns ErrNotConfigured.
func (l *RateLimit) Intercept(ctx context.Context, c Call, next Invoker) (Result, error) {
	if l.lim == nil {
		return Result{}, ErrNotConfigured
	}
	if err := l.lim.Wait(ctx); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return Result{}, fmt.Errorf("provider: %s waiting for the rate limit: %w", c.Method, ctxErr)
		}
		// The limiter refuses when the deadline would pass before a token:
		// that is the caller's cue to slow down.
		return Result{}, errclass.Mark(fmt.Errorf("provider: %s: %w", c.Method, err), errclass.Throttled)
	}
	return next(ctx, c)
}
