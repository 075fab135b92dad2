// Package failover decides what the DNS answers should be, given health.
// Its policies are pure functions from plain data — a health Snapshot, a
// Record — to a DesiredState: DesiredSets of libdns records, each naming its
// zone, its view (which region's private copy of a split-horizon zone) and
// its writers, plus explicit Withdraws. The record package publishes them;
// this package does no I/O, reads no clock and starts no goroutine. Time
// enters through the snapshot: the caller turns heartbeats into Fresh or
// Stale with the heartbeat package's rules at its own now.
//
// # The CNAME topology
//
// A Topology lays out one service the way the heartbeat controller does
// (see TopologyConfig): app names are CNAMEs to the global name; the global
// name is a CNAME to the regional name, which every region serves from its
// own private zone with the addresses of its healthy gateways in fresh
// clusters; the failover name holds every healthy gateway of every healthy
// region. While some region is dead the global name points at the failover
// name, and back at the regional name when it recovers. A region's
// regional record is written by that region's controllers; the global,
// failover and app names by every controller.
//
// # Never empty
//
// No DesiredSet a policy returns is empty. When a set would have no served
// address, AllUnhealthy decides: by default (KeepLast) the set is simply
// omitted from the DesiredState, which tells the reconciler to keep the last
// published set — stale, and reported as held — until an address
// recovers; Decision.Held says so. FailOpen publishes every address,
// FailClosed withdraws the name, Fallback points a CNAME at a fixed
// target. A name that keeps IPv4 addresses but loses its last IPv6 one
// has its AAAA set withdrawn (and vice versa): the name still answers.
//
// Keep last can hold a region's clients on its last survivors, or on dead
// gateways until the region's beats go stale. TopologyConfig.PanicThreshold
// applies Envoy's panic threshold to a region instead: below that share of
// its addresses (strictly below, in whole percent) the region is treated as
// failed, and its regional record holds the other regions' failover
// addresses at once; a controller that also stops beating below the same
// threshold makes every controller fail the region over (the
// examples/multiregion program does both, at 50 %).
//
// # Split brain: who may remove what
//
// Controllers in different regions may stop reading each other's beats
// while still writing the shared zone. Two writers that each publish only
// what they can see would flip the shared names back and forth. Decide
// avoids that with three rules, so that controllers that disagree about
// what they can see still agree about what to write:
//
//  1. Only a successful read is evidence. A beat is Fresh, Stale (read and
//     too old, bad, or missing from a successful listing) or Unknown (not
//     read). Every controller that reads the zone reads the same beats, so
//     Stale is evidence that survives a partition; Unknown is no evidence
//     and never removes anything. A region is dead only when every one of
//     its clusters is Stale; the global name points at the failover name
//     when some region is dead, at the regional name when every region is
//     alive, and is held (not written) by a controller that knows no dead
//     region but cannot see some region at all.
//  2. Values belong to their observers. A gateway's addresses enter or
//     leave a shared set (a regional record shared by a region's
//     controllers, or the failover record shared by all) by the word of
//     the controller that observes the gateway (Health known). Every other
//     controller copies the published membership (Snapshot.Failover,
//     Region.Regional): it neither adds nor removes those addresses, except
//     that it removes the addresses of a Stale cluster, and adds a Fresh
//     cluster's addresses while the set has never been published. A
//     controller therefore changes only its own values, plus other values
//     on shared evidence.
//  3. No read, no write. A controller that could not read a shared set
//     back and holds values it does not observe leaves the set out of its
//     Desired (Held with HoldUnread) instead of guessing. Decisions that
//     a controller seeing every cluster could take differently are left
//     to those that see every cluster: under FailOpen an address set whose
//     scope has an unknown cluster is held, and under Fallback the global
//     name is held while some region is unknown and the others are dead.
//
// So during a partition each region keeps serving its own healthy gateways
// through its regional record, the global and failover names keep their
// last values, and nobody flips them; once reads work again every
// controller sees the same beats and the same published sets, and the
// next reconcile of each converges to one value. (While views still
// differ, a change may take a few reconciles to settle — a controller
// cannot remove the last address of a set until another controller has
// added one, and leaving fail open takes two — but writes always stop.) Given the same Snapshot,
// every controller computes the same Desired. The caller must therefore
// report a beat it failed to read as FreshnessUnknown, never as Stale,
// should let each gateway be observed by one controller (or by several
// that agree), and should give every controller the same inventory:
// addresses found in a shared set that belong to no gateway of the
// inventory are dropped, so a gateway known to some controllers only
// (during a rollout of the inventory) may come and go until all agree.
//
// # Feeding the snapshot
//
// From a heartbeat read of one scope: a cluster whose status is fresh is
// Fresh; one that is not fresh, or absent from a listing that succeeded, is
// Stale; every cluster is FreshnessUnknown when the read failed (even
// though the reader still judges the beats it saw last), and so is a
// cluster whose beats this controller cannot read at all. Gateways this
// controller probes carry their probe state (Health(state)) and their RTT,
// the probe monitor's smoothed latency (probe.TargetStats.SmoothedLatency);
// the others carry HealthUnknown. A cluster's Reported summary is what its
// fresh beat says (heartbeat.Beat.Summary; unknown for a version-1 beat):
// how many of its gateways are healthy, which a controller of another
// region cannot observe. Published holds the addresses read back at the
// failover name and at the region's own regional name. DesiredSet.RelativeName
// and DesiredSet.Values give the record package's form of a set.
//
// # Records, strategies and per-query answers
//
// A RecordPolicy serves the record service's model: per-name TTL,
// endpoints with region tags, health and weights, an optional failover
// FQDN and a disabled flag. Provider output never switches a name's type:
// the name is a CNAME to a pool name holding the A/AAAA set, or to the
// failover FQDN. Embedded output (for the embedded zone, which swaps whole
// snapshots) answers A/AAAA directly and switches to a CNAME when needed.
// Record.ForRegions gives region-filtered views. A Strategy chooses the
// published set among the healthy endpoints: all healthy, priority
// (primary region first), or weighted (weight 0 only when nothing else is
// healthy). Choices made per query — RoundRobin, WeightedRandom, Geo,
// RegionFilter, Sticky, FirstN and NetFence, combined with Chain — are
// AnswerFuncs for the embedded
// zone's answer hook; a Locator places clients by EDNS Client Subnet or
// resolver address using the caller's GeoMap. Every policy handles IPv4
// and IPv6 alike. The steering commercial GSLBs sell is three more steps:
// Latency answers the pool this controller measures fastest (a
// LatencyTable the program feeds, with hysteresis: LatencyConfig),
// Proximity the nearest pool by great-circle distance after a Route 53
// style bias (GeoMap.Coordinates), and LoadShed moves a growing,
// per-client-network share of clients off a loaded pool (a LoadTable and
// ShedConfig's watermarks).
//
// Each answer function also reports its scope: how many leading bits of
// the client's prefix its answer depends on, which the embedded zone
// echoes as the EDNS Client Subnet SCOPE PREFIX-LENGTH (RFC 7871 section
// 7.2.1; never more than the query's SOURCE PREFIX-LENGTH). A caching
// resolver serves an answer to every client inside that network, so the
// scope is never wider than the decision: Geo and RegionFilter report the
// shortest prefix around the client inside which every client is placed
// alike (with 10/8 → us and 10.1/16 → eu, a client in 10.2/16 gets scope
// 15, which leaves 10.1/16 out; an unplaced client the widest network
// around it that holds no map prefix, as gdnsd derives its scope from its
// network tree), Chain the longest of its steps', and RoundRobin and
// WeightedRandom, which do not look at the client, 0 (a resolver then
// caches one draw for all its clients, as it does without ECS).
//
// # Policies are values
//
// Decider[In] is the interface every policy satisfies: Decide(now, in)
// returns a Decision. Topology is a Decider[Snapshot], RecordPolicy a
// Decider[Record], and a user's own rule is a DeciderFunc; the test kit
// failover/failovertest runs any Decider[Snapshot] in its scenarios.
// AddrSets builds the address sets a user's policy publishes, and a
// Strategy may carry a user's SelectFunc instead of a built-in kind. A
// DesiredState is handed to the record package as it is: it satisfies
// record.Source through its Records and Withdrawals methods (plain libdns
// values per view and zone), so no glue is needed between the two.
//
// # Configuration
//
// TopologyConfig and RecordConfig start from DefaultTopologyConfig and
// DefaultRecordConfig (or a preset such as RecordServiceConfig); a zero
// field takes its default (the zero RecordConfig is the default, and a
// TopologyConfig needs only Service and Domain). TTLs are time.Duration,
// written "30s" in JSON. Every invalid value is a *FieldError naming the
// field's path, its value and what is allowed, wrapping ErrInvalidConfig
// (or ErrInvalidSnapshot for a bad Snapshot or Record).
//
// See Example_topology and Example_record.
package failover
