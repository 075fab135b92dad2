// Package probe asks targets "are you up?" and remembers the answers.
//
// It has four layers. A Prober (HTTP, HTTPS and TCP here; gRPC and DNS in
// probe/grpcprobe and probe/dnsprobe, so importing probe costs neither) asks
// one target one question within a context deadline and returns a Result:
// Pass, Fail or FailNow, with the latency and a detail. A Machine turns a
// target's results into a State (Passing, Warning, Critical, Recovery) under
// a Policy of thresholds and a schedule; it is a pure value whose
// Observe(now, result) returns the transition and the delay to the next
// probe. Presets reproduce the peers gslbkit learns from (RecordService, the
// default, Envoy, ProxySync, Consul, Route53, Gdnsd); whole Envoy Gateway
// healthCheck blocks decode through probe/probecheck. A Monitor runs many
// targets' machines: one scheduler (with an epoll event loop on Linux),
// bounded workers, jitter, sharding, ordered events and per-target
// statistics. WorstCaseDetection bounds, for any Policy, the time from a
// target's death to the machine no longer serving it.
//
// A local failure (no descriptor, buffer or port; the host's own firewall; a
// late start) is not a verdict: the Machine does not count it and the
// Monitor reports it (TargetStats.LocalFailures, Monitor.LocalStats), degraded
// while such failures are recent. HTTP checks take a lean HTTP/1.1 path held
// to net/http's classification by a differential fuzz test; HTTPS probes
// resume TLS sessions per target, as HAProxy does.
//
// Every config starts from its DefaultX() or a preset; a zero field takes its
// default unless its zero means something; Validate reports a *FieldError
// wrapping the config's sentinel. The details — local failures, HTTP
// classification, TLS resumption and its cost, configuration — are in
// docs/probe.md of the module's repository. See the Machine, NewHTTP,
// NewTCP, TLSConfig and Monitor examples.
package probe
