// Package memory is gslbkit's embedded DNS host and the reference libdns
// provider: an in-process store of any number of zones that implements
// libdns's RecordGetter, RecordAppender, RecordSetter, RecordDeleter and
// ZoneLister with libdns v1 semantics, and answers DNS queries for them
// authoritatively. Writers serialise and publish immutable snapshots, so
// readers (GetRecords, DNS answers) never wait and always see whole changes;
// that is what lets the embedded zone switch a name from an address set to a
// CNAME in one SetRecords call, which no external provider can do atomically.
// Like a real server it refuses a CNAME beside other data and a CNAME at the
// apex. Every change bumps the zone's SOA serial and the Provider's Version
// and is kept in a bounded journal (Changes, Wait), which zone replication
// builds on. See Example for a zone being filled and read back.
package memory
