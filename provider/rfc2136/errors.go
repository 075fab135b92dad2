package rfc2136

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gslbkit/gslb/internal/errclass"
	"github.com/miekg/dns"
)

// ErrResponse is matched (errors.Is) by every *ResponseError.
var ErrResponse = errors.New("rfc2136: server answered with an error")

// ResponseError is a server's answer with a response code other than
// NOERROR. SERVFAIL is transient (the server may recover: a zone still
// loading, a busy journal); every other code (REFUSED, NOTAUTH, NOTZONE,
// FORMERR, NOTIMP, YXDOMAIN, …) is permanent: the request or its key is
// wrong and retrying will not help.
type ResponseError struct {
	// Op is what was asked: "update" or "transfer".
	Op string
	// Zone is the zone asked about.
	Zone string
	// Rcode is the DNS response code (dns.RcodeServerFailure, …).
	Rcode int
	// Extended carries the Extended DNS Errors (RFC 8914) the server
	// attached, "" when none.
	Extended string
}

// Error names the operation, the zone and the response code.
func (e *ResponseError) Error() string {
	s := fmt.Sprintf("rfc2136: %s of %s: server answered %s (%d)", e.Op, e.Zone, rcodeName(e.Rcode), e.Rcode)
	if e.Extended != "" {
		s += ": " + e.Extended
	}
	return s
}

// Unwrap returns ErrResponse.
func (e *ResponseError) Unwrap() error { return ErrResponse }

// Temporary reports whether the answer was SERVFAIL.
func (e *ResponseError) Temporary() bool { return e.Rcode == dns.RcodeServerFailure }

// Throttled is always false: DNS has no response code for "slow down".
func (e *ResponseError) Throttled() bool { return false }

func rcodeName(rc int) string {
	if s, ok := dns.RcodeToString[rc]; ok {
		return s
	}
	return "RCODE"
}

func responseError(op, zone string, m *dns.Msg) error {
	e := &ResponseError{Op: op, Zone: zone, Rcode: m.Rcode}
	if opt := m.IsEdns0(); opt != nil {
		var parts []string
		for _, o := range opt.Option {
			if ede, ok := o.(*dns.EDNS0_EDE); ok {
				parts = append(parts, strings.TrimSpace(dns.ExtendedErrorCodeToString[ede.InfoCode]+" "+ede.ExtraText))
			}
		}
		e.Extended = strings.Join(parts, "; ")
	}
	return e
}

// tsigErrors are miekg/dns's TSIG failures: a wrong key, secret,
// algorithm or clock. Retrying does not help.
var tsigErrors = []error{dns.ErrSig, dns.ErrAuth, dns.ErrTime, dns.ErrSecret, dns.ErrKeyAlg, dns.ErrNoSig, dns.ErrKey}

// classify wraps err (from talking to the server) so it answers
// Throttled() and Temporary(): TSIG failures are permanent, a cancelled
// context is permanent, a deadline, timeouts and network errors are
// transient (see provider.ErrorClass), a *ResponseError keeps its own verdict.
func classify(op, zone string, err error) error {
	if err == nil {
		return nil
	}
	var re *ResponseError
	if errors.As(err, &re) {
		return err
	}
	wrapped := fmt.Errorf("rfc2136: %s of %s: %w", op, zone, err)
	for _, t := range tsigErrors {
		if errors.Is(err, t) {
			return errclass.Mark(wrapped, errclass.Permanent)
		}
	}
	if errors.Is(err, context.Canceled) {
		return errclass.Mark(wrapped, errclass.Permanent)
	}
	return errclass.Mark(wrapped, errclass.Of(err))
}

// ErrNotConfigured is returned by the methods of a Provider not made by New
// (a zero Provider).
var ErrNotConfigured = errors.New("rfc2136: provider not configured (use New)")
