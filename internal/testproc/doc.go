// Package testproc holds what the tests that run real servers (named,
// knotd, unbound, moto_server) as child processes share: finding the
// binary, with one rule where it is missing (Missing: a skip, or a failure
// where the GSLBKIT_REQUIRE_* variable CI sets is "1"), a port free for UDP
// and TCP alike, a buffer the child's output goroutines can write to, and
// a child process that is stopped politely, then killed.
package testproc
