package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/provider/cloudflare"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/rfc2136"
	"github.com/gslbkit/gslb/provider/route53"
	"github.com/gslbkit/gslb/record"
)

// Duration reads and writes Go duration strings ("30s") in the config.
type Duration = probe.Duration

// ErrConfig is wrapped by every error about a configuration.
var ErrConfig = errors.New("gslbd: config")

// ConfigError names a bad configuration field, its value and what is allowed.
type ConfigError struct {
	// Field is the field's path, e.g. "records[1].addresses[0].ip".
	Field string
	// Value is the offending value, formatted.
	Value string
	// Allowed says what the field may hold.
	Allowed string
	// Err is an underlying library error, if any.
	Err error
}

// Error formats the field, the value and the allowed range.
func (e *ConfigError) Error() string {
	s := fmt.Sprintf("gslbd: config: %s: %s: allowed %s", e.Field, e.Value, e.Allowed)
	if e.Err != nil {
		s += " (" + e.Err.Error() + ")"
	}
	return s
}

// Unwrap returns ErrConfig and the library error, if any.
func (e *ConfigError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrConfig, e.Err}
	}
	return []error{ErrConfig}
}

func bad(field string, value any, allowed string) error {
	return &ConfigError{Field: field, Value: fmt.Sprintf("%q", fmt.Sprint(value)), Allowed: allowed}
}

func badErr(field string, value any, allowed string, err error) error {
	return &ConfigError{Field: field, Value: fmt.Sprintf("%q", fmt.Sprint(value)), Allowed: allowed, Err: err}
}

// Style says which ranges the probe settings must respect.
type Style string

const (
	// StyleRecordService (the default, also "") enforces the record
	// service's ranges: interval 10–300 s, timeout 0.1–3.0 s.
	StyleRecordService Style = "recordService"
	// StyleRelaxed accepts any policy the probe package accepts (interval
	// from 1 ms, any timeout up to the interval). It exists for tests and
	// demos that need failover in seconds; gslbd logs a warning when it is
	// used.
	StyleRelaxed Style = "relaxed"
)

// Config is gslbd's whole configuration, read from YAML (the library's JSON
// field names). Start from DefaultConfig; LoadConfig decodes onto it.
type Config struct {
	// OwnerID is written in the owner markers of every name gslbd publishes
	// (see record.Config). Default "gslbd".
	OwnerID string `json:"ownerId"`
	// Zone is the zone holding every record, e.g. "gslb.example.com.".
	// Required in controller mode.
	Zone string `json:"zone"`
	// Style selects the probe ranges: "recordService" (default) or
	// "relaxed" (tests and demos only).
	Style Style `json:"style"`
	// DNS is the embedded authoritative server.
	DNS DNSConfig `json:"dns"`
	// HTTP is the API, metrics and replication listener.
	HTTP HTTPConfig `json:"http"`
	// Replication authenticates DNS nodes and lists the nodes to notify.
	Replication ReplicationConfig `json:"replication"`
	// Provider selects where records are published besides the embedded
	// zone: "embedded" (default: the embedded zone only), "rfc2136",
	// "route53" or "cloudflare".
	Provider ProviderConfig `json:"provider"`
	// Policy is the failover record policy (strategy, what to do when no
	// address is healthy). Default failover.DefaultRecordConfig (keep the
	// last set; "allUnhealthy: failClosed" is the record service's own rule).
	Policy failover.RecordConfig `json:"policy"`
	// Monitor tunes the prober pool (concurrency, sharding, jitter seed).
	Monitor probe.MonitorConfig `json:"monitor"`
	// Probe is the default health check of every address; a record's own
	// probe block is decoded onto it. Default: HTTP GET / expecting 200 with
	// the record service's policy.
	Probe ProbeSpec `json:"probe"`
	// Records are the names gslbd answers for.
	Records []RecordSpec `json:"records"`
	// Node configures node mode (-node): the controller to follow.
	Node NodeConfig `json:"node"`
}

