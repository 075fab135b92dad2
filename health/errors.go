package health

import (
	"errors"
	"fmt"
)

// ErrInvalidConfig is wrapped by every configuration error of this package
// (a *FieldError naming the field, the value and the allowed range).
var ErrInvalidConfig = errors.New("health: invalid config")

// ErrUnknownEndpoint is returned for an endpoint the detector does not know.
var ErrUnknownEndpoint = errors.New("health: unknown endpoint")

// ErrSyncz is wrapped by errors reading an Istio /debug/syncz document.
var ErrSyncz = errors.New("health: syncz")

// FieldError reports one invalid configuration field: its path, its value
// and what is allowed. It unwraps to ErrInvalidConfig.
type FieldError struct {
	// Field is the field's path as in JSON, e.g. "successRate.minimumHosts"
	// or "checks[2].name".
	Field string
	// Value is the offending value, formatted for people.
	Value string
	// Allowed describes the allowed values or range.
	Allowed string
}

// Error formats the field, the value and the allowed range.
func (e *FieldError) Error() string {
	return fmt.Sprintf("%v: %s = %s; allowed: %s", ErrInvalidConfig, e.Field, e.Value, e.Allowed)
}

// Unwrap returns ErrInvalidConfig.
func (e *FieldError) Unwrap() error { return ErrInvalidConfig }

func fieldErr(field string, value any, allowed string) error {
	return &FieldError{Field: field, Value: fmt.Sprint(value), Allowed: allowed}
}
