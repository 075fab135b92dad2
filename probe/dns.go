package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// DNSConfig configures a DNS prober: one query, an expected rcode and
// optionally expected answer data. The zero value is invalid (Name is
// required); start from DefaultDNSConfig.
type DNSConfig struct {
	// Name is the name queried, absolute or not (a final dot is added).
	Name string `json:"name"`
	// Type is the query type by mnemonic ("A", "AAAA", "SOA", …); empty means A.
	Type string `json:"type,omitempty"`
	// Rcode is the expected response code by mnemonic ("NOERROR",
	// "NXDOMAIN", …); empty means NOERROR.
	Rcode string `json:"rcode,omitempty"`
	// RetriableRcodes are rcodes that count toward the failure threshold
	// (Fail) instead of failing at once, e.g. "SERVFAIL" for a server whose
	// upstream may be briefly away. Empty: every unexpected rcode is FailNow.
	RetriableRcodes []string `json:"retriableRcodes,omitempty"`
	// Answers, when not empty, must each equal the data of some answer
	// record of the queried type: "192.0.2.1" for A, "target.example." for
	// CNAME, "10 mx.example." for MX (the record's text form after its
	// header; names compare case-insensitively, a missing final dot is added
	// for name-valued types). Otherwise any answer, or none, will do.
	Answers []string `json:"answers,omitempty"`
	// Network is "udp" (the default, also empty) or "tcp". A truncated UDP
	// answer is asked again over TCP.
	Network string `json:"network,omitempty"`
	// RecursionDesired sets the RD bit (for probing resolvers).
	RecursionDesired bool `json:"recursionDesired,omitempty"`
	// Port, when not 0, replaces the target's port (default 53); 1–65535.
	Port int `json:"port,omitempty"`
}

// DefaultDNSConfig returns an A query for name expecting NOERROR.
func DefaultDNSConfig(name string) DNSConfig {
	return DNSConfig{Name: name, Type: "A", Rcode: "NOERROR", Network: "udp"}
}

// ErrDNSConfig is wrapped by every DNSConfig validation error.
var ErrDNSConfig = errors.New("probe: dns config")

// Validate checks the fields; errors name the field, value and range.
func (c DNSConfig) Validate() error {
	if c.Name == "" {
		return fmt.Errorf("%w: name: required", ErrDNSConfig)
	}
	if _, ok := dns.IsDomainName(c.Name); !ok {
		return fmt.Errorf("%w: name %q: not a valid domain name", ErrDNSConfig, c.Name)
	}
	if _, err := dnsType(c.Type); err != nil {
		return err
	}
	if _, err := dnsRcode("rcode", c.Rcode); err != nil {
		return err
	}
	for i, r := range c.RetriableRcodes {
		if _, err := dnsRcode(fmt.Sprintf("retriableRcodes[%d]", i), r); err != nil {
			return err
		}
	}
	switch c.Network {
	case "", "udp", "tcp":
	default:
		return fmt.Errorf("%w: network %q: want \"udp\" or \"tcp\"", ErrDNSConfig, c.Network)
	}
	for i, a := range c.Answers {
		if strings.TrimSpace(a) == "" {
			return fmt.Errorf("%w: answers[%d]: empty", ErrDNSConfig, i)
		}
	}
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("%w: port %d: want 1–65535, or 0 for the target's port", ErrDNSConfig, c.Port)
	}
	return nil
}

func dnsType(s string) (uint16, error) {
	if s == "" {
		return dns.TypeA, nil
	}
	t, ok := dns.StringToType[strings.ToUpper(s)]
	if !ok || t == dns.TypeNone {
		return 0, fmt.Errorf("%w: type %q: not a known query type (A, AAAA, CNAME, MX, TXT, SOA, …)", ErrDNSConfig, s)
	}
	return t, nil
}

func dnsRcode(field, s string) (int, error) {
	if s == "" {
		return dns.RcodeSuccess, nil
	}
	r, ok := dns.StringToRcode[strings.ToUpper(s)]
	if !ok {
		return 0, fmt.Errorf("%w: %s %q: not a known rcode (NOERROR, NXDOMAIN, SERVFAIL, REFUSED, …)", ErrDNSConfig, field, s)
	}
	return r, nil
}

// DNS probes a DNS server with one query. Classification:
//
//   - no answer in time, or a network error → Fail;
//   - a reply that cannot be parsed, or does not belong to the query → Fail
//     (KindProtocol), as a malformed HTTP reply;
//   - the expected rcode, with every expected answer present → Pass;
//   - an rcode in RetriableRcodes → Fail (KindStatus);
//   - any other rcode → FailNow (KindStatus, Code the rcode): the server
//     answered, wrongly, like an HTTP status neither expected nor retriable;
//   - the expected rcode without the expected answer data → FailNow
//     (KindBody), like a body mismatch.
//
// Probe is safe for concurrent use; it runs on the caller's goroutine.
type DNS struct {
	cfg     DNSConfig
	addr    string
	qname   string
	qtype   uint16
	rcode   int
	retry   []int
	answers []string
	net     string
}