// DNSConfig configures the embedded authoritative DNS server.
type DNSConfig struct {
	// Addr is the UDP and TCP host:port to serve on; "" serves no DNS
	// (controller mode with a provider). Port 0 picks a free port.
	// Default "127.0.0.1:5353".
	Addr string `json:"addr"`
	// TCPIdleTimeout closes idle TCP connections, 100ms–10m. Default 10s.
	TCPIdleTimeout Duration `json:"tcpIdleTimeout"`
}

// HTTPConfig configures the HTTP listener.
type HTTPConfig struct {
	// Addr is the host:port of the API, /metrics and /replication.
	// Default "127.0.0.1:8053". Port 0 picks a free port.
	Addr string `json:"addr"`
	// APIToken, when set, must be sent as "Authorization: Bearer <token>"
	// on every API call that changes something (compared in constant time).
	APIToken string `json:"apiToken,omitempty"`
}

// ReplicationConfig configures the replication endpoints of a controller
// and the secret a node presents.
type ReplicationConfig struct {
	// Secret is the shared secret (16–1024 bytes) nodes send in Header.
	// Empty disables /replication on a controller.
	Secret string `json:"secret,omitempty"`
	// Header carries the secret. Default memory.DefaultSecretHeader.
	Header string `json:"header,omitempty"`
	// Notify lists the base URLs of nodes' replication endpoints
	// ("http://node-1:8054/replication"); each is sent a notify whenever
	// the zone changes, so nodes sync at once instead of on their interval.
	Notify []string `json:"notify,omitempty"`
}

func (r ReplicationConfig) auth() memory.HandlerConfig {
	h := memory.DefaultHandlerConfig()
	h.Secret = r.Secret
	if r.Header != "" {
		h.Header = r.Header
	}
	return h
}

// ProviderConfig selects and configures the external DNS host.
type ProviderConfig struct {
	// Type is "embedded" (also ""), "rfc2136", "route53" or "cloudflare".
	Type string `json:"type"`
	// RFC2136, Route53 and Cloudflare configure the provider named by Type
	// (the packages' own JSON; credentials may come from the environment).
	RFC2136    *rfc2136.Config    `json:"rfc2136,omitempty"`
	Route53    *route53.Config    `json:"route53,omitempty"`
	Cloudflare *cloudflare.Config `json:"cloudflare,omitempty"`
	// ResyncInterval is how often the zone is re-read to repair drift,
	// 1s–24h. Default: the provider's preset (10s for rfc2136, 60s else).
	ResyncInterval Duration `json:"resyncInterval,omitempty"`
}

// UnmarshalJSON decodes a provider block; each provider's own block is
// decoded onto that provider's DefaultConfig. Unknown fields are errors.
func (p *ProviderConfig) UnmarshalJSON(data []byte) error {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return fmt.Errorf("provider: %w", err)
	}
	type plain ProviderConfig
	out := plain(*p)
	if _, ok := keys["rfc2136"]; ok {
		d := rfc2136.DefaultConfig()
		out.RFC2136 = &d
	}
	if _, ok := keys["route53"]; ok {
		d := route53.DefaultConfig()
		out.Route53 = &d
	}
	if _, ok := keys["cloudflare"]; ok {
		d := cloudflare.DefaultConfig()
		out.Cloudflare = &d
	}
	if err := decodeStrict(data, &out); err != nil {
		return fmt.Errorf("provider: %w", err)
	}
	*p = ProviderConfig(out)
	return nil
}

// NodeConfig configures node mode. Secret and header come from
// replication unless set in auth.
type NodeConfig = memory.ReplicaConfig

// RecordSpec is one name gslbd answers for.
type RecordSpec struct {
	// Name is the fully qualified name inside Zone (not its apex).
	Name string `json:"name"`
	// TTL of the answers, whole seconds from 1s to 24h. Default 30s.
	TTL Duration `json:"ttl"`
	// Failover is the failover FQDN answered (as a CNAME) while no address
	// is healthy or the record is disabled. Optional.
	Failover string `json:"failover,omitempty"`
	// Disabled starts the record disabled (see the API's enable).
	Disabled bool `json:"disabled,omitempty"`
	// Probe overrides parts of the default probe for this record's
	// addresses (same shape as Config.Probe).
	Probe json.RawMessage `json:"probe,omitempty"`
	// Addresses are the record's addresses. At least one; each IP once.
	Addresses []AddressSpec `json:"addresses"`

	check probe.Check // resolved by Validate
}

