// Command gslbd is the record service as a daemon: it probes the addresses
// of the records in its YAML config, keeps each address's state (passing,
// warning, critical, recovery), and answers each record with its healthy
// addresses — or a CNAME to the record's failover FQDN when none is — from
// an embedded authoritative DNS server, publishing to an external provider
// (RFC 2136, Route 53, Cloudflare) as well when configured. An HTTP API lists
// records with per-address state and statistics, drains and undrains
// addresses, enables and disables records, and serves the zone to DNS nodes
// (snapshot, changes, notify), signed with HMAC-SHA256 keyed by a shared
// secret that never travels; /metrics exports Prometheus metrics; logs are
// JSON on stderr. UDP answers are rate limited (dns.rrl) against
// reflection; HTTP keeps slots for /healthz and /readyz and answers 421 to
// a Host it does not know (DNS rebinding).
//
// Drains are maintenance: they hold until undrained (or an expiry), while
// probing goes on. The controller keeps operator intent, address states and
// its last published zone in a state file (stateDir, on unless written as
// ""; by default $STATE_DIRECTORY, else $XDG_STATE_HOME/gslbd, else
// ~/.local/state/gslbd), written and fsynced before an operator's action is
// answered, so a restart (kill -9 included) serves the same answer, without
// the names the config no longer has, and publishes nothing new before its
// probes have spoken. Without a usable state file DNS and replication wait
// for the first probe results rather than answer NXDOMAIN; an address is
// answered only once a probe said it is up; the SOA serial starts at the
// clock and never goes back.
//
// A record's answer kind makes the embedded server choose per query among
// the healthy addresses the record publishes, from the client's subnet
// (EDNS Client Subnet, else the source address): roundRobin,
// weightedRandom (by the addresses' weights), geo and regionFilter (by the
// config's geo block: client prefixes to regions, each region's
// preferences, a default region). The choices are the embedded zone's
// answer hooks (memory.Provider.SetAnswerFunc with failover.RoundRobin,
// WeightedRandom, Geo and RegionFilter), so an address the policy did not
// publish is never answered; an external provider cannot answer per query,
// and such a config is refused.
//
// gslbd keeps seven invariants (README.md "Invariants", checked by
// TestTorture against real processes): it never answers an address that is
// drained, disabled, removed from the config or known dead beyond its
// detection bound (I1); never answers NXDOMAIN, NODATA, REFUSED or SERVFAIL
// for a configured name the config or an operator did not withdraw, at
// startup and across restarts included (I2); never moves the SOA serial
// backwards (I3); keeps every operator call it answered 2xx across kill -9
// (I4); serves /healthz to a fresh client and DNS over TCP whatever the
// HTTP port's connections do (I5); names in /readyz every condition that
// makes an answer differ from the config and the probes (I6); and, as a
// node, applies data only from its own controller, never an older version
// of the same epoch, without exposing its secret (I7). A node and a
// standard secondary keep I1–I3 after their sync or NOTIFY + IXFR delay.
// The README lists how (a start without state does not read DNS before
// every name has an answer, and a record keepLast gives none answers its
// configured addresses; the serial follows the clock on every change and
// moves past the secondaries', asked until each answered; replication is
// signed, RRL is on, reads check the Host; a pool taken over at a provider
// falls back to the failover name or moves to a name gslbd owns) and the
// exceptions that remain (the moment before gslbd sees an emptied pool; a
// secondary it does not notify, or a node, after a burst and a restart
// without state).
//
// With -node it is a DNS node instead: it never probes, follows a
// controller's replication endpoints and answers from its copy of the zone,
// which it keeps serving while the controller is away. Answer hooks do not
// travel with replication: a node registers the same ones from its own
// config's records and geo block (run it with the controller's file), and
// answers per query exactly as the controller does.
//
//	go run ./examples/gslbd -config examples/gslbd/gslbd.example.yaml
//	go run ./examples/gslbd -config examples/gslbd/gslbd.example.yaml -check
//	dig @127.0.0.1 -p 5353 app.gslb.example.test A
//	curl -s localhost:8053/api/records
//
// The pieces it wires: probe.Monitor (one target per address, the record
// service's policy by default), failover.RecordPolicy (Embedded output for
// the embedded zone, Provider output — a CNAME to a pool name — for external
// providers), record.Reconciler (never publishes an empty set, touches only
// names it owns), provider/memory (the zone, its replication Handler and
// Replica), and the provider adapters. See README.md and the runnable
// Example (a config parsed and validated, as -check does).
package main
