package provider

import "github.com/gslbkit/gslb/internal/errclass"

// ErrorClass says how a loop should treat a provider's error: give up on
// the call (Permanent), try again (Temporary), or slow down and try again
// (Throttled). gslbkit's loops (the reconciler, the heartbeat publisher,
// the Retry wrapper) judge errors this way, so a throttled provider causes
// back-off, never a failover.
//
// Errors carry their class as behaviour, the way net.Error carries
// Timeout(): an error whose chain has a Throttled() bool method answering
// true is throttled; one with Temporary() true is temporary. Providers that
// say nothing are judged by what their errors are: HTTP 429 is throttled;
// 408 and 5xx, context deadlines, network timeouts, refused and reset
// connections are temporary; everything else is permanent. Any libdns
// provider, ours or yours, takes part without importing this package; use
// Mark to give an error its class explicitly.
type ErrorClass int

const (
	// NoError is the class of a nil error.
	NoError ErrorClass = iota
	// Permanent errors will not pass by retrying: bad credentials, a
	// missing zone, a record the provider refuses.
	Permanent
	// Temporary errors may pass: timeouts, 5xx, a dropped connection.
	Temporary
	// Throttled errors ask the caller to slow down (HTTP 429, Route 53's
	// Throttling, a rate limiter's refusal).
	Throttled
)

// String returns "none", "permanent", "temporary" or "throttled".
func (c ErrorClass) String() string {
	switch c {
	case NoError:
		return "none"
	case Permanent:
		return "permanent"
	case Temporary:
		return "temporary"
	case Throttled:
		return "throttled"
	}
	return "unknown"
}

// Retryable reports whether an error of class c may pass by retrying.
func (c ErrorClass) Retryable() bool { return c == Temporary || c == Throttled }

// Classify returns err's class (see ErrorClass for the rules).
func Classify(err error) ErrorClass {
	switch errclass.Of(err) {
	case errclass.None:
		return NoError
	case errclass.Transient:
		return Temporary
	case errclass.Throttled:
		return Throttled
	}
	return Permanent
}

// Mark returns err with class c: the result answers Throttled() and
// Temporary() accordingly, and errors.Is and errors.As see err through it.
// A nil err stays nil; NoError returns err unchanged.
func Mark(err error, c ErrorClass) error {
	switch c {
	case Permanent:
		return errclass.Mark(err, errclass.Permanent)
	case Temporary:
		return errclass.Mark(err, errclass.Transient)
	case Throttled:
		return errclass.Mark(err, errclass.Throttled)
	}
	return err
}