var _ Prober = (*DNS)(nil)

// NewDNS returns a DNS prober for the server at addr ("host:port", "host"
// or an IP; port 53 by default). cfg is validated and copied.
func NewDNS(addr string, cfg DNSConfig) (*DNS, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	host, port, err := probeSplitAddr(addr, "53", cfg.Port)
	if err != nil {
		return nil, err
	}
	d := &DNS{cfg: cfg, addr: net.JoinHostPort(host, port), qname: dns.Fqdn(cfg.Name), net: cfg.Network}
	d.cfg.RetriableRcodes = slices.Clone(cfg.RetriableRcodes)
	d.cfg.Answers = slices.Clone(cfg.Answers)
	if d.net == "" {
		d.net = "udp"
	}
	d.qtype, _ = dnsType(cfg.Type)
	d.rcode, _ = dnsRcode("rcode", cfg.Rcode)
	for _, r := range cfg.RetriableRcodes {
		c, _ := dnsRcode("", r)
		d.retry = append(d.retry, c)
	}
	for _, a := range cfg.Answers {
		d.answers = append(d.answers, dnsNormalize(d.qtype, a))
	}
	return d, nil
}

// Addr returns the host:port queried.
func (d *DNS) Addr() string { return d.addr }

// Probe sends the query and classifies the reply. ctx's deadline is the
// probe's timeout.
func (d *DNS) Probe(ctx context.Context) Result {
	start := time.Now()
	r := d.probe(ctx)
	if r.Status != Pass && ctx.Err() == context.Canceled {
		r.Status, r.Kind, r.Detail = Fail, KindOther, "canceled"
	}
	r.Latency = time.Since(start)
	return r
}

func (d *DNS) probe(ctx context.Context) Result {
	m := new(dns.Msg)
	m.SetQuestion(d.qname, d.qtype)
	m.RecursionDesired = d.cfg.RecursionDesired
	reply, err := d.exchange(ctx, m, d.net)
	if err == nil && reply.Truncated && d.net == "udp" {
		reply, err = d.exchange(ctx, m, "tcp")
	}
	if err != nil {
		kind := probeErrKind(err)
		if kind == KindOther {
			kind = KindProtocol // a reply that does not parse or match the query
		}
		return Result{Status: Fail, Kind: kind, Detail: "dns: " + err.Error()}
	}
	rc := reply.Rcode
	name := dns.RcodeToString[rc]
	if rc != d.rcode {
		if slices.Contains(d.retry, rc) {
			return Result{Status: Fail, Kind: KindStatus, Code: rc, Detail: "retriable rcode " + name}
		}
		return Result{Status: FailNow, Kind: KindStatus, Code: rc, Detail: "unexpected rcode " + name}
	}
	for _, want := range d.answers {
		if !d.hasAnswer(reply, want) {
			return Result{Status: FailNow, Kind: KindBody, Code: rc, Detail: "answer " + want + " missing"}
		}
	}
	return Result{Status: Pass, Code: rc, Detail: name}
}

func (d *DNS) exchange(ctx context.Context, m *dns.Msg, network string) (*dns.Msg, error) {
	c := &dns.Client{Net: network}
	if dl, ok := ctx.Deadline(); ok {
		c.Timeout = time.Until(dl)
		if c.Timeout <= 0 {
			return nil, context.DeadlineExceeded
		}
	}
	co, err := c.DialContext(ctx, d.addr)
	if err != nil {
		return nil, err
	}
	defer co.Close()
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { _ = co.SetDeadline(httpLongAgo) })
		defer stop()
	}
	reply, _, err := c.ExchangeWithConnContext(ctx, m, co)
	return reply, err
}

// hasAnswer reports whether an answer record of the queried type carries want.
func (d *DNS) hasAnswer(reply *dns.Msg, want string) bool {
	for _, rr := range reply.Answer {
		if rr.Header().Rrtype != d.qtype {
			continue
		}
		data := strings.TrimPrefix(rr.String(), rr.Header().String())
		if dnsNormalize(d.qtype, data) == want {
			return true
		}
	}
	return false
}

// dnsNormalize folds case for name-valued types (adding the final dot) and
// collapses white space, so config values and records compare as text.
func dnsNormalize(qtype uint16, s string) string {
	s = strings.Join(strings.Fields(s), " ")
	switch qtype {
	case dns.TypeCNAME, dns.TypeNS, dns.TypePTR, dns.TypeDNAME:
		return strings.ToLower(dns.Fqdn(s))
	case dns.TypeMX, dns.TypeSRV, dns.TypeSOA:
		return strings.ToLower(s)
	case dns.TypeAAAA:
		if ip := net.ParseIP(s); ip != nil {
			return ip.String()
		}
	}
	return s
}