// AddressSpec is one address of a record.
type AddressSpec struct {
	// IP is the address published (IPv4 or IPv6).
	IP string `json:"ip"`
	// Regions are its region tags (region-filtered snapshots, priority).
	Regions []string `json:"regions,omitempty"`
	// Weight for the weighted strategy, 0–65535.
	Weight int `json:"weight,omitempty"`
	// ProbeAddr, when set, is the host:port probed instead of IP (the
	// check's port applies to IP otherwise).
	ProbeAddr string `json:"probeAddr,omitempty"`
}

// ProbeSpec is a health check in the probe package's vocabulary:
//
//	type: HTTP | TCP | GRPC
//	policy: {interval, timeout, warningThreshold, criticalThreshold, passingThreshold, ...}
//	http:   {path, method, hostname, expectedStatuses, port, ...}   (probe.HTTPConfig)
//	tcp:    {send, receive, port}                                   (probe.TCPConfig)
//	grpc:   {service, authority, port}                              (probe.GRPCConfig)
//
// Decoding is onto the current value: fields present replace, absent ones
// stay, so a record's probe block overrides only what it names.
type ProbeSpec struct {
	probe.Check
}

// DefaultProbe returns an HTTP GET / expecting 200 under the record
// service's policy.
func DefaultProbe() ProbeSpec {
	h := probe.DefaultHTTPConfig()
	return ProbeSpec{probe.Check{Type: probe.CheckHTTP, Policy: probe.RecordService(), HTTP: &h}}
}

// UnmarshalJSON decodes a probe block onto s; unknown fields are errors.
func (s *ProbeSpec) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	out := s.clone()
	for k, v := range raw {
		switch k {
		case "type":
			var t string
			if err := json.Unmarshal(v, &t); err != nil {
				return fmt.Errorf("probe.type: %w", err)
			}
			out.Type = probe.CheckType(strings.ToUpper(t))
		case "policy":
			if err := out.Policy.UnmarshalJSON(v); err != nil {
				return fmt.Errorf("probe.policy: %w", err)
			}
		case "http":
			h := probe.DefaultHTTPConfig()
			if out.HTTP != nil {
				h = *out.HTTP
			}
			if err := decodeStrict(v, &h); err != nil {
				return fmt.Errorf("probe.http: %w", err)
			}
			out.HTTP = &h
		case "tcp":
			t := probe.DefaultTCPConfig()
			if out.TCP != nil {
				t = *out.TCP
			}
			if err := decodeStrict(v, &t); err != nil {
				return fmt.Errorf("probe.tcp: %w", err)
			}
			out.TCP = &t
		case "grpc":
			g := probe.DefaultGRPCConfig()
			if out.GRPC != nil {
				g = *out.GRPC
			}
			if err := decodeStrict(v, &g); err != nil {
				return fmt.Errorf("probe.grpc: %w", err)
			}
			out.GRPC = &g
		default:
			return fmt.Errorf("probe: unknown field %q (allowed type, policy, http, tcp, grpc)", k)
		}
	}
	*s = out
	return nil
}

// MarshalJSON writes the check.
func (s ProbeSpec) MarshalJSON() ([]byte, error) { return json.Marshal(s.Check) }

// clone copies s deeply enough that decoding onto the copy leaves s alone.
func (s ProbeSpec) clone() ProbeSpec {
	c := s
	if s.HTTP != nil {
		h := *s.HTTP
		c.HTTP = &h
	}
	if s.TCP != nil {
		t := *s.TCP
		c.TCP = &t
	}
	if s.GRPC != nil {
		g := *s.GRPC
		c.GRPC = &g
	}
	return c
}

