package provider

import (
	"fmt"

	"github.com/libdns/libdns"
)

// ChainConfig configures the chain gslbkit usually puts around a DNS
// host's provider: a Meter outermost (it sees what callers see), then
// Retry, then RateLimit (each attempt takes a token). It is the shape a
// program's configuration file gives the wrappers.
type ChainConfig struct {
	// Retry retries throttled and transient failures; nil disables
	// retrying. Default DefaultRetryConfig().
	Retry *RetryConfig `json:"retry,omitempty"`
	// RateLimit paces every attempt; nil disables it. Default
	// DefaultRateLimitConfig() (5 calls per second, Route 53's limit).
	RateLimit *RateLimitConfig `json:"rateLimit,omitempty"`
}

// DefaultChainConfig returns the default retry and rate limit.
func DefaultChainConfig() ChainConfig {
	r, l := DefaultRetryConfig(), DefaultRateLimitConfig()
	return ChainConfig{Retry: &r, RateLimit: &l}
}

// Validate reports the first field out of range, prefixed by "retry" or
// "rateLimit".
func (c ChainConfig) Validate() error {
	if c.Retry != nil {
		if err := c.Retry.Validate(); err != nil {
			return fmt.Errorf("retry: %w", err)
		}
	}
	if c.RateLimit != nil {
		if err := c.RateLimit.Validate(); err != nil {
			return fmt.Errorf("rateLimit: %w", err)
		}
	}
	return nil
}

// NewChain validates cfg and wraps p in a Meter reporting to obs (nil =
// nobody), a Retry and a RateLimit, as configured. It returns the wrapped
// provider and its Meter (for Stats). It starts nothing; cfg is copied.
func NewChain(p libdns.RecordGetter, cfg ChainConfig, obs Observer) (*Wrapped, *Meter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	m := NewMeter(obs)
	ics := []Interceptor{m}
	if cfg.Retry != nil {
		r, err := NewRetry(*cfg.Retry)
		if err != nil {
			return nil, nil, err
		}
		ics = append(ics, r)
	}
	if cfg.RateLimit != nil {
		l, err := NewRateLimit(*cfg.RateLimit)
		if err != nil {
			return nil, nil, err
		}
		ics = append(ics, l)
	}
	return Wrap(p, ics...), m, nil
}
