// Package health turns several signals into one verdict per gateway or
// endpoint.
//
// A Gate combines the checks enabled for one gateway: every one must pass,
// any single failure makes the verdict unhealthy at once, and a check may
// need several consecutive passes to count again (the proxy-sync check needs
// three; a probe.Machine per check keeps the count). The signals a Gate
// reads are fed by the caller — the library has no Kubernetes client:
// EndpointReadiness (at least one ready endpoint across a service's
// EndpointSlices), ExternalAddress (a load-balancer IP, or a hostname
// resolved in the background with its last answer cached) and IstioSync
// (istiod's /debug/syncz: listeners, routes, clusters and endpoints all
// synced, decided the way `istioctl proxy-status` does).
//
// Select applies a panic rule to a set of endpoints — Envoy's threshold,
// gdnsd's pool rule, Route 53's "all unhealthy means all", or fail closed —
// and Outlier is Envoy's passive health checking (outlier detection) as a
// pure value: Report feeds it real request outcomes and Tick runs the
// periodic analysis, both returning ejections and returns as values;
// Detector makes it safe for concurrent use and hands the events to an
// observer. An endpoint is healthy only when it passes both its active checks
// and the detector (Outlier.Healthy).
//
// Everything takes the current time as a parameter, so tests run in virtual
// time. See the package examples.
//
// # Configuration
//
// Every config (OutlierConfig, AddressConfig, Panic) starts from its
// Default… function or a named preset; change fields from there. A zero
// field takes its default unless its zero already means something (a
// consecutive-failure rule of 0 is off, a panic threshold of 0 disables
// panic mode, MaxStale 0 keeps no stale answer), and durations are plain
// time.Duration values, written "30s" in JSON. Every invalid value is
// reported as a *FieldError naming the field's path, its value and what is
// allowed; it wraps ErrInvalidConfig.
package health
