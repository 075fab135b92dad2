// Package provider is where gslbkit talks to DNS hosts. Everything speaks
// libdns (github.com/libdns/libdns v1): the adapters in provider/route53,
// provider/cloudflare and provider/rfc2136 wrap the libdns modules for those
// hosts and classify their errors (throttled, transient, permanent) so
// callers can back off instead of failing over; provider/memory is the
// in-process zone that needs no account anywhere; provider/providertest
// holds the conformance suite every one of them passes and a
// fault-injecting wrapper for tests.
//
// This package holds what any libdns provider can be put in: Wrap builds a
// chain of Interceptors around a provider. RateLimit makes calls wait for a
// token (golang.org/x/time/rate), Retry tries throttled and transient
// failures again after a jittered exponential back-off, and Meter counts
// calls, records, errors and latency per method (Stats); NewChain builds the
// usual meter-retry-limit chain from a ChainConfig. All waiting is done
// on timers that honour the context, so the chain runs in virtual time
// inside testing/synctest bubbles. A Wrapped provider implements all five
// libdns interfaces and returns an *UnsupportedError for those the provider
// inside lacks. Mounts routes calls by zone to the providers the zones
// live in, renaming records where a zone is kept as a subtree of another.
// See Example for a chain around a tiny provider, ExampleMounts for a
// region's private zone kept inside a shared one.
//
// Every adapter passes providertest and libdns's libdnstest against real
// servers (BIND, Knot, PowerDNS) or an emulator (moto for Route 53) in one
// matrix, the separate module provider/conformance; docs/providers.md
// lists the results, each server's quirks and how the adapters handle
// them.
package provider
