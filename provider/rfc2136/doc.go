// Package rfc2136 is the adapter for DNS servers that take RFC 2136
// dynamic updates — BIND, Knot, PowerDNS — signed with a TSIG key. Config
// names the server and the key (or takes them from GSLB_RFC2136_SERVER,
// GSLB_RFC2136_KEY_NAME, GSLB_RFC2136_KEY_ALG and GSLB_RFC2136_SECRET
// through FromEnv) and Validate says what is wrong with it; New returns a
// Provider implementing the libdns interfaces: it reads the zone by AXFR
// and changes it by UPDATE, atomically per call, speaking the same
// messages as github.com/libdns/rfc2136 but through miekg/dns directly, so
// every error it returns answers Throttled() and Temporary() (SERVFAIL,
// timeouts and network errors are transient; REFUSED, NOTAUTH and TSIG
// failures permanent) and TXT text comes back byte for byte. It passes
// provider/providertest's suite and libdns's libdnstest against real BIND
// 9.18, Knot 3.2 and PowerDNS 4.7 (provider/conformance). The servers
// differ: BIND and Knot silently ignore a CNAME beside other data or at
// the apex, PowerDNS refuses it (REFUSED, a permanent error); PowerDNS
// ignores the deletion of one SVCB or HTTPS record of a set, so
// DeleteRecords replaces such a set by what stays. docs/providers.md has
// the matrix and every quirk.
//
// TXT records keep their character-strings: a libdns.TXT is one text,
// written as 255-byte strings and read back whole; a TXT with several
// strings is a libdns.RR whose Data is zone-file presentation form
// (`"first" "second"`, beginning with a double quote), written so and read
// back so (GetRecords returns it as a libdns.RR, in canonical form: each
// string quoted, one space between). See Example for configuration.
package rfc2136
