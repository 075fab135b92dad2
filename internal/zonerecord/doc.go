// Package zonerecord turns libdns records into the records a zone stores
// and serves: it resolves owner names against a zone, checks TTLs and
// types, and parses record data into its canonical presentation (the libdns
// Data a zone reports) and its miekg/dns wire form, TXT character-strings
// included (see Canonical). provider/memory stores what it returns, and
// provider/zonetransfer rebuilds the records of a journal entry with it.
// Everything here is a pure function of its inputs; errors wrap the
// sentinels below, which provider/memory exports under the same names.
package zonerecord
