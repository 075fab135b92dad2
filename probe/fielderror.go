package probe

import "github.com/gslbkit/gslb/internal/fielderr"

// FieldError says which config field holds a bad value and what the field
// may hold. Every error a config's Validate (and every constructor that
// validates) returns for a bad value is a *FieldError; it wraps the
// config's sentinel (ErrInvalidPolicy, ErrHTTPConfig, ErrTCPConfig,
// ErrTLSConfig, ErrMonitorConfig, or a prober subpackage's own), so both
// errors.As(err, &fe) and errors.Is(err, ErrHTTPConfig) work. Its message
// reads
//
//	probe: invalid policy: interval = -1s: allowed [1ms, 5m]
//
// with the path in JSON names relative to the validated config (Path:
// "criticalThreshold", "tls.certFile", `targets["web"].policy.timeout`),
// the value as written and what is allowed ([lo, hi] ranges, ">= lo",
// `one of "a", "b"` or a rule). It is the module's one invalid-config
// error type, shared by every package.
type FieldError = fielderr.Error

// fieldErr builds a *FieldError; strings are quoted, durations short.
func fieldErr(sentinel error, field string, value any, allowed string) *FieldError {
	return fielderr.New(sentinel, field, value, allowed)
}

// fieldIn re-roots err, when it is a *FieldError, under parent and makes it
// wrap sentinel, the enclosing config's; other errors are returned
// unchanged.
func fieldIn(parent string, sentinel, err error) error { return fielderr.In(parent, sentinel, err) }
