package main

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/internal/fielderr"
	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/provider/replication"
	"github.com/gslbkit/gslb/record"
)

// Validate checks a controller configuration and resolves every record's
// probe; errors are *FieldError naming the field, the value and what is
// allowed.
func (c *Config) Validate() error {
	if err := record.DefaultConfig(c.OwnerID).Validate(); err != nil {
		return badErr("ownerId", c.OwnerID, "[1, 255] printable ASCII characters without spaces, quotes or backslashes", err)
	}
	switch c.Style {
	case StyleRecordService, StyleRelaxed:
	default:
		return bad("style", c.Style, `"recordService" or "relaxed"`)
	}
	if err := dnsname.Check(c.Zone); err != nil || c.Zone == "" || c.Zone == "." {
		return badErr("zone", c.Zone, "a DNS name such as gslb.example.com.", err)
	}
	c.Zone = dnsname.Fqdn(strings.ToLower(c.Zone))
	if err := c.validateListeners(); err != nil {
		return err
	}
	if err := c.validateAPIAccess(); err != nil {
		return err
	}
	if err := c.validateDNSSEC(false); err != nil {
		return err
	}
	if c.Replication.Header == "" {
		return bad("replication.header", "", "an HTTP header name (leave it out for "+replication.DefaultSecretHeader+")")
	}
	if c.Replication.Secret != "" {
		if strings.TrimSpace(c.Replication.Secret) != c.Replication.Secret {
			return bad("replication.secret", "(hidden)", "no leading or trailing whitespace (HTTP strips it, so it could never match)")
		}
		if err := c.Replication.auth().Validate(); err != nil {
			return badErr("replication.secret", "(hidden)", "[16, 1024] bytes", err)
		}
	}
	for i, u := range c.Replication.Notify {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return bad(fmt.Sprintf("replication.notify[%d]", i), u, "an http:// or https:// URL")
		}
		if c.Replication.Secret == "" {
			return bad("replication.secret", "", "a secret of [16, 1024] bytes when replication.notify is set")
		}
	}
	if err := c.Provider.validate(); err != nil {
		return err
	}
	if err := c.Policy.Validate(); err != nil {
		return badErr("policy", nil, "a valid failover record policy", err)
	}
	if err := c.Monitor.Validate(); err != nil {
		return badErr("monitor", nil, "a valid monitor config", err)
	}
	if c.Monitor.Shard.Count > 1 {
		// Every controller publishes whole records, so each must know the
		// state of every address: gslbd does not shard.
		return bad("monitor.shard.count", c.Monitor.Shard.Count, "0 or 1 (gslbd probes every address itself)")
	}
	pol, err := failover.NewRecordPolicy(c.Policy)
	if err != nil {
		return badErr("policy", nil, "a valid failover record policy", err)
	}
	if len(c.Records) == 0 {
		return bad("records", "[]", "at least one record")
	}
	seen := map[string]bool{}
	for i := range c.Records {
		if err := c.validateRecord(i, pol, seen); err != nil {
			return err
		}
	}
	if err := c.validateFailovers(); err != nil {
		return err
	}
	return c.validateAnswers(c.Provider.Type)
}

func (c *Config) validateListeners() error {
	if c.DNS.Addr != "" {
		if _, err := netip.ParseAddrPort(c.DNS.Addr); err != nil {
			return badErr("dns.addr", c.DNS.Addr, "IP:port such as 127.0.0.1:53, or empty for no DNS server", err)
		}
	}
	if d := c.DNS.TCPIdleTimeout.D(); d < 100*time.Millisecond || d > 10*time.Minute {
		return bad("dns.tcpIdleTimeout", d, fielderr.DurationRange(100*time.Millisecond, 10*time.Minute))
	}
	if n := c.DNS.MaxTCPConns; n < 0 || n > 1_000_000 {
		return bad("dns.maxTCPConns", n, fielderr.Range(0, 1_000_000)+" (0: derived from the descriptor limit)")
	}
	if n := c.DNS.MaxTCPConnsPerSource; n < 0 || n > 1_000_000 {
		return bad("dns.maxTCPConnsPerSource", n, fielderr.Range(0, 1_000_000)+" (0: no limit)")
	}
	if err := c.DNS.RRL.Validate(); err != nil {
		return badErr("dns.rrl", nil, "a valid rrl block", err)
	}
	if _, _, err := net.SplitHostPort(c.HTTP.Addr); err != nil {
		return badErr("http.addr", c.HTTP.Addr, "host:port", err)
	}
	if n := c.HTTP.MaxConns; n < 0 || n > 100_000 {
		return bad("http.maxConns", n, fielderr.Range(0, 100_000)+" (0: derived from the descriptor limit)")
	}
	if err := c.Transfer.Validate(); err != nil {
		return badErr("transfer", nil, "a valid transfer block", err)
	}
	if c.Transfer.Enabled() && c.DNS.Addr == "" {
		return bad("dns.addr", "", "host:port when transfer is on (secondaries transfer on the DNS port)")
	}
	return nil
}

