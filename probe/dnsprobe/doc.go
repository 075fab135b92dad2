// Package dnsprobe is the DNS prober: it implements probe.Prober with one
// query through github.com/miekg/dns and classifies the reply (expected
// rcode and answers pass, a retriable rcode counts toward the threshold,
// any other rcode or a missing answer fails at once).
//
// It lives apart from package probe so that a program probing only HTTP
// and TCP does not link a DNS library. Build a prober with New from a
// Config (start from DefaultConfig(name): Name is the one field without a
// default; Type, Rcode and Network default to A, NOERROR and udp when
// empty) and hand it to a probe.Monitor like any other. Invalid values are
// *probe.FieldErrors wrapping ErrInvalidConfig. See the New example.
package dnsprobe
