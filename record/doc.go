// Package record changes DNS zones safely. A caller says what it wants as a
// Desired state: RRsets of libdns records plus explicit withdraws, the only
// way to remove a name. Plan, a pure function, compares that with the zones
// as a provider returns them and yields the minimal changes, grouped per
// zone in a deterministic order; a Reconciler reads the zones, plans and
// writes through any libdns provider.
//
// Its invariants are the point of the package. It never publishes an empty
// set (the published one stays, held stale: HeldStale, ErrEmptySet). It
// touches only names it owns, marked by a TXT record at "_gslb-owner.<name>"
// (ErrNotOwned otherwise), and never switches a published name between a
// CNAME and other types unless allowed (ErrTypeSwitch). A steady state costs
// no writes; failures are judged by behaviour (Throttled, Temporary) and
// retried with back-off; Run repairs drift; it reads back what it wrote and
// reports a set the provider keeps different as a conflict (ErrReadBack).
// Sets that depend on each other (RRSet.Needs, a CNAME and its pool) are
// published together or not at all (ErrDependency, Reconciler.Conflicts).
// FromSource builds a Desired from any Source, which the failover package's
// DesiredState satisfies. With a fencing token (Options.FenceToken) every
// write is conditional, in the store (a Fencer), on the zone's fence, so a
// deposed leader's late write is refused (ErrFenced).
//
// Configuration starts from DefaultConfig(ownerID) or a preset
// (Route53Config, CloudflareConfig, LocalConfig); an invalid value is a
// *FieldError wrapping ErrInvalid. docs/record.md of the module's repository
// has every rule in full. See Example for a zone being published, held
// stale and withdrawn.
package record
