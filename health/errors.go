package health

import "errors"

// ErrInvalidConfig is wrapped by every configuration error of this package;
// the message names the field, the value and the allowed range.
var ErrInvalidConfig = errors.New("health: invalid config")

// ErrUnknownEndpoint is returned for an endpoint the detector does not know.
var ErrUnknownEndpoint = errors.New("health: unknown endpoint")

// ErrSyncz is wrapped by errors reading an Istio /debug/syncz document.
var ErrSyncz = errors.New("health: syncz")