func (p ProviderConfig) validate() error {
	one := func(set bool, name string) error {
		if !set {
			return bad("provider."+name, "missing", "a "+name+" block when provider.type is "+name)
		}
		return nil
	}
	var err error
	switch p.Type {
	case "embedded":
		if p.RFC2136 != nil || p.Route53 != nil || p.Cloudflare != nil {
			return bad("provider.type", p.Type, "the type whose block is given (rfc2136, route53, cloudflare)")
		}
		return nil
	case "rfc2136":
		if err = one(p.RFC2136 != nil, "rfc2136"); err == nil {
			if e := p.RFC2136.FromEnv(nil).Validate(); e != nil {
				err = badErr("provider.rfc2136", nil, "a valid RFC 2136 server and key", e)
			}
		}
	case "route53":
		if err = one(p.Route53 != nil, "route53"); err == nil {
			if e := p.Route53.FromEnv(nil).Validate(); e != nil {
				err = badErr("provider.route53", nil, "a valid Route 53 config", e)
			}
		}
	case "cloudflare":
		if err = one(p.Cloudflare != nil, "cloudflare"); err == nil {
			if e := p.Cloudflare.FromEnv(nil).Validate(); e != nil {
				err = badErr("provider.cloudflare", nil, "a valid Cloudflare config", e)
			}
		}
	default:
		return bad("provider.type", p.Type, `"embedded", "rfc2136", "route53" or "cloudflare"`)
	}
	if err != nil {
		return err
	}
	if d := p.ResyncInterval.D(); d != 0 && (d < time.Second || d > 24*time.Hour) {
		return bad("provider.resyncInterval", d, "[1s, 24h], or 0 for the provider's preset")
	}
	return nil
}

func (c *Config) validateRecord(i int, pol *failover.RecordPolicy, seen map[string]bool) error {
	r := &c.Records[i]
	f := fmt.Sprintf("records[%d]", i)
	if err := dnsname.Check(r.Name); err != nil || r.Name == "" {
		return badErr(f+".name", r.Name, "a DNS name inside "+c.Zone, err)
	}
	r.Name = dnsname.Fqdn(strings.ToLower(r.Name))
	if !dnsname.InZone(r.Name, c.Zone) || r.Name == c.Zone {
		return bad(f+".name", r.Name, "a name below the zone "+c.Zone)
	}
	if first, _, _ := strings.Cut(r.Name, "."); first == record.DefaultMarkerPrefix {
		return bad(f+".name", r.Name, "a name whose first label is not "+record.DefaultMarkerPrefix+" (owner markers live there: the reconciler writes them and would refuse the whole zone's answers)")
	}
	if parent := relocatedParent(*c); dnsname.InZone(r.Name, parent) {
		return bad(f+".name", r.Name, "a name not below "+parent+" (gslbd moves a pool taken over at a provider there: see README, Invariants)")
	}
	if p := relocatedPool(*c, r.Name); dnsname.Check(p) != nil {
		return bad(f+".name", r.Name, "a name whose relocated pool "+p+" is a valid name (at most 253 bytes, labels of at most 63)")
	}
	if seen[r.Name] {
		return bad(f+".name", r.Name, "each name once")
	}
	seen[r.Name] = true
	if d := r.TTL.D(); d < time.Second || d > 24*time.Hour || d%time.Second != 0 {
		return bad(f+".ttl", d, "whole seconds in [1s, 24h] (leave it out for 30s)")
	}
	if r.Failover != "" {
		if err := dnsname.Check(r.Failover); err != nil {
			return badErr(f+".failover", r.Failover, "a DNS name", err)
		}
		r.Failover = dnsname.Fqdn(strings.ToLower(r.Failover))
		if parent := relocatedParent(*c); dnsname.InZone(r.Failover, parent) {
			return bad(f+".failover", r.Failover, "a name not below "+parent+" (gslbd's relocated pools live there)")
		}
	}
	spec := c.Probe.clone()
	if len(r.Probe) > 0 {
		if err := spec.UnmarshalJSON(r.Probe); err != nil {
			return badErr(f+".probe", string(r.Probe), "a probe block (type, policy, http, tcp, grpc)", err)
		}
	}
	r.check = spec.resolved()
	if err := r.check.Validate(); err != nil {
		return checkErr(f+".probe", r.check.Type, "a valid check", err)
	}
	if c.Style != StyleRelaxed {
		if err := r.check.Policy.ValidateRecordService(); err != nil {
			return checkErr(f+".probe", r.check.Type, "interval in [10s, 5m] and timeout in [100ms, 3s] (style recordService)", err)
		}
	}
	if err := checkAddresses(f, r); err != nil {
		return err
	}
	for j, a := range r.Addresses {
		af := fmt.Sprintf("%s.addresses[%d]", f, j)
		ip, _ := netip.ParseAddr(a.IP)
		ip = ip.Unmap()
		if _, err := r.check.NewProber(probeAddr(a, ip)); err != nil {
			return badErr(af+".probeAddr", probeAddr(a, ip), "an address the check can probe (host:port, or a check port)", err)
		}
	}
	for _, m := range []failover.Record{r.model(c.Zone, nil), withDisabled(r.model(c.Zone, nil))} {
		fd, err := pol.Embedded(m)
		if err != nil {
			return badErr(f, r.Name, "a record the failover policy accepts", err)
		}
		if err := merge(record.Desired{}, fd).Validate(); err != nil {
			return badErr(f, r.Name, "a record the reconciler accepts", err)
		}
	}
	return nil
}

