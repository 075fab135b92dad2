package dnsprobe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gslbkit/gslb/internal/hostport"
	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/probe/internal/probecall"
	"github.com/miekg/dns"
)

// Config configures a DNS prober: one query, an expected rcode and
// optionally expected answer data. The zero value is invalid (Name is
// required); start from DefaultConfig.
type Config struct {
	// Name is the name queried, absolute or not (a final dot is added).
	Name string `json:"name"`
	// Type is the query type by mnemonic ("A", "AAAA", "SOA", …); empty means A.
	Type string `json:"type,omitempty"`
	// Rcode is the expected response code by mnemonic ("NOERROR",
	// "NXDOMAIN", …); empty means NOERROR.
	Rcode string `json:"rcode,omitempty"`
	// RetriableRcodes are rcodes that count toward the failure threshold
	// (probe.Fail) instead of failing at once, e.g. "SERVFAIL" for a server whose
	// upstream may be briefly away. Empty: every unexpected rcode is probe.FailNow.
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

// DefaultConfig returns an A query for name expecting NOERROR.
func DefaultConfig(name string) Config {
	return Config{Name: name, Type: "A", Rcode: "NOERROR", Network: "udp"}
}

// ErrInvalidConfig is wrapped by every Config validation error.
var ErrInvalidConfig = errors.New("dnsprobe: invalid config")

// ErrConfig is ErrInvalidConfig, by its former name: errors.Is matches
// either.
//
// Deprecated: use ErrInvalidConfig.
var ErrConfig = ErrInvalidConfig

// Validate checks the fields; an error is a *probe.FieldError naming the
// field, the value and what is allowed, wrapping ErrInvalidConfig.
func (c Config) Validate() error {
	if c.Name == "" {
		return bad("name", "", "a domain name (required)")
	}
	if _, ok := dns.IsDomainName(c.Name); !ok {
		return bad("name", c.Name, "a valid domain name")
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
		return bad("network", c.Network, `one of "udp", "tcp"`)
	}
	for i, a := range c.Answers {
		if strings.TrimSpace(a) == "" {
			return bad(fmt.Sprintf("answers[%d]", i), a, "a record's data, not empty")
		}
	}
	if c.Port < 0 || c.Port > 65535 {
		return &probe.FieldError{Path: "port", Value: strconv.Itoa(c.Port), Allowed: "[1, 65535], or 0 for the target's port", Err: ErrInvalidConfig}
	}
	return nil
}

// bad is a *probe.FieldError for a string field.
func bad(field, value, allowed string) error {
	return &probe.FieldError{Path: field, Value: strconv.Quote(value), Allowed: allowed, Err: ErrInvalidConfig}
}

func dnsType(s string) (uint16, error) {
	if s == "" {
		return dns.TypeA, nil
	}
	t, ok := dns.StringToType[strings.ToUpper(s)]
	if !ok || t == dns.TypeNone {
		return 0, bad("type", s, "a query type (A, AAAA, CNAME, MX, TXT, SOA, …)")
	}
	return t, nil
}

func dnsRcode(field, s string) (int, error) {
	if s == "" {
		return dns.RcodeSuccess, nil
	}
	r, ok := dns.StringToRcode[strings.ToUpper(s)]
	if !ok {
		return 0, bad(field, s, "an rcode (NOERROR, NXDOMAIN, SERVFAIL, REFUSED, …)")
	}
	return r, nil
}

// Prober probes a DNS server with one query. Classification:
//
//   - no answer in time, or a network error → probe.Fail;
//   - a reply that cannot be parsed, or does not belong to the query → probe.Fail
//     (probe.KindProtocol), as a malformed HTTP reply;
//   - the expected rcode, with every expected answer present → probe.Pass;
//   - an rcode in RetriableRcodes → probe.Fail (probe.KindStatus);
//   - any other rcode → probe.FailNow (probe.KindStatus, Code the rcode): the server
//     answered, wrongly, like an HTTP status neither expected nor retriable;
//   - the expected rcode without the expected answer data → probe.FailNow
//     (probe.KindBody), like a body mismatch.
//
// Probe is safe for concurrent use; it runs on the caller's goroutine.
type Prober struct {
	cfg     Config
	addr    string
	qname   string
	qtype   uint16
	rcode   int
	retry   []int
	answers []string
	net     string
}

var _ probe.Prober = (*Prober)(nil)

// New returns a DNS prober for the server at addr ("host:port", "host"
// or an IP; port 53 by default). cfg is validated and copied.
func New(addr string, cfg Config) (*Prober, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	host, port, err := hostport.Split(addr, "53", cfg.Port)
	if err != nil {
		return nil, err
	}
	d := &Prober{cfg: cfg, addr: net.JoinHostPort(host, port), qname: dns.Fqdn(cfg.Name), net: cfg.Network}
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
func (d *Prober) Addr() string { return d.addr }

// Probe sends the query and classifies the reply. ctx's deadline is the
// probe's timeout. A zero Prober (not made by New) fails every probe.
func (d *Prober) Probe(ctx context.Context) probe.Result {
	if d.addr == "" {
		return probe.Result{Status: probe.Fail, Kind: probe.KindOther, Detail: "dnsprobe: prober not configured (use New)"}
	}
	return probecall.Timed(ctx, d.probe)
}

func (d *Prober) probe(ctx context.Context) probe.Result {
	m := new(dns.Msg)
	m.SetQuestion(d.qname, d.qtype)
	m.RecursionDesired = d.cfg.RecursionDesired
	reply, err := d.exchange(ctx, m, d.net)
	if err == nil && reply.Truncated && d.net == "udp" {
		reply, err = d.exchange(ctx, m, "tcp")
	}
	if err != nil {
		kind := probe.KindOf(err)
		if kind == probe.KindOther {
			kind = probe.KindProtocol // a reply that does not parse or match the query
		}
		return probe.Result{Status: probe.Fail, Kind: kind, Detail: "dns: " + err.Error()}
	}
	rc := reply.Rcode
	name := dns.RcodeToString[rc]
	if rc != d.rcode {
		if slices.Contains(d.retry, rc) {
			return probe.Result{Status: probe.Fail, Kind: probe.KindStatus, Code: rc, Detail: "retriable rcode " + name}
		}
		return probe.Result{Status: probe.FailNow, Kind: probe.KindStatus, Code: rc, Detail: "unexpected rcode " + name}
	}
	for _, want := range d.answers {
		if !d.hasAnswer(reply, want) {
			return probe.Result{Status: probe.FailNow, Kind: probe.KindBody, Code: rc, Detail: "answer " + want + " missing"}
		}
	}
	return probe.Result{Status: probe.Pass, Code: rc, Detail: name}
}

func (d *Prober) exchange(ctx context.Context, m *dns.Msg, network string) (*dns.Msg, error) {
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
		stop := context.AfterFunc(ctx, func() { _ = co.SetDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	reply, _, err := c.ExchangeWithConnContext(ctx, m, co)
	return reply, err
}

// hasAnswer reports whether an answer record of the queried type carries want.
func (d *Prober) hasAnswer(reply *dns.Msg, want string) bool {
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
