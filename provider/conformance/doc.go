// Package conformance runs one conformance matrix over gslbkit's DNS
// providers: gslbkit's own suite (provider/providertest) and libdns's
// (libdnstest, shipped only by libdns v1.2.0-alpha.1) against the
// in-memory zone, RFC 2136 on BIND 9, Knot DNS and PowerDNS, and the
// Route 53 adapter against the moto emulator, each server started on a
// free loopback port.
//
// It is a module of its own so that the library's go.mod stays on the
// released libdns v1.1.1: run it with
//
//	(cd provider/conformance && go test -race ./...)
//
// A missing server skips its row, or fails it when the matching
// GSLBKIT_REQUIRE_* variable is 1 (BIND, KNOT, PDNS, MOTO), as .ci/run
// sets them. The matrix, each server's quirks and how the adapters handle
// them are in the provider package's documentation.
package conformance
