package heartbeat

import (
	"errors"
	"fmt"
)

// ErrInvalidConfig is wrapped by every *FieldError that Config.Validate,
// ReaderConfig.Validate, NewPublisher and NewReader return.
var ErrInvalidConfig = errors.New("heartbeat: invalid config")

// FieldError reports one configuration field out of range. Match it with
// errors.As, or its sentinel with errors.Is(err, ErrInvalidConfig).
type FieldError struct {
	// Field is the field's path, e.g. "ttl" or "global.skewTolerance".
	Field string
	// Value is the offending value, formatted for people.
	Value string
	// Allowed describes the allowed values or range.
	Allowed string
	// Err is the cause under the sentinel, if any (a name check's error).
	Err error
}

// Error formats the field, the value and the allowed range.
func (e *FieldError) Error() string {
	s := fmt.Sprintf("%v: %s = %s; allowed: %s", ErrInvalidConfig, e.Field, e.Value, e.Allowed)
	if e.Err != nil {
		s += " (" + e.Err.Error() + ")"
	}
	return s
}

// Unwrap returns ErrInvalidConfig and the cause, if any.
func (e *FieldError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalidConfig, e.Err}
	}
	return []error{ErrInvalidConfig}
}

func fieldErr(field string, value any, allowed string, cause ...error) error {
	e := &FieldError{Field: field, Value: fmt.Sprint(value), Allowed: allowed}
	if s, ok := value.(string); ok {
		e.Value = fmt.Sprintf("%q", s)
	}
	if len(cause) > 0 {
		e.Err = cause[0]
	}
	return e
}
