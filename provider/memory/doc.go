// Package memory is gslbkit's zone store and the reference libdns provider:
// an in-process store of any number of zones that implements libdns's
// RecordGetter, RecordAppender, RecordSetter, RecordDeleter and ZoneLister
// (libdns v1 semantics) and answers DNS queries for them authoritatively.
// Writers publish immutable snapshots, so readers never wait and see whole
// changes: one SetRecords call switches a name from addresses to a CNAME,
// and ReplaceRecords (record.Replacer) deletes and sets in one change.
// Every change bumps the zone's SOA serial (by one, or to the clock with
// ZoneConfig.SerialPolicy SerialUnixTime) and the Provider's Version and is
// journaled (Changes, Wait, Since); AnswerFunc hooks choose answers per
// client subnet and report the EDNS Client Subnet scope their choice holds
// for (RFC 7871 section 7.2.1). The answer path (ServeDNS, Respond,
// RespondWire) and the fast path (RespondUDP, RespondTCP) give
// byte-identical replies; both are provider/internal/answer's, whose packed-reply
// cache, keyed on the zones and hooks, sits next to the answers it copies,
// so the server (dnsserver) only moves bytes. Zone transfer and replication
// read the store through ZoneState, SOARecords, Since, Restore and Apply;
// SnapshotBuilder.ReadZoneFile loads a BIND or Knot zone file
// (docs/providers.md, "Zone files").
// ZoneConfig.Signer signs a zone online (provider/dnssec; docs/dnssec.md).
//
// Answers follow RFC 1034 and RFC 4592 as Knot DNS does (a differential test
// against knotd is part of the tests): wildcards, referrals with glue,
// in-zone addresses for NS, MX and SRV targets, ANY as one RRset over UDP
// (RFC 8482), UDP replies capped at Config.MaxUDPSize (1232 bytes) with TC.
// TXT records keep their character-strings: to write several, pass a
// libdns.RR of type TXT whose Data is presentation form (`"first"
// "second"`). A zero Config or ZoneConfig field takes its default except
// where zero means something (ZoneConfig.TTL and Minimum); Validate reports
// a *FieldError. The zero Provider is ready to use. See Example and
// ExampleProvider_RespondWire.
package memory
