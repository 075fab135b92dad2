package probe

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// FieldError says which config field holds a bad value and what the field
// may hold. Every error a config's Validate (and every constructor that
// validates) returns for a bad value is a *FieldError; it wraps the
// config's sentinel (ErrInvalidPolicy, ErrHTTPConfig, ErrTCPConfig,
// ErrTLSConfig, ErrMonitorConfig, or a prober subpackage's own), so both
// errors.As(err, &fe) and errors.Is(err, ErrHTTPConfig) work.
type FieldError struct {
	// Field is the path of the field, in JSON names, relative to the
	// config that was validated: "criticalThreshold", "tls.certFile",
	// "expectedStatuses[1]". A config nested in another gets its parent's
	// name in front ("http.tls.certFile").
	Field string
	// Value is the offending value, formatted (strings quoted).
	Value string
	// Allowed describes what the field may hold ("1–65535",
	// "≥ warningThreshold (3)", "set together with keyFile").
	Allowed string
	// Err is the sentinel of the config the field belongs to.
	Err error
}

// Error formats the sentinel, the field, the value and what is allowed.
func (e *FieldError) Error() string {
	prefix := "probe: config"
	if e.Err != nil {
		prefix = e.Err.Error()
	}
	return fmt.Sprintf("%s: %s = %s: allowed %s", prefix, e.Field, e.Value, e.Allowed)
}

// Unwrap returns the config's sentinel.
func (e *FieldError) Unwrap() error { return e.Err }

// fieldErr builds a *FieldError; strings are quoted, durations and other
// values formatted with %v.
func fieldErr(sentinel error, field string, value any, allowed string) *FieldError {
	var v string
	switch x := value.(type) {
	case string:
		v = strconv.Quote(x)
	case time.Duration:
		v = x.String()
	default:
		v = fmt.Sprint(x)
	}
	return &FieldError{Field: field, Value: v, Allowed: allowed, Err: sentinel}
}

// fieldIn puts parent in front of the field path of err when err is a
// *FieldError, and makes it wrap sentinel, the enclosing config's (a copy
// is returned); other errors are returned unchanged.
func fieldIn(parent string, sentinel, err error) error {
	var fe *FieldError
	if err == nil || !errors.As(err, &fe) {
		return err
	}
	c := *fe
	c.Err = sentinel
	if c.Field == "" || c.Field[0] == '[' {
		c.Field = parent + c.Field
	} else {
		c.Field = parent + "." + c.Field
	}
	return &c
}
