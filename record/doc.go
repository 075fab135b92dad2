// Package record changes DNS zones safely. A caller (a failover policy, a
// controller) says what it wants as a Desired state: RRsets of libdns
// records — a zone, a name relative to it ("@" for the apex), a type, a TTL
// and values — plus explicit withdraws, the only way to remove a name. Plan,
// a pure function, compares that with the zones as a provider returns them
// and yields the minimal changes, grouped per zone in a deterministic order;
// a Reconciler reads the zones, plans and writes through any libdns
// provider, as one SetRecords (or DeleteRecords) call per zone where it can.
//
// Its invariants are the point of the package. It never publishes an empty
// set: when the desired values of a published RRset run out, the published
// ones stay and are reported held stale (HeldStale, ErrEmptySet), since a
// stale answer serves clients better than none. It touches only names it
// owns, marked by a TXT record at "_gslb-owner.<name>" holding the
// deployment's owner id, which it writes before the records and removes after
// them; names holding records without that marker are never changed unless
// adopted (ErrNotOwned). It refuses to switch a published name between a
// CNAME and other types unless allowed (ErrTypeSwitch), and reports the
// window when the provider cannot switch atomically. A steady state costs no
// writes. Failures are judged by behaviour (Throttled() / Temporary()):
// throttled and transient ones are retried with jittered exponential
// back-off, permanent ones surface, and the desired state stays pending until
// it is applied; while Run backs off, new desired states wait for the
// pending retry. Run re-reads the zones periodically and repairs drift on
// owned names; a rate limiter caps reads and writes; a dry run prints the
// plan instead. It trusts what landed, not what was accepted: after writing
// it reads back the sets it changed, and a set the provider keeps different
// several applies in a row (a libdns adapter that collapses a set, a
// server that ignores a CNAME) is a conflict (ErrReadBack) it reports and
// stops rewriting.
//
// Names that depend on each other are published together: a set may
// declare the sets it needs (RRSet.Needs), and a CNAME needs the sets the
// desired state publishes at its target in a desired zone (its pool). A
// set is never published, nor changed, while something it needs cannot be
// published — the need is owned by someone else, refused, or its write
// failed (a partial batch included): what is published stays, the set is
// reported as a Refusal matching ErrDependency (a RefusedEvent), and
// Reconciler.Conflicts lists every refusal by name for a readiness check.
// Within a zone, dependents are written in a call after their needs.
//
// A Desired can also be built from another package's decision without glue:
// FromSource reads any Source, an interface of plain libdns values that
// the failover package's Desired satisfies.
//
// Configuration follows one rule: start from DefaultConfig(ownerID) or a
// preset (Route53Config, CloudflareConfig, LocalConfig) and change fields;
// a zero field takes its default unless its zero means something (a
// RetryJitter of 0 is no jitter); durations are time.Duration, written
// "60s" in JSON; an invalid value is a *FieldError naming the field, the
// value and what is allowed, wrapping ErrInvalid, as New returns it.
//
// See Example for a zone being published, held stale and withdrawn.
package record
