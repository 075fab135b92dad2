// Package route53 is the adapter for Amazon Route 53. Config selects the
// credentials (by default the AWS SDK's chain: AWS_* environment
// variables, shared config files, SSO, instance roles; FromEnv makes them
// visible to Validate) and the hosted zone; New returns a Provider
// implementing the libdns interfaces over the AWS SDK for Go v2, with
// every RRset of a SetRecords call in one atomic change batch, TXT text
// kept byte for byte, libdns v1's delete wildcards, and errors that answer
// Throttled() and Temporary() (Route 53's Throttling and
// PriorRequestNotComplete are throttled; 5xx and network errors
// transient; InvalidChangeBatch and access errors permanent) so callers
// back off instead of failing over. The SDK's own retries sleep in real
// time, so the default is one attempt and retrying is left to
// provider.Retry. Route 53 cannot be reached from the tests: they run
// provider/providertest's suite against a local server speaking Route 53's
// REST/XML API, through the SDK's endpoint override
// AWS_ENDPOINT_URL_ROUTE_53. See Example for configuration.
package route53
