package replication

import (
	"errors"
	"strings"

	"github.com/gslbkit/gslb/internal/fielderr"
)

var (
	// ErrInvalidConfig is wrapped by every error about a HandlerConfig or a
	// ReplicaConfig; the error is a *FieldError.
	ErrInvalidConfig = errors.New("replication: invalid config")
	// ErrRunning is returned by a second call of Replica.Run: a Replica
	// runs once.
	ErrRunning = errors.New("replication: replica already running or ran")
	// ErrNotConfigured is returned by the methods of a Replica or Handler
	// not made by NewReplica or NewHandler (their zero values are not
	// usable).
	ErrNotConfigured = errors.New("replication: not configured (use NewReplica or NewHandler)")
)

// FieldError says which field of a HandlerConfig or ReplicaConfig is
// wrong, with its value and what is allowed; its message reads
// "replication: invalid config: <path> = <value>: allowed <what>", and it
// wraps ErrInvalidConfig. A secret's value is never shown.
type FieldError = fielderr.Error

// zoneKey is a zone name as the Provider keys it: lower case, fully
// qualified.
func zoneKey(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	return strings.TrimRight(name, ".") + "."
}
