// Package dnsserver is gslbkit's authoritative DNS server: it serves any
// Answerer (a *memory.Provider) over UDP and TCP. UDP is answered by batched
// recvmmsg/sendmmsg loops on Linux (a portable loop elsewhere) that pause
// briefly under heavy load when that saves CPU, with optional response rate
// limiting (RateLimiter, RRLConfig, Knot's rules); TCP by a loop of its own
// with a bounded connection table, idle eviction and pipelining. The server
// only moves bytes: answers, and the packed-reply cache, are the store's.
// An optional TransferHandler (zonetransfer.Transfer) takes zone transfers
// and TSIG-signed queries.
//
// The Server never fragments a UDP reply, as RFC 9715 asks of responders
// (forged fragments are a known way to poison a resolver's cache): on
// Linux its socket sets path MTU discovery to "probe", so IPv4 replies carry
// DF, forged ICMP "packet too big" messages change nothing, and a reply
// larger than the interface's MTU goes out truncated, with its question and
// OPT record, for the client to retry over TCP (ServerStats.UDPTooBig).
//
// Lifecycle: NewServer starts nothing, Listen binds, Run serves until its
// context ends or Close is called; a Server runs once (ErrRunning), and
// Close releases sockets that Listen bound and Run never served. A zero
// ServerConfig is valid (127.0.0.1:5353); a zero field takes its default
// except UDPCoalesce, MaxTCPConnsPerSource and RRL.Rate, where 0 means off.
// Validate reports a *FieldError ("dnsserver: invalid config: ...").
//
// See Example.
package dnsserver
