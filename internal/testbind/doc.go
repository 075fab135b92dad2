// Package testbind starts a real BIND 9 (named) for tests: one primary
// zone that accepts RFC 2136 updates and zone transfers signed with a
// freshly generated TSIG key, in a fresh temporary directory, on a free
// loopback port. Start waits until named answers the zone's SOA (polling
// with queries, never a fixed sleep) and stops it by PID when the test ends;
// Stop and Run in between make an outage, the zone kept across it.
//
// Where named is not installed the test is skipped with a message saying
// so, unless GSLBKIT_REQUIRE_BIND=1 (CI sets it), which turns the skip into
// a failure. Tests using it run outside testing/synctest bubbles: they talk
// to a real process over real sockets.
package testbind
