// Package memory is gslbkit's embedded DNS host and the reference libdns
// provider: an in-process store of any number of zones that implements
// libdns's RecordGetter, RecordAppender, RecordSetter, RecordDeleter and
// ZoneLister with libdns v1 semantics, and answers DNS queries for them
// authoritatively. Writers serialise and publish immutable snapshots, so
// readers (GetRecords, DNS answers) never wait and always see whole changes;
// that is what lets the embedded zone switch a name from an address set to a
// CNAME in one SetRecords call, which no external provider can do
// atomically. Like a real server it refuses a CNAME beside other data and a
// CNAME at the apex. Every change bumps the zone's SOA serial and the
// Provider's Version and is kept in a bounded journal (Changes, Wait).
//
// The Provider is a dns.Handler (ServeDNS, Respond, RespondWire); Server
// serves it on UDP and TCP, answering UDP through a batched
// recvmmsg/sendmmsg loop and a fast path that reuses packed replies until
// the zone or its answer hooks change (RespondUDP, and RespondTCP for the
// TCP loop; byte for byte the same as the general path, queries with EDNS
// Client Subnet included: a reply no answer hook chose is echoed the option
// at scope 0). AnswerFunc hooks, per name or per zone, choose the
// answer per query from the client's subnet (EDNS Client Subnet, else the
// source address), which is how failover's round-robin, weighted and geo
// strategies act. Hooked A, AAAA and TXT answers take the fast path too:
// it keeps every part of the reply but the choice, asks the hook and
// assembles the records it chose, so a hook that allocates nothing
// (failover.WeightedRandom, failover.Geo) answers with no allocation. Handler and Replica replicate zones over HTTP (snapshot,
// changes since a version, notify; requests and replies signed with
// HMAC-SHA256 keyed by a shared secret, which never travels), so a DNS
// node can serve a copy that keeps answering while its source is away.
//
// Answers follow RFC 1034 and RFC 4592 as Knot DNS does (a differential test
// against knotd is part of the tests): wildcards, delegations at NS records
// below the apex (referrals with glue), in-zone addresses for NS, MX and SRV
// targets, ANY as one RRset over UDP (RFC 8482), UDP replies capped at
// Config.MaxUDPSize (1232 bytes by default) with TC, and FORMERR, with an
// OPT when the query had one, for malformed queries.
//
// The Server never fragments a UDP reply, as RFC 9715 asks of responders
// (forged fragments are a known way to poison a resolver's cache): on
// Linux its socket sets path MTU discovery to "probe", so IPv4 replies
// carry DF, ICMP messages claiming a smaller path MTU (anyone can send
// them) change nothing, and a reply larger than the outgoing interface's
// MTU (only possible with MaxUDPSize set above it) goes out truncated, with
// its question and OPT record, for the client to retry over TCP
// (ServerStats.UDPTooBig counts them).
//
// TXT records keep their character-strings. libdns.TXT.Text is one text,
// stored as 255-byte strings (as the rfc2136 adapter writes it); to write
// several strings, pass a libdns.RR of type TXT whose Data is zone-file
// presentation form, e.g. libdns.RR{Name: "t", Type: "TXT", Data:
// `"first" "second"`} (quoted strings, \" \\ and \DDD escapes; Data that does
// not begin with a double quote is plain text). GetRecords returns such a
// record in the same form, so writing back what was read changes nothing.
//
// Standard secondaries (BIND, Knot, NSD, ...) can follow the zones too:
// Transfer (ServerConfig.Transfer) serves AXFR and IXFR over TCP to clients
// allowed by TSIG key and/or source prefix, IXFR from the journal (each
// entry keeps the RRset before and after the change), and sends NOTIFY on
// every serial change, with retries. Secondaries serve the stored records
// only: answer hooks do not travel.
//
// A Replica trusts only the zones it is configured with: a snapshot or
// change set that is empty, lacks one of them, brings another or the root is
// refused and the copy kept (RejectError). Bodies are read up to a limit
// and decoded record by record. Every Provider's history has an epoch
// (Provider.Epoch) that replication carries, so a replica never applies a
// restarted source's journal onto a copy of the old history: it takes a
// full snapshot instead. Given a directory, a Replica keeps its last good
// copy there (replaced atomically, with a format version and a checksum)
// and answers from it after a restart, degraded until a sync succeeds.
//
// # Configuration
//
// Every config type (Config, ZoneConfig, ServerConfig, RRLConfig,
// HandlerConfig, ReplicaConfig) has a DefaultX function; start from it and
// change fields. A field left at zero takes its default, except where zero
// means something, as each field's comment says (ServerConfig.UDPCoalesce 0
// turns the pause off, RRLConfig.Rate 0 turns limiting off, ZoneConfig.TTL
// and Minimum 0 are zero seconds). Required fields without a default (a
// replica's URL, Zones and secret) are the only ones a zero config lacks.
// Durations are time.Duration and read and write strings such as "10s" in
// JSON. Validate reports the first bad field as a *FieldError naming the
// field, the value and what is allowed, wrapping ErrInvalidConfig
// (ErrInvalidZone for a ZoneConfig).
//
// See Example and ExampleProvider_RespondWire.
package memory
