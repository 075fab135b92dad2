// Package failovertest is a kit for testing failover end to end in virtual
// time. A test declares a deployment — regions, clusters (each run by one
// controller), gateways with IPv4 and IPv6 addresses — and a timeline of
// faults: gateways down, up or slow, controllers crashing, a region lost,
// a zone throttled or unreadable, two regions partitioned, a clock skewed.
// At chosen instants it asserts what a client in each region resolves,
// exactly then (Moment.Expect) or within a bound (Moment.ExpectWithin).
//
// Scenario.Run plays it inside a testing/synctest bubble with the real
// pieces per controller (probe.Monitor, heartbeat.Publisher and Reader, the
// failover topology, record.Reconciler) over provider/memory zones, so
// minutes take milliseconds; Config's bound methods (GatewayBound,
// ControllerBound, RegionGatewaysBound, RecoveryBound) state the failover
// times of this wiring. The controllers run the configured Topology or any
// failover.Decider[failover.Snapshot] given to Scenario.Policy.
// Scenario.Replay plays a timeline's gateway part without a *testing.T, so
// an Example can run one (Example_spillOver).
//
// How a controller reconciles, how the bounds are built and a typical test
// are in docs/failovertest.md of the module's repository.
package failovertest
