package heartbeat

import (
	"errors"

	"github.com/gslbkit/gslb/internal/fielderr"
)

// ErrInvalidConfig is wrapped by every *FieldError that Config.Validate,
// ReaderConfig.Validate, NewPublisher and NewReader return.
var ErrInvalidConfig = errors.New("heartbeat: invalid config")

// ErrNotConfigured is returned by the methods of a zero Publisher or
// Reader (one not made by NewPublisher or NewReader).
var ErrNotConfigured = errors.New("heartbeat: not configured (use its constructor)")

// FieldError reports one configuration field out of range: its path (Path,
// e.g. "ttl" or "global.skewTolerance"), its value as written and what is
// allowed. It wraps ErrInvalidConfig and reads
//
//	heartbeat: invalid config: ttl = 2h: allowed [1s, 1h], or 0 for the default (5s)
//
// It is the module's one invalid-configuration error type. Match it with
// errors.As, or its sentinel with errors.Is(err, ErrInvalidConfig).
type FieldError = fielderr.Error

func fieldErr(field string, value any, allowed string) error {
	return fielderr.New(ErrInvalidConfig, field, value, allowed)
}

// prefixRule says what a Naming prefix may hold.
const prefixRule = "[1, 40] letters, digits and hyphens, not starting with a hyphen (or empty for the default)"
