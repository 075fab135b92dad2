// Package providertest is the test kit for libdns providers: Run is a
// conformance suite that checks a provider against the libdns v1 semantics
// gslbkit relies on (RRset replace by SetRecords, append, delete with
// wildcards, TXT quoting, CNAME rules, TTLs, and tolerance of the SOA, apex
// NS and glue a zone transfer returns), with Capabilities for the places
// where real DNS hosts legitimately differ; Faulty wraps any provider and
// injects throttling, transient and permanent errors, partial batches and
// latency from a seeded generator, so other packages' tests can prove they
// back off, retry and never fail over on a provider's bad day. Every
// provider in this module passes Run: provider/memory in-process,
// provider/rfc2136 against a real BIND, and provider/route53 and
// provider/cloudflare against local servers speaking those APIs. See the
// Faulty example for injected faults with a fixed seed.
package providertest
