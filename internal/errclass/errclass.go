package errclass

import (
	"context"
	"errors"
	"net"
	"syscall"
)

// Class is how a caller should react to an error.
type Class int

const (
	// None is the class of a nil error.
	None Class = iota
	// Permanent errors will not pass on retry; they surface to the caller.
	Permanent
	// Transient errors may pass on retry after a back-off.
	Transient
	// Throttled errors ask the caller to slow down; retry after a longer back-off.
	Throttled
)

// String returns "none", "permanent", "transient" or "throttled".
func (c Class) String() string {
	switch c {
	case None:
		return "none"
	case Permanent:
		return "permanent"
	case Transient:
		return "transient"
	case Throttled:
		return "throttled"
	}
	return "unknown"
}

// Retryable reports whether errors of this class are worth retrying.
func (c Class) Retryable() bool { return c == Transient || c == Throttled }

type throttler interface{ Throttled() bool }

type temporary interface{ Temporary() bool }

// statusCoder is satisfied by errors that carry an HTTP status code.
type statusCoder interface{ StatusCode() int }

// httpStatuser is the shape some SDKs use (e.g. smithy-go's HTTPStatusCode).
type httpStatuser interface{ HTTPStatusCode() int }

// Of classifies err. An error marked with Mark keeps the class it was
// marked with (the outermost mark wins). Otherwise the first behaviour
// found in the chain wins, in this order: Throttled() true; Temporary() true; an HTTP status (429 → throttled,
// 5xx or 408 → transient); context.DeadlineExceeded, a net.Error timeout,
// ECONNREFUSED / ECONNRESET / EPIPE → transient; context.Canceled and
// everything else → permanent.
func Of(err error) Class {
	if err == nil {
		return None
	}
	var marked *Error
	if errors.As(err, &marked) && marked.Class != None {
		return marked.Class
	}
	var th throttler
	if errors.As(err, &th) && th.Throttled() {
		return Throttled
	}
	var tmp temporary
	if errors.As(err, &tmp) && tmp.Temporary() {
		return Transient
	}
	if code, ok := StatusCode(err); ok {
		return OfStatus(code)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return Transient
	}
	if errors.Is(err, context.Canceled) {
		return Permanent
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return Transient
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNABORTED) {
		return Transient
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return Transient
	}
	return Permanent
}

// OfStatus classifies an HTTP status code: 429 → Throttled; 408, 5xx →
// Transient; 2xx/3xx → None; everything else → Permanent.
func OfStatus(code int) Class {
	switch {
	case code == 429:
		return Throttled
	case code == 408 || (code >= 500 && code <= 599):
		return Transient
	case code >= 200 && code < 400:
		return None
	}
	return Permanent
}

// StatusCode returns the HTTP status code an error in the chain carries
// through a StatusCode() int or HTTPStatusCode() int method.
func StatusCode(err error) (int, bool) {
	var sc statusCoder
	if errors.As(err, &sc) {
		if c := sc.StatusCode(); c > 0 {
			return c, true
		}
	}
	var hs httpStatuser
	if errors.As(err, &hs) {
		if c := hs.HTTPStatusCode(); c > 0 {
			return c, true
		}
	}
	return 0, false
}

// Error is an error marked with a class. It answers Throttled() and
// Temporary() accordingly and unwraps to the error it marks.
type Error struct {
	Class Class
	Err   error
}

// Mark returns err marked with class c; nil stays nil.
func Mark(err error, c Class) error {
	if err == nil {
		return nil
	}
	return &Error{Class: c, Err: err}
}

// Error returns the marked error's message.
func (e *Error) Error() string {
	if e.Err == nil {
		return e.Class.String() + " error"
	}
	return e.Err.Error()
}

// Unwrap returns the marked error.
func (e *Error) Unwrap() error { return e.Err }

// Throttled reports whether the error asks the caller to slow down.
func (e *Error) Throttled() bool { return e.Class == Throttled }

// Temporary reports whether the error may pass on retry (throttled errors do too).
func (e *Error) Temporary() bool { return e.Class == Transient || e.Class == Throttled }
