package probe

import (
	"context"
	"time"
)

// Status is a probe's verdict on one attempt.
type Status uint8

const (
	// Pass: the target answered as expected.
	Pass Status = iota + 1
	// Fail: the attempt failed in a way that counts toward the policy's
	// failure thresholds (timeout, connection refused or reset, unexpected
	// close, a retriable status), unless its Kind is KindLocal: a local
	// failure is not counted.
	Fail
	// FailNow: the target answered, but wrongly (a status neither expected
	// nor retriable, a body that does not match, a gRPC reply other than
	// SERVING). Policies that honour it move the target to critical at once.
	FailNow
)

// String returns "pass", "fail" or "fail-now".
func (s Status) String() string {
	switch s {
	case Pass:
		return "pass"
	case Fail:
		return "fail"
	case FailNow:
		return "fail-now"
	}
	return "unknown"
}

// Kind says why an attempt failed; statistics count failures by kind.
type Kind uint8

const (
	// KindNone is the kind of a passing result.
	KindNone Kind = iota
	// KindTimeout: the attempt did not finish within its timeout.
	KindTimeout
	// KindRefused: the connection was refused.
	KindRefused
	// KindReset: the connection was reset or closed before a full answer.
	KindReset
	// KindNetwork: any other network or dial error (no route, DNS lookup of the target).
	KindNetwork
	// KindTLS: the TLS handshake failed.
	KindTLS
	// KindStatus: an unexpected HTTP status, DNS rcode or gRPC serving status.
	KindStatus
	// KindBody: the response payload did not match the expected segments.
	KindBody
	// KindProtocol: the reply was malformed.
	KindProtocol
	// KindOther: anything else.
	KindOther
	// KindLocal: a local failure, which says nothing about the target: the
	// attempt failed because of this process or host before anything
	// reached the target (no descriptor, buffer, memory or ephemeral port
	// left; the host's own firewall; no route to the target in this host's
	// table; the scheduler so late the probe's deadline had passed before
	// it started). Its Status is Fail, but a Machine does not count it: no
	// transition, no back-off step, the state and counters unchanged, and
	// the Monitor probes the target again on its normal schedule. The
	// package doc lists the errors; KindOf classifies an error so.
	KindLocal
	numKinds
)

// NumKinds is the number of Kind values, for arrays indexed by Kind.
const NumKinds = int(numKinds)

var kindNames = [...]string{"none", "timeout", "refused", "reset", "network", "tls", "status", "body", "protocol", "other", "local"}

// String returns the kind's lower-case name ("timeout", "status", …).
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Result is the outcome of one probe attempt.
type Result struct {
	// Status is pass, fail or fail-now.
	Status Status
	// Kind says why a failed attempt failed; KindNone when it passed.
	Kind Kind
	// Latency is the time from the start of the attempt to its verdict.
	Latency time.Duration
	// Code is the protocol's answer code where there is one: the HTTP
	// status, the DNS rcode, the gRPC serving status; 0 otherwise.
	Code int
	// Detail is a short human-readable explanation for logs
	// ("status 503", "connect: connection refused", "body mismatch").
	Detail string
}

// Passed reports whether r is a pass.
func (r Result) Passed() bool { return r.Status == Pass }

// Prober asks one target one question.
//
// Probe must honour ctx (its deadline is the probe timeout), must not leak
// connections or goroutines past its return, and must never panic on any
// answer the target gives. Implementations are safe for concurrent use: a
// Monitor may call Probe again before an earlier call returns only when the
// target is updated. The zero value of each prober in this package is not
// usable; construct them from their config.
type Prober interface {
	Probe(ctx context.Context) Result
}

// ProberFunc adapts a function to the Prober interface; tests use it for
// in-memory probers.
type ProberFunc func(ctx context.Context) Result

// Probe calls f(ctx).
func (f ProberFunc) Probe(ctx context.Context) Result { return f(ctx) }
