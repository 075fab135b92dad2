package health

import (
	"errors"

	"github.com/gslbkit/gslb/internal/fielderr"
)

// ErrInvalidConfig is wrapped by every configuration error of this package
// (a *FieldError naming the field, the value and the allowed range).
var ErrInvalidConfig = errors.New("health: invalid config")

// ErrUnknownEndpoint is returned for an endpoint the detector does not know.
var ErrUnknownEndpoint = errors.New("health: unknown endpoint")

// ErrSyncz is wrapped by errors reading an Istio /debug/syncz document.
var ErrSyncz = errors.New("health: syncz")

// ErrRunning is returned by Run (of a Detector, an ExternalAddress or an
// IstioSync) while another Run of the same value is running.
var ErrRunning = errors.New("health: already running")

// ErrNotConfigured is returned by the methods of a zero ExternalAddress
// (one not made by NewExternalAddress) that need its configuration.
var ErrNotConfigured = errors.New("health: not configured (use its constructor)")

// FieldError reports one invalid configuration field: its path (Path, in
// JSON names, e.g. "successRate.minimumHosts" or "checks[2].name"), its
// value as written and what is allowed. It wraps ErrInvalidConfig and
// reads
//
//	health: invalid config: threshold = -5: allowed [0, 100] (percent) for mode envoy
//
// It is the module's one invalid-configuration error type.
type FieldError = fielderr.Error

func fieldErr(field string, value any, allowed string) error {
	return fielderr.New(ErrInvalidConfig, field, value, allowed)
}
