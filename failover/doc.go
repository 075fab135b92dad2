// Package failover decides what the DNS answers should be, given health.
// Its policies are pure functions from plain data — a health Snapshot, a
// Record — to a DesiredState: DesiredSets of libdns records, each naming its
// zone, its view (which region's private copy of a split-horizon zone) and
// its writers, plus explicit Withdraws. The record package publishes them;
// this package does no I/O, reads no clock and starts no goroutine. Time
// enters through the snapshot: the caller turns heartbeats into Fresh or
// Stale with the heartbeat package's rules at its own now.
//
// A Topology lays out one service as the heartbeat controller does: app
// names CNAME to a global name, which points at each region's regional name
// or, while some region is dead, at the failover name. No DesiredSet is ever
// empty: AllUnhealthy decides what happens instead (KeepLast, FailOpen,
// FailClosed, Fallback). Controllers that cannot see each other still agree
// on what to write: only a successful read is evidence, values belong to
// the controller that observes them, and no read means no write.
//
// A RecordPolicy serves the record service's model (per-name TTL, endpoints
// with regions, health and weights, an optional failover FQDN), choosing the
// published set with a Strategy; per-query choices (RoundRobin,
// WeightedRandom, Geo, RegionFilter, Sticky, FirstN, NetFence, Latency,
// Proximity, LoadShed, combined with Chain; Explain tells why) are AnswerFuncs for the embedded zone's answer hook, each reporting
// the EDNS Client Subnet scope its answer holds for (RFC 7871). Every policy
// is a Decider; a DesiredState satisfies record.Source. Configs start from
// DefaultTopologyConfig and DefaultRecordConfig; an invalid value is a
// *FieldError wrapping ErrInvalidConfig (or ErrInvalidSnapshot).
//
// The rules in full — the topology, never empty, split brain, feeding the
// snapshot, strategies and scopes — are in docs/failover.md of the module's
// repository. See Example_topology and Example_record.
package failover
