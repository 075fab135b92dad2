// Package testunbound runs a real unbound for tests: a caching resolver on
// a free loopback port with stub zones pointing at loopback authorities,
// optionally with its subnet cache (EDNS Client Subnet, RFC 7871) on, so a
// test sees what a resolver in front of an authority answers its clients.
// Start returns once unbound answers and stops it (by its PID) when the
// test ends. Where unbound is missing the test is skipped with a message,
// unless GSLBKIT_REQUIRE_UNBOUND=1 (CI sets it), which makes that a
// failure. With Config.TrustAnchorFile it validates DNSSEC: the validators
// of internal/testdnssec are built on it.
package testunbound
