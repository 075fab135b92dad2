package zonetransfer

import (
	"errors"

	"github.com/gslbkit/gslb/internal/fielderr"
)

var (
	// ErrInvalidConfig is wrapped by every error about a TransferConfig;
	// the error is a *FieldError.
	ErrInvalidConfig = errors.New("zonetransfer: invalid config")
	// ErrRunning is returned by a second call of Transfer.Run: a Transfer
	// runs once.
	ErrRunning = errors.New("zonetransfer: already running or ran")
	// ErrNoProvider is returned by NewTransfer without a Provider, and by
	// the methods of a Transfer not made by NewTransfer (the zero Transfer
	// is not usable).
	ErrNoProvider = errors.New("zonetransfer: no provider (use NewTransfer)")
)

// FieldError says which field of a TransferConfig is wrong, with its value
// and what is allowed; its message reads "zonetransfer: invalid config:
// <path> = <value>: allowed <what>", and it wraps ErrInvalidConfig.
type FieldError = fielderr.Error
