// Package zonedata is the data model of gslbkit's zone store: one immutable
// version of a zone (Zone: its SOA, its owner names' Nodes holding Rec
// records by type, the derived empty non-terminals, delegation points and
// wildcard flag) and the lookups RFC 1034 section 4.3.2 and RFC 4592 need
// on it (CutFor, WildcardFor, Referral, Additional, NegativeSOA, Closest
// over a Set of zones). provider/memory writes zones (it builds a new Zone
// sharing unchanged Nodes with the old one and publishes a new Set);
// internal/answer reads them to answer queries. Nothing here locks: a
// published Zone or Set is never modified.
package zonedata
