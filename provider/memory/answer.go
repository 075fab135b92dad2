package memory

import (
	"net/netip"

	"github.com/libdns/libdns"
)

// AnswerFunc chooses the answer for one query. client is the EDNS Client Subnet prefix
// when present, else the query's source address as a /32 or /128; name is the queried
// owner name, lower case, fully qualified; qtype is "A", "AAAA", ...; rrs are the records
// the zone holds at that name and type. It returns the records to answer with (a subset
// or reordering); a nil or empty return means "no opinion": answer with rrs.
// It must be safe for concurrent use and must not retain or modify rrs.
type AnswerFunc func(client netip.Prefix, name, qtype string, rrs []libdns.Record) []libdns.Record

// hookTable is the immutable set of answer hooks.
type hookTable struct {
	byName map[string]AnswerFunc
}
