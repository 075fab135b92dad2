// Package probe asks targets "are you up?" and remembers the answers.
//
// It has four layers. A Prober (HTTP, HTTPS and TCP here; the gRPC health
// and DNS probers in the subpackages probe/grpcprobe and probe/dnsprobe,
// so that importing probe costs neither gRPC nor a DNS library) asks one
// target one question within a context deadline and returns a Result:
// Pass, Fail (counts toward a threshold) or FailNow (the target answered,
// wrongly: it goes critical at once), with the latency and a detail for
// logs. A Machine turns a target's stream of results into a State —
// Passing, Warning, Critical or Recovery, only the first two served — under
// a Policy of thresholds, an initial state, fail-now handling and a
// schedule; it is a pure value whose Observe(now, result) returns the
// transition, if any, and the base delay to the next probe, so every rule
// is tested without a clock. Presets give the Policy of each peer gslbkit
// learns from, with that peer's rules: RecordService (the default), Envoy,
// ProxySync, Consul, Route53 and Gdnsd; policies decode from JSON in the
// record service's vocabulary (warningThreshold, criticalThreshold,
// passingThreshold) or Envoy Gateway's (unhealthyThreshold,
// healthyThreshold; whole healthCheck.active blocks, prober included,
// decode through probe/probecheck, which wires every prober type). Finally a Monitor runs the machines of many
// targets: one scheduler goroutine, which on Linux also runs the HTTP, HTTPS
// and TCP connect-only checks to IP addresses in an epoll event loop (a
// plain probe in flight is a small record, an HTTPS one a coroutine; no
// worker goroutine either way), a bounded pool of workers for the other
// probes, jitter from a seeded source, sharding across controllers, ordered
// transition events and per-target statistics.
//
// WorstCaseDetection states, for any Policy, the longest time from a
// target's death to the machine no longer serving it, timeouts and jitter
// included; failover bounds elsewhere in gslbkit are built on it.
//
// A local failure is not a verdict. An attempt that fails because of this
// process or host, before anything reached the target, has Kind KindLocal:
// no descriptor left (EMFILE, ENFILE), no kernel buffer or memory
// (ENOBUFS, ENOMEM), no ephemeral port (EADDRNOTAVAIL, or EAGAIN from
// connect), refused by the host's own firewall or security policy (EPERM,
// EACCES), or started only after its deadline because the scheduler was
// late. The Machine does not count it (no transition, no back-off step),
// the Monitor probes the target again on its normal schedule and counts it
// per target (TargetStats.LocalFailures) and Monitor-wide
// (Monitor.LocalStats), on the event loop and on the workers alike. So a
// process that runs out of descriptors — a flood of clients on a server
// in the same process — does not fail every target over. ENETUNREACH and
// EHOSTUNREACH mean either a route missing from this host's table or a
// router's ICMP report that the target's network is unreachable; they are
// local only in the first case, told apart by where the error came from
// (connect itself, in the event loop) or by a route lookup (a UDP connect
// to the target's address, which sends nothing, for probes on workers).
// While local failures happened within the last DegradedWindow the Monitor
// is degraded: LocalStats says so, with the share of local failures, and an
// Observer that is also a DegradedObserver is told when it starts and ends.
// WorstCaseDetection does not hold while the Monitor is degraded.
//
// HTTP checks take a lean HTTP/1.1 path over net.Conn by default (one
// request, only the bytes needed for the verdict read, pooled buffers); the
// net/http engine is kept as the reference, and a differential fuzz test
// holds the two to the same classification. Classification follows Envoy:
// timeouts, refused and reset connections and retriable statuses Fail; an
// unexpected status, a body mismatch (checked first) or a gRPC reply other
// than SERVING FailNow; a malformed reply Fails as a protocol error.
//
// HTTPS (and gRPC over TLS) probes resume TLS sessions by default, as
// HAProxy's checks do: each prober keeps the last session ticket of its
// own target (one entry, never offered to another target) and the next
// probe resumes with it when the server allows, which skips the server's
// certificate and its verification. The certificate is then checked only
// at full handshakes (a declined or expired ticket, at most every 7 days
// with TLS 1.3); TLSConfig.DisableResumption makes every probe a full
// handshake. A stored session costs about 0.5 KB per target plus the
// server's certificates (about 3.5 KB for an ECDSA leaf), shared between
// targets that present the same one; targets configured with the same TLS
// settings share one tls.Config and one parsed CA pool.
//
// # Configuration
//
// Every config type (Policy, MonitorConfig, HTTPConfig, TCPConfig,
// TLSConfig, and those of the prober subpackages) follows one rule. Start
// from its DefaultX() (or a preset) and change fields. A field left at
// zero takes its default, so a zero config is the defaults, except where a
// field's zero already means something, and then it keeps that meaning
// (HTTPConfig.MatchWindow 0 searches the whole body, the jitters 0 add
// none, Policy.UnhealthyInterval 0 means Interval); each field's comment
// says which. Durations are plain time.Duration fields; in JSON the config
// types read and write Go duration strings ("10s", "250ms") or numbers of
// seconds. Validate reports the first bad value as a *FieldError naming the
// field path (in JSON names), the value and what is allowed; it wraps the
// config's sentinel (ErrInvalidPolicy, ErrMonitorConfig, ErrHTTPConfig,
// ErrTCPConfig, ErrTLSConfig). Constructors validate the same way, never
// change the caller's config and never replace a bad value.
//
// See the Machine example for a target moving through its states, the
// NewHTTP and NewTCP examples for probers, the TLSConfig example for an
// HTTPS check and its session resumption, and the Monitor example.
package probe
