package route53

import (
	"errors"
	"fmt"

	"github.com/gslbkit/gslb/internal/errclass"
)

// apiError is the shape of the AWS SDK's API errors (smithy-go's
// APIError): the service's error code, e.g. "Throttling".
type apiError interface {
	ErrorCode() string
}

// Route 53 error codes and how gslbkit treats them. Codes not listed fall
// back to the HTTP status and the network error (see provider.ErrorClass).
var codeClass = map[string]errclass.Class{
	// Slow down: the account's 5 requests per second, or a change still
	// being applied to the same RRset.
	"Throttling":                  errclass.Throttled,
	"ThrottlingException":         errclass.Throttled,
	"PriorRequestNotComplete":     errclass.Throttled,
	"TooManyRequestsException":    errclass.Throttled,
	"RequestLimitExceeded":        errclass.Throttled,
	"ServiceUnavailable":          errclass.Transient,
	"InternalFailure":             errclass.Transient,
	"InternalError":               errclass.Transient,
	"RequestTimeout":              errclass.Transient,
	"InvalidChangeBatch":          errclass.Permanent,
	"InvalidInput":                errclass.Permanent,
	"NoSuchHostedZone":            errclass.Permanent,
	"AccessDenied":                errclass.Permanent,
	"AccessDeniedException":       errclass.Permanent,
	"InvalidClientTokenId":        errclass.Permanent,
	"SignatureDoesNotMatch":       errclass.Permanent,
	"UnrecognizedClientException": errclass.Permanent,
	"ExpiredToken":                errclass.Permanent,
}

// ErrNoZone is matched (errors.Is) when no hosted zone has the name asked
// for (and no HostedZoneID is configured). It is permanent.
var ErrNoZone = errors.New("route53: hosted zone not found")

// ErrorCode returns the Route 53 error code carried by err ("" when none).
func ErrorCode(err error) string {
	var ae apiError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// WrapError wraps err from method on zone so that it answers Throttled()
// and Temporary(): by Route 53 error code first (Throttling and
// PriorRequestNotComplete are throttled), then by HTTP status (429
// throttled, 5xx transient), then as provider.Classify judges network
// errors and contexts. The original error stays reachable with errors.As
// (e.g. *types.InvalidChangeBatch). nil stays nil. provider.Classify reads
// the class back from the result.
func WrapError(method, zone string, err error) error {
	if err == nil {
		return nil
	}
	wrapped := fmt.Errorf("route53: %s %s: %w", method, zone, err)
	if c, ok := codeClass[ErrorCode(err)]; ok {
		return errclass.Mark(wrapped, c)
	}
	return errclass.Mark(wrapped, errclass.Of(err))
}

// ErrNotConfigured is returned by the methods of a Provider not made by New
// (a zero Provider).
var ErrNotConfigured = errors.New("route53: provider not configured (use New)")
