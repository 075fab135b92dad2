package memory

import (
	"errors"
	"fmt"

	"github.com/gslbkit/gslb/internal/fielderr"
	"github.com/gslbkit/gslb/internal/zonerecord"
)

// Sentinel errors. Every error the Provider returns wraps one of these, so
// callers test with errors.Is; errors about one record are a *RecordError.
var (
	// ErrNoZone means the zone named in a call is not held by the Provider.
	ErrNoZone = errors.New("memory: no such zone")
	// ErrZoneExists means AddZone was called for a zone that is already held.
	ErrZoneExists = errors.New("memory: zone already exists")
	// ErrNotInZone means a record's owner name lies outside the zone.
	ErrNotInZone = zonerecord.ErrNotInZone
	// ErrInvalidRecord means a record's name, TTL or data cannot be served.
	ErrInvalidRecord = zonerecord.ErrInvalidRecord
	// ErrUnsupportedType means the record type is not one the zone stores
	// (see SupportedTypes). SOA is managed by the zone itself and is refused.
	ErrUnsupportedType = zonerecord.ErrUnsupportedType
	// ErrCNAMEConflict means the change would leave a CNAME beside other data
	// at one name (or two CNAMEs at one name), which RFC 1034 forbids.
	ErrCNAMEConflict = errors.New("memory: CNAME beside other data")
	// ErrApexCNAME means the change would put a CNAME at the zone apex, where
	// the SOA and NS records live.
	ErrApexCNAME = errors.New("memory: CNAME at the zone apex")
	// ErrInvalidZone means a zone name or zone configuration is malformed.
	ErrInvalidZone = errors.New("memory: invalid zone")
	// ErrInvalidConfig is wrapped by every error about a Config (a
	// ZoneConfig's errors wrap ErrInvalidZone); the error is a *FieldError.
	ErrInvalidConfig = errors.New("memory: invalid config")
)

// FieldError says which field of a configuration is wrong, with its value
// and what is allowed; its message reads "memory: invalid config: <path> =
// <value>: allowed <what>". It wraps ErrInvalidConfig (ErrInvalidZone for a
// ZoneConfig).
type FieldError = fielderr.Error

// RecordError reports a refused record: the zone, the owner name (fully
// qualified, lower case), the type, and the reason, which wraps one of the
// sentinel errors above. A call that returns an error changes nothing.
type RecordError struct {
	Zone string
	Name string
	Type string
	Err  error
}

// Error implements error.
func (e *RecordError) Error() string {
	return fmt.Sprintf("memory: zone %s: %s %s: %v", e.Zone, e.Name, e.Type, e.Err)
}

// Unwrap returns the reason.
func (e *RecordError) Unwrap() error { return e.Err }

func recErr(zone, name, typ string, err error) error {
	return &RecordError{Zone: zone, Name: name, Type: typ, Err: err}
}
