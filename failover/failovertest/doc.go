// Package failovertest is a kit for testing failover end to end in virtual
// time. A test declares a deployment — regions, clusters (each run by one
// controller), gateways with IPv4 and IPv6 addresses — and a timeline:
// gateways going down and up or turning slow (Moment.GatewaySlow sets a
// round trip), controllers crashing and restarting, a
// region lost whole, a zone throttled or unreadable for a while, two
// regions partitioned (neither can read the other's beats, every write
// still lands), a cluster's clock skewed. At chosen instants it asserts
// what a client in each region resolves for a name, either exactly then
// (Moment.Expect) or within a failover-time bound (Moment.ExpectWithin,
// which measures when the answer arrived and logs it beside the bound).
//
// Scenario.Run plays it inside a testing/synctest bubble, so minutes of
// virtual time take milliseconds, with the real pieces: per controller, a
// probe.Monitor whose in-memory probers obey the script, a
// heartbeat.Publisher writing local and global beats while one of its
// gateways is served, a heartbeat.Reader per scope, the failover
// package's CNAME topology deciding the records from what the controller
// read, and a record.Reconciler per zone it writes. The zones are
// provider/memory zones: one global zone, shared by every controller, and
// one private copy of the local zone per region (split horizon). The
// kit's resolver asks the zones directly — the region's private zone for
// names in the local zone, the global zone for the others, following
// CNAMEs across them — so there is no TTL term in the bounds.
//
// A controller reconciles every Config.Reconcile interval (and at once
// when a gateway changes state): it reads both scopes' beats at its own
// clock, reads back its region's regional record and the failover record,
// builds a failover.Snapshot by the rules of that package's documentation
// (a failed read is unknown, never stale; a partitioned region's clusters
// are unknown; it observes only its own gateways, with their smoothed
// RTT, and knows another cluster's through the healthy-of-total count its
// version-2 beats carry, failover.Cluster.Reported), decides, and applies
// the part its region writes. Config's bound methods state the failover
// times for this wiring — the time until a client stops getting a failed
// gateway is at most the probe policy's worst-case detection
// (probe.WorstCaseDetection, jitter and timeouts included), plus the publish
// delay, plus the record's TTL through a caching resolver (none here: the
// kit's resolver asks the zones directly): GatewayBound (worst-case probe
// detection plus one reconcile), ControllerBound (the heartbeat freshness
// bound plus one reconcile), RegionGatewaysBound and RecoveryBound.
//
// A typical test:
//
//	func TestRegionLoss(t *testing.T) {
//		cfg := failovertest.DefaultConfig()
//		s := failovertest.New(cfg).
//			Region("eu").Region("us").
//			Cluster("eu-1", "eu").Cluster("us-1", "us").
//			Gateway("eu-1", "eu-a", "192.0.2.1", "2001:db8::1").
//			Gateway("us-1", "us-a", "198.51.100.1", "2001:db8:1::1")
//		s.At(30*time.Second).RegionDown("eu").
//			ExpectWithin(cfg.ControllerBound(), "eu", s.AppName(), s.RegionAddrs("us")...)
//		s.Run(t)
//	}
//
// The controllers run the configured Topology, or any
// failover.Decider[failover.Snapshot] given to Scenario.Policy: a user's own
// policy is tested the same way, against the same faults.
//
// Run needs a *testing.T (synctest.Test does). Scenario.Replay plays the
// gateway part of a timeline (gateways down and up, expectations) in a
// simpler simulated world without one — a single controller observing
// every gateway through pure probe machines, publishing at once — so an
// Example can run a scenario: Example_spillOver defines a spill-over
// policy that reads other regions' healthy counts from their beats and
// replays region a's gateways dying one by one. World.ProbeStats gives a
// gateway's probe statistics (latencies among them) in a Do step.
package failovertest
