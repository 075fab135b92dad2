// Package testdnssec runs real DNSSEC tools for tests: BIND's
// dnssec-keygen and dnssec-signzone make keys and pre-signed zones, named
// serves them (a signed parent whose DS records a test changes, so a
// child's KSK roll can be followed without restarting anything), unbound
// validates with a trust anchor from a file and stub zones pointing at
// loopback authorities, and delv validates on its own behind a second,
// non-validating unbound (delv sends no CD bit), so the two validators do
// not lean on each other.
//
// Validator.Query reports the rcode, the AD bit and, on failure, unbound's
// reason (its extended DNS error text and its val-log-level 2 log line);
// Validator.Delv reports delv's verdict ("fully validated", "negative
// response, fully validated", …). Validator.Flush drops a zone from
// unbound's cache, standing in for a TTL running out without waiting for it.
// Transfer and CheckZone fetch a zone by AXFR and check it with kzonecheck
// and ldns-verify-zone.
//
// Where a tool is missing the test is skipped with a message naming the
// Debian package, unless GSLBKIT_REQUIRE_DNSSEC_TOOLS=1 (CI sets it), which
// turns the skip into a failure. Tests using it run outside testing/synctest
// bubbles: they talk to real processes over real sockets.
package testdnssec
