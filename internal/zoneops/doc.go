// Package zoneops holds the record arithmetic the provider adapters share:
// zone-name normalisation, libdns v1's DeleteRecords matching (empty type,
// TTL or value as wildcards) and the per-RRset difference SetRecords must
// apply. Everything here is a pure function of its inputs.
package zoneops
