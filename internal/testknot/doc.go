// Package testknot starts a real Knot DNS (knotd) for tests: one zone, as a
// primary loaded from zone file text (if asked, one that clients holding a
// TSIG key may update by RFC 2136 and transfer, its changes kept across
// restarts), or as a secondary that follows a primary by NOTIFY and
// IXFR/AXFR, signing its requests with a TSIG key. It writes knotd's
// configuration to a fresh temporary directory, listens on a free loopback
// port, waits until knotd answers (polling with queries, never a fixed
// sleep) and stops it by PID when the test ends.
//
// Where knotd is not installed the test is skipped with a message saying
// so, unless GSLBKIT_REQUIRE_KNOT=1 (CI sets it), which turns the skip into
// a failure. Tests using it run outside testing/synctest bubbles: they talk
// to a real process over real sockets.
package testknot
