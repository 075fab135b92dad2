package provider

import (
	"errors"
	"github.com/gslbkit/gslb/internal/fielderr"
	"reflect"

	"github.com/libdns/libdns"
)

// ChainConfig configures the chain gslbkit usually puts around a DNS
// host's provider: a Meter outermost (it sees what callers see), then
// Retry, then RateLimit (each attempt takes a token). It is the shape a
// program's configuration file gives the wrappers.
//
// The zero value is the default: both wrappers on, with their defaults
// (ChainConfig{} and DefaultChainConfig() build the same chain). A nil
// field means that wrapper's default config, not "off"; turn retrying off
// with a Retry whose MaxAttempts is 1 and the limit with a RateLimit
// whose Unlimited is true.
type ChainConfig struct {
	// Retry retries throttled and transient failures. Nil (the default)
	// means RetryConfig{}, whose zero fields take DefaultRetryConfig's
	// values (Jitter, whose zero means none, excepted: nil gets 0.5).
	// MaxAttempts 1 disables retrying.
	Retry *RetryConfig `json:"retry,omitempty"`
	// RateLimit paces every attempt. Nil (the default) means
	// DefaultRateLimitConfig() (5 calls per second, Route 53's limit);
	// Unlimited disables it.
	RateLimit *RateLimitConfig `json:"rateLimit,omitempty"`
}

// ErrChainConfig is wrapped by every ChainConfig validation error (a
// *FieldError whose path starts with "retry." or "rateLimit.").
var ErrChainConfig = errors.New("provider: invalid chain config")

// ErrNilProvider is returned by NewChain and Wrap's users when the
// provider to wrap is nil.
var ErrNilProvider = errors.New("provider: nil provider")

// DefaultChainConfig returns the default retry and rate limit, spelled
// out: the same chain as ChainConfig{}.
func DefaultChainConfig() ChainConfig {
	r, l := DefaultRetryConfig(), DefaultRateLimitConfig()
	return ChainConfig{Retry: &r, RateLimit: &l}
}

// withDefaults replaces nil fields by the defaults.
func (c ChainConfig) withDefaults() ChainConfig {
	d := DefaultChainConfig()
	if c.Retry == nil {
		c.Retry = d.Retry
	}
	if c.RateLimit == nil {
		c.RateLimit = d.RateLimit
	}
	return c
}

// Validate reports the first field out of range, as a *FieldError
// wrapping ErrChainConfig (and the nested config's sentinel) with its path
// under "retry" or "rateLimit".
func (c ChainConfig) Validate() error {
	c = c.withDefaults()
	if err := c.Retry.Validate(); err != nil {
		return fielderr.In("retry", fielderr.Both(ErrChainConfig, ErrRetryConfig), err)
	}
	if err := c.RateLimit.Validate(); err != nil {
		return fielderr.In("rateLimit", fielderr.Both(ErrChainConfig, ErrRateLimitConfig), err)
	}
	return nil
}

// NewChain validates cfg and wraps p in a Meter reporting to obs (nil =
// nobody), a Retry and a RateLimit, as configured. It returns the wrapped
// provider and its Meter (for Stats). It starts nothing; cfg is copied.
// Errors: ErrNilProvider for a nil p; a *FieldError for cfg.
func NewChain(p libdns.RecordGetter, cfg ChainConfig, obs Observer) (*Wrapped, *Meter, error) {
	if isNil(p) {
		return nil, nil, ErrNilProvider
	}
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	cfg = cfg.withDefaults()
	m := NewMeter(obs)
	r, err := NewRetry(*cfg.Retry)
	if err != nil {
		return nil, nil, err
	}
	l, err := NewRateLimit(*cfg.RateLimit)
	if err != nil {
		return nil, nil, err
	}
	return Wrap(p, m, r, l), m, nil
}

// isNil reports whether p is nil or a nil pointer in an interface.
func isNil(p libdns.RecordGetter) bool {
	if p == nil {
		return true
	}
	v := reflect.ValueOf(p)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return v.IsNil()
	}
	return false
}
