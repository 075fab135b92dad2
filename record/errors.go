package record

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gslbkit/gslb/internal/fielderr"
)

// Sentinel errors. Match them with errors.Is; the typed errors below carry
// the details and unwrap to these.
var (
	// ErrEmptySet marks a desired RRset with no values. The reconciler never
	// publishes an empty set: when the name is published it keeps the current
	// values and reports them as held stale (a HeldStale event and a Held
	// entry in Changes); when nothing is published it writes nothing.
	ErrEmptySet = errors.New("record: empty record set")
	// ErrNotOwned marks a name the reconciler does not own: it holds records
	// but no owner marker with this deployment's owner id, or a marker of
	// another owner. Such names are never modified or deleted unless adopted.
	ErrNotOwned = errors.New("record: name not owned")
	// ErrTypeSwitch marks a refused switch between CNAME and other types on
	// a published name (Config.AllowTypeSwitch is false).
	ErrTypeSwitch = errors.New("record: type switch refused")
	// ErrInvalid is wrapped by every validation error: of a Config (a
	// *FieldError, also returned by New, wrapping ErrInvalidConfig too) and
	// of a Desired state (wrapping ErrInvalidDesired too).
	ErrInvalid = errors.New("record: invalid")
	// ErrMissingZone is returned by Plan when the current records of a zone
	// named by the desired state were not given.
	ErrMissingZone = errors.New("record: current records of zone missing")
)

// ErrInvalidConfig is wrapped by every Config validation error (a
// *FieldError, also returned by New); so is ErrInvalid.
var ErrInvalidConfig = errors.New("record: invalid config")

// ErrInvalidDesired is wrapped by every validation error of a Desired
// state (a *FieldError); so is ErrInvalid.
var ErrInvalidDesired = errors.New("record: invalid desired state")

// ErrNotConfigured is returned by the methods of a zero Reconciler (one
// not made by New).
var ErrNotConfigured = errors.New("record: reconciler not configured (use New)")

// The sentinels a *FieldError wraps: the config's or the desired state's,
// and ErrInvalid.
var (
	configSentinel  = fielderr.Both(ErrInvalidConfig, ErrInvalid)
	desiredSentinel = fielderr.Both(ErrInvalidDesired, ErrInvalid)
)

// FieldError reports one invalid field of a Config or of a Desired state:
// its path (Path: as in JSON for a Config, "retryMax"; as in Go for a
// Desired state, "Sets[3].Values[0]"), its value as written and what is
// allowed. It wraps ErrInvalidConfig or ErrInvalidDesired, and ErrInvalid,
// and reads
//
//	record: invalid config: writeBurst = 0: allowed [1, 10000]
//
// It is the module's one invalid-configuration error type.
type FieldError = fielderr.Error

func configErr(field string, value any, allowed string) error {
	return fielderr.New(configSentinel, field, value, allowed)
}

// EmptySetError reports a desired RRset without values. It unwraps to
// ErrEmptySet.
type EmptySetError struct {
	// Key is the RRset that was asked to become empty.
	Key Key
	// Published is true when the name still holds values, which are kept.
	Published bool
}

// Error describes the refusal.
func (e *EmptySetError) Error() string {
	if e.Published {
		return fmt.Sprintf("record: %s: desired set is empty, keeping the published set (held stale)", e.Key)
	}
	return fmt.Sprintf("record: %s: desired set is empty and nothing is published, nothing to write", e.Key)
}

// Unwrap returns ErrEmptySet.
func (e *EmptySetError) Unwrap() error { return ErrEmptySet }

// OwnershipError reports a name the reconciler may not touch. It unwraps to
// ErrNotOwned.
type OwnershipError struct {
	// Name is the node that was refused.
	Name Name
	// Owners are the owner ids found in the marker; empty when the name has
	// records but no marker at all.
	Owners []string
}

// Error describes who owns the name.
func (e *OwnershipError) Error() string {
	if len(e.Owners) == 0 {
		return fmt.Sprintf("record: %s holds records without an owner marker; adopt it to manage it", e.Name)
	}
	return fmt.Sprintf("record: %s is owned by %s", e.Name, strings.Join(e.Owners, ", "))
}

// Unwrap returns ErrNotOwned.
func (e *OwnershipError) Unwrap() error { return ErrNotOwned }

// TypeSwitchError reports a refused switch between CNAME and other types. It
// unwraps to ErrTypeSwitch.
type TypeSwitchError struct {
	// Key is the desired RRset.
	Key Key
	// Published are the types currently at the name that conflict with it.
	Published []string
}

// Error describes the refused switch.
func (e *TypeSwitchError) Error() string {
	return fmt.Sprintf("record: %s: name holds %s; switching type is not allowed (Config.AllowTypeSwitch)",
		e.Key, strings.Join(e.Published, ","))
}

// Unwrap returns ErrTypeSwitch.
func (e *TypeSwitchError) Unwrap() error { return ErrTypeSwitch }

// WriteError is a failed provider call. It unwraps to the provider's error,
// so its class (throttled, transient, permanent) is judged by behaviour.
type WriteError struct {
	// Zone is the zone written.
	Zone string
	// Op is "set" or "delete".
	Op StepKind
	// Records is the number of records in the call.
	Records int
	// Err is the provider's error.
	Err error
}

// Error describes the failed call.
func (e *WriteError) Error() string {
	return fmt.Sprintf("record: %s %d records in zone %s: %v", e.Op, e.Records, e.Zone, e.Err)
}

// Unwrap returns the provider's error.
func (e *WriteError) Unwrap() error { return e.Err }

// ReadError is a failed read of a zone. It unwraps to the provider's error.
type ReadError struct {
	// Zone is the zone read.
	Zone string
	// Err is the provider's error.
	Err error
}

// Error describes the failed read.
func (e *ReadError) Error() string {
	return fmt.Sprintf("record: read zone %s: %v", e.Zone, e.Err)
}

// Unwrap returns the provider's error.
func (e *ReadError) Unwrap() error { return e.Err }
