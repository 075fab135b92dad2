package provider

import "github.com/gslbkit/gslb/internal/fielderr"

// FieldError is the module's one invalid-configuration error: the field's
// path (JSON names), its value as written and what is allowed, wrapping
// the config's sentinel (ErrRetryConfig, ErrRateLimitConfig,
// ErrChainConfig). Its message reads
//
//	provider: invalid retry config: maxAttempts = 30: allowed [1, 20], or 0 for the default (4)
type FieldError = fielderr.Error