func withDisabled(m failover.Record) failover.Record {
	m.Disabled = true
	return m
}

// validateFailovers refuses failover names that cannot answer: the apex
// (which holds only SOA and NS, so the CNAME would answer nothing), a name
// inside the zone that is no record (NXDOMAIN behind the CNAME), and a
// chain of records failing over to each other that comes back to where it
// started (a CNAME loop once they are all disabled or down). (With an
// external provider the zone may hold names gslbd does not manage, so a
// failover name inside it need not be a record.) A record may
// fail over to another record of the zone: disabled or with nothing healthy
// it answers a CNAME to it, and the other record answers as it answers.
func (c *Config) validateFailovers() error {
	idx := map[string]int{}
	for i, r := range c.Records {
		idx[r.Name] = i
	}
	for i, r := range c.Records {
		f := fmt.Sprintf("records[%d].failover", i)
		if r.Failover == "" || !dnsname.InZone(r.Failover, c.Zone) {
			continue
		}
		if r.Failover == c.Zone {
			return bad(f, r.Failover, "a name other than the zone's apex (the apex holds only SOA and NS: the CNAME would answer nothing)")
		}
		if _, ok := idx[r.Failover]; !ok && (c.Provider.Type == "embedded" || c.Provider.Type == "") {
			return bad(f, r.Failover, "a name outside the zone "+c.Zone+", or one of its records (gslbd answers nothing else in it)")
		}
		chain := []string{r.Name}
		for n := r.Failover; n != ""; {
			chain = append(chain, n)
			if n == r.Name {
				return bad(f, r.Failover, "a chain of failover names without a loop (this one goes "+strings.Join(chain, " → ")+")")
			}
			j, ok := idx[n]
			if !ok || len(chain) > len(c.Records)+1 {
				break
			}
			n = c.Records[j].Failover
		}
	}
	return nil
}

// checkAddresses checks a record's addresses (f is the record's path):
// at least one, each a distinct IP, weights 0–65535, regions 1–63
// characters.
func checkAddresses(f string, r *RecordSpec) error {
	if len(r.Addresses) == 0 {
		return bad(f+".addresses", "[]", "at least one address")
	}
	ips := map[netip.Addr]bool{}
	for j, a := range r.Addresses {
		af := fmt.Sprintf("%s.addresses[%d]", f, j)
		ip, err := netip.ParseAddr(a.IP)
		if err != nil || ip.Zone() != "" {
			return badErr(af+".ip", a.IP, "an IPv4 or IPv6 address", err)
		}
		ip = ip.Unmap()
		if ips[ip] {
			return bad(af+".ip", a.IP, "each address once per record")
		}
		ips[ip] = true
		if a.Weight < 0 || a.Weight > 65535 {
			return bad(af+".weight", a.Weight, fielderr.Range(0, 65535))
		}
		for k, reg := range a.Regions {
			if reg == "" || len(reg) > 63 {
				return bad(fmt.Sprintf("%s.regions[%d]", af, k), reg, "[1, 63] characters")
			}
		}
	}
	return nil
}