// resolved returns the check with only its type's block kept (a block for
// another type, inherited from the default, is dropped).
func (s ProbeSpec) resolved() probe.Check {
	c := s.clone().Check
	switch c.Type {
	case probe.CheckHTTP:
		c.TCP, c.GRPC = nil, nil
		if c.HTTP == nil {
			h := probe.DefaultHTTPConfig()
			c.HTTP = &h
		}
	case probe.CheckTCP:
		c.HTTP, c.GRPC = nil, nil
	case probe.CheckGRPC:
		c.HTTP, c.TCP = nil, nil
	}
	return c
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data")
	}
	return nil
}

// DefaultConfig returns gslbd's defaults: owner "gslbd", record-service
// style, DNS on 127.0.0.1:5353, HTTP on 127.0.0.1:8053, the embedded zone
// only, keep-last record policy, the default monitor and probe, and the
// default replica settings for node mode.
func DefaultConfig() Config {
	return Config{
		OwnerID:  "gslbd",
		Style:    StyleRecordService,
		DNS:      DNSConfig{Addr: "127.0.0.1:5353", TCPIdleTimeout: Duration(10 * time.Second)},
		HTTP:     HTTPConfig{Addr: "127.0.0.1:8053"},
		Provider: ProviderConfig{Type: "embedded"},
		Policy:   failover.DefaultRecordConfig(),
		Monitor:  probe.DefaultMonitorConfig(),
		Probe:    DefaultProbe(),
		Node:     memory.DefaultReplicaConfig(),
	}
}

