// Package health turns several signals into one verdict per gateway or
// endpoint.
//
// A Gate combines the checks enabled for one gateway: every one must pass,
// any single failure makes the verdict unhealthy at once, and a check may
// need several consecutive passes to count again. The signals are fed by the
// caller (the library has no Kubernetes client): EndpointReadiness,
// ExternalAddress and IstioSync. Select applies a panic rule to a set of
// endpoints (Envoy's threshold, gdnsd's pool rule, Route 53's "all unhealthy
// means all", or fail closed); Outlier is Envoy's passive outlier detection
// as a pure value, and Detector makes it safe for concurrent use. An
// endpoint is healthy only when it passes both its active checks and the
// detector (Outlier.Healthy). Everything takes the current time as a
// parameter, so tests run in virtual time.
//
// Every config (OutlierConfig, AddressConfig, Panic) starts from its
// Default… function or a named preset; a zero field takes its default unless
// its zero means something; an invalid value is a *FieldError wrapping
// ErrInvalidConfig. docs/health.md of the module's repository has the
// signals and the configuration rules in full. See the package examples.
package health