// checkErr names the policy field when err is a policy's *probe.FieldError,
// else the probe block.
func checkErr(field string, value any, allowed string, err error) error {
	var pe *probe.FieldError
	if errors.As(err, &pe) && errors.Is(err, probe.ErrInvalidPolicy) {
		return fielderr.In(field+".policy", fielderr.Both(ErrInvalidConfig, err), &FieldError{Path: strings.TrimPrefix(pe.Path, "policy."), Value: pe.Value, Allowed: pe.Allowed})
	}
	return badErr(field, value, allowed, err)
}

// probeAddr is the address a target's prober dials.
func probeAddr(a AddressSpec, ip netip.Addr) string {
	if a.ProbeAddr != "" {
		return a.ProbeAddr
	}
	return ip.String()
}

// model returns the failover policy's view of the record, with health from
// h (by IP; absent means unknown).
func (r *RecordSpec) model(zone string, h map[netip.Addr]failover.Health) failover.Record {
	m := failover.Record{Name: r.Name, Zone: zone, TTL: r.TTL.D(), FailoverFQDN: r.Failover, Disabled: r.Disabled}
	for _, a := range r.Addresses {
		ip, _ := netip.ParseAddr(a.IP)
		ip = ip.Unmap()
		m.Endpoints = append(m.Endpoints, failover.Endpoint{IP: ip, Regions: a.Regions, Health: h[ip], Weight: a.Weight})
	}
	return m
}

// ValidateNode checks a node-mode configuration: the controller's URL and
// the shared secret, the sync settings, the DNS listener, and the records
// with a per-query answer kind with the geo block (a node registers their
// answers itself; see installAnswersWith).
func (c *Config) ValidateNode() error {
	if c.Node.Auth.Secret == "" {
		c.Node.Auth = c.Replication.auth()
	}
	if c.Node.URL == "" {
		return bad("node.url", "", "the controller's replication URL, e.g. http://controller:8053/replication")
	}
	if c.Node.Auth.Secret == "" {
		return bad("replication.secret", "", "the shared secret ([16, 1024] bytes) in node mode")
	}
	if strings.TrimSpace(c.Node.Auth.Secret) != c.Node.Auth.Secret {
		return bad("replication.secret", "(hidden)", "no leading or trailing whitespace (HTTP strips it, so it could never match)")
	}
	if len(c.Node.Zones) == 0 && c.Zone != "" {
		c.Node.Zones = []string{c.Zone} // a node follows the zone it serves
	}
	if len(c.Node.Zones) == 0 {
		return bad("node.zones", "", "the zones the node follows (default: [zone])")
	}
	if err := c.Node.Validate(); err != nil {
		return badErr("node", c.Node.URL, "a valid replica config", err)
	}
	if c.DNS.Addr == "" {
		return bad("dns.addr", "", "host:port in node mode (a node serves DNS)")
	}
	if err := c.validateListeners(); err != nil {
		return err
	}
	if err := c.validateDNSSEC(true); err != nil {
		return err
	}
	return c.validateNodeAnswers()
}

// validateAPIAccess checks the API's access settings: a token without
// surrounding whitespace, reads protected only with a token, and no
// token-less API on a listener that is not loopback.
func (c *Config) validateAPIAccess() error {
	h := c.HTTP
	if strings.TrimSpace(h.APIToken) != h.APIToken {
		return bad("http.apiToken", "(hidden)", "no leading or trailing whitespace (HTTP strips it, so it could never match)")
	}
	if h.APIToken != "" && len(h.APIToken) < 16 {
		return bad("http.apiToken", "(hidden, "+strconv.Itoa(len(h.APIToken))+" bytes)", "at least 16 bytes (a short token can be guessed; try: openssl rand -hex 16)")
	}
	for i, n := range h.AllowedHosts {
		if err := dnsname.Check(n); err != nil || n == "" || strings.ContainsAny(n, ":/") {
			return badErr(fmt.Sprintf("http.allowedHosts[%d]", i), n, "a host name without port, such as gslb.example.net", err)
		}
	}
	if h.ProtectReads && h.APIToken == "" {
		return bad("http.protectReads", true, "false, or true with http.apiToken set")
	}
	if h.APIToken == "" && !h.DisableAPI && !loopbackAddr(h.Addr) {
		return bad("http.apiToken", "", "a token when http.addr ("+h.Addr+") is not a loopback address, or http.disableAPI: true")
	}
	return nil
}

// loopbackAddr reports whether host:port names only loopback interfaces.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