// ParseConfig decodes YAML (or JSON) onto DefaultConfig. Unknown fields are
// errors. It does not validate; call Validate or ValidateNode.
func ParseConfig(data []byte) (Config, error) {
	if len(data) > 4<<20 {
		return Config{}, bad("config", fmt.Sprintf("%d bytes", len(data)), "at most 4 MiB")
	}
	cfg := DefaultConfig()
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		return Config{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return cfg, nil
}

// Validate checks a controller configuration and resolves every record's
// probe; errors are *ConfigError naming the field, the value and the range.
func (c *Config) Validate() error {
	if err := record.DefaultConfig(c.OwnerID).Validate(); err != nil {
		return badErr("ownerId", c.OwnerID, "1–255 printable ASCII characters without spaces, quotes or backslashes", err)
	}
	switch c.Style {
	case "", StyleRecordService, StyleRelaxed:
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
	if c.Replication.Secret != "" {
		if err := c.Replication.auth().Validate(); err != nil {
			return badErr("replication.secret", "(hidden)", "16–1024 bytes", err)
		}
	}
	for i, u := range c.Replication.Notify {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return bad(fmt.Sprintf("replication.notify[%d]", i), u, "an http:// or https:// URL")
		}
		if c.Replication.Secret == "" {
			return bad("replication.secret", "", "a secret of 16–1024 bytes when replication.notify is set")
		}
	}
	if err := c.Provider.validate(); err != nil {
		return err
	}
	if err := c.Policy.Validate(); err != nil {
		return badErr("policy", "", "a valid failover record policy", err)
	}
	if err := c.Monitor.Validate(); err != nil {
		return badErr("monitor", "", "a valid monitor config", err)
	}
	if c.Monitor.Shard.Count > 1 {
		// Every controller publishes whole records, so each must know the
		// state of every address: gslbd does not shard.
		return bad("monitor.shard.count", c.Monitor.Shard.Count, "0 or 1 (gslbd probes every address itself)")
	}
	pol, err := failover.NewRecordPolicy(c.Policy)
	if err != nil {
		return badErr("policy", "", "a valid failover record policy", err)
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
	return nil
}

func (c *Config) validateListeners() error {
	if c.DNS.Addr != "" {
		if _, _, err := net.SplitHostPort(c.DNS.Addr); err != nil {
			return badErr("dns.addr", c.DNS.Addr, "host:port, or empty for no DNS server", err)
		}
	}
	if d := c.DNS.TCPIdleTimeout.D(); d < 100*time.Millisecond || d > 10*time.Minute {
		return bad("dns.tcpIdleTimeout", d, "100ms–10m")
	}
	if _, _, err := net.SplitHostPort(c.HTTP.Addr); err != nil {
		return badErr("http.addr", c.HTTP.Addr, "host:port", err)
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
	case "", "embedded":
		if p.RFC2136 != nil || p.Route53 != nil || p.Cloudflare != nil {
			return bad("provider.type", p.Type, "the type whose block is given (rfc2136, route53, cloudflare)")
		}
		return nil
	case "rfc2136":
		if err = one(p.RFC2136 != nil, "rfc2136"); err == nil {
			if e := p.RFC2136.FromEnv(nil).Validate(); e != nil {
				err = badErr("provider.rfc2136", "", "a valid RFC 2136 server and key", e)
			}
		}
	case "route53":
		if err = one(p.Route53 != nil, "route53"); err == nil {
			if e := p.Route53.FromEnv(nil).Validate(); e != nil {
				err = badErr("provider.route53", "", "a valid Route 53 config", e)
			}
		}
	case "cloudflare":
		if err = one(p.Cloudflare != nil, "cloudflare"); err == nil {
			if e := p.Cloudflare.FromEnv(nil).Validate(); e != nil {
				err = badErr("provider.cloudflare", "", "a valid Cloudflare config", e)
			}
		}
	default:
		return bad("provider.type", p.Type, `"embedded", "rfc2136", "route53" or "cloudflare"`)
	}
	if err != nil {
		return err
	}
	if d := p.ResyncInterval.D(); d != 0 && (d < time.Second || d > 24*time.Hour) {
		return bad("provider.resyncInterval", d, "1s–24h, or 0 for the provider's preset")
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
	if seen[r.Name] {
		return bad(f+".name", r.Name, "each name once")
	}
	seen[r.Name] = true
	if r.TTL == 0 {
		r.TTL = Duration(30 * time.Second)
	}
	if d := r.TTL.D(); d < time.Second || d > 24*time.Hour || d%time.Second != 0 {
		return bad(f+".ttl", d, "whole seconds from 1s to 24h")
	}
	if r.Failover != "" {
		if err := dnsname.Check(r.Failover); err != nil {
			return badErr(f+".failover", r.Failover, "a DNS name", err)
		}
		r.Failover = dnsname.Fqdn(strings.ToLower(r.Failover))
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
			return checkErr(f+".probe", r.check.Type, "interval 10s–300s and timeout 100ms–3s (style recordService)", err)
		}
	}
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
			return bad(af+".weight", a.Weight, "0–65535")
		}
		for k, reg := range a.Regions {
			if reg == "" || len(reg) > 63 {
				return bad(fmt.Sprintf("%s.regions[%d]", af, k), reg, "1–63 characters")
			}
		}
		if _, err := r.check.NewProber(probeAddr(a, ip)); err != nil {
			return badErr(af+".probeAddr", probeAddr(a, ip), "an address the check can probe (host:port, or a check port)", err)
		}
	}
	if _, err := pol.Embedded(r.model(c.Zone, nil)); err != nil {
		return badErr(f, r.Name, "a record the failover policy accepts", err)
	}
	return nil
}

// checkErr names the policy field when err is a *probe.PolicyError, else
// the probe block.
func checkErr(field string, value any, allowed string, err error) error {
	var pe *probe.PolicyError
	if errors.As(err, &pe) {
		return &ConfigError{Field: field + ".policy." + pe.Field, Value: pe.Value, Allowed: pe.Allowed}
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
// the shared secret, the sync settings and the DNS listener.
func (c *Config) ValidateNode() error {
	if c.Node.Auth.Secret == "" {
		c.Node.Auth = c.Replication.auth()
	}
	if c.Node.URL == "" {
		return bad("node.url", "", "the controller's replication URL, e.g. http://controller:8053/replication")
	}
	if c.Node.Auth.Secret == "" {
		return bad("replication.secret", "", "the shared secret (16–1024 bytes) in node mode")
	}
	if err := c.Node.Validate(); err != nil {
		return badErr("node", c.Node.URL, "a valid replica config", err)
	}
	if c.DNS.Addr == "" {
		return bad("dns.addr", "", "host:port in node mode (a node serves DNS)")
	}
	return c.validateListeners()
}
