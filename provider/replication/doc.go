// Package replication copies memory zones over HTTP, so a DNS node serves a
// copy that keeps answering while its source is away. Handler serves a
// source Provider (snapshot, changes since a version, notify; a shared
// secret in a header, optionally region-filtered through a RegionFilter);
// Replica follows it into a local Provider: a full snapshot first, then the
// journal's changes on every interval and on Notify (SendNotify).
//
// A Replica trusts only the zones it is configured with: a snapshot or
// change set that is empty, lacks one of them, brings another or the root
// is refused and the copy kept (RejectError). Snapshots stream both ways:
// the Handler writes them as it walks the source's zones, a Replica builds
// the new copy record by record as the body arrives, up to a limit, and
// publishes it only once the body's signature verifies, so a copy is never
// held twice beside its encoding (docs/replication.md). Every
// Provider's history has an epoch that replication carries, so a replica
// never applies a restarted source's journal onto a copy of the old
// history: it takes a full snapshot instead. Given a directory, a Replica
// keeps its last good copy there (replaced atomically, with a format version
// and a checksum, and a journal of the change sets since) and answers from
// it after a restart, degraded until a sync succeeds; it serves no version
// before it is on disk.
//
// A Replica runs once (ErrRunning); the zero Replica and Handler are not
// usable (ErrNotConfigured, 401). A zero field takes its default except a
// replica's URL, Zones and secret, which have none; Validate reports a
// *FieldError ("replication: invalid config: ...").
//
// See Example.
package replication
