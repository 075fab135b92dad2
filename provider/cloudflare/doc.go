// Package cloudflare is the adapter for Cloudflare DNS. Config holds a
// scoped API token (or takes it from CLOUDFLARE_API_TOKEN through
// FromEnv) and optionally the zone's ID; New returns a Provider
// implementing the libdns interfaces over Cloudflare's API v4, every write
// one atomic /dns_records/batch request, TXT text kept byte for byte, and
// errors that answer Throttled() and Temporary() (HTTP 429 and code 971
// throttled, with the server's Retry-After for provider.Retry; 5xx and
// network errors transient; the rest permanent) so callers back off
// instead of failing over. Cloudflare flattens a CNAME at the apex and
// refuses one beside other data. Cloudflare cannot be reached from the
// tests: they run provider/providertest's suite against a local server
// speaking its JSON API, reached through Config.HTTPClient. See Example.
package cloudflare
