// Package zonetransfer lets standard secondaries (BIND, Knot, NSD, ...)
// follow the zones of a memory.Provider: Transfer serves AXFR (RFC 5936)
// and IXFR (RFC 1995, from the store's journal, falling back to AXFR when
// it does not reach back) over TCP to clients allowed by TSIG key (RFC
// 8945) and/or source prefix, answers TSIG-signed queries signed, and sends
// NOTIFY (RFC 1996) on every serial change, with retries. Secondaries serve
// the stored records only: answer hooks do not travel, and a transfer of a
// hooked zone is logged once per set of hooks. An AXFR streams from the
// zone version it started on, whatever is written meanwhile, with no copy
// of the zone: the SOA, the apex's records, every other name's in
// canonical order (sorted when the apex is out; RFC 5936 section 2.2 asks
// for no order, but a secondary builds its copy from sorted names at half
// the cost; each RRset whole), the SOA. Its
// messages hold up to 20 KB of packed records each (more than BIND's
// transfer-message-size, which counts them uncompressed), owner names
// compressed against the previous record's and the zone's name.
//
// A Transfer plugs into dnsserver.Server (dnsserver.Server.SetTransfer),
// which then streams transfers on its TCP loop and runs the NOTIFY sender;
// a program with DNS loops of its own calls ServeTCP and
// RespondUDP/RespondWire. A Transfer runs once (ErrRunning); the zero
// Transfer is not usable (ErrNoProvider). A zero TransferConfig is valid
// and off; NotifyTimeout and NotifyRetries left at zero take their
// defaults. Validate reports a *FieldError ("zonetransfer: invalid config:
// ...").
//
// See ExampleTransfer.
package zonetransfer
