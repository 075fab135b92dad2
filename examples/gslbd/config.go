package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/internal/fielderr"
	"github.com/gslbkit/gslb/internal/jsontime"
	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/probe/probecheck"
	"github.com/gslbkit/gslb/provider/cloudflare"
	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/gslbkit/gslb/provider/replication"
	"github.com/gslbkit/gslb/provider/rfc2136"
	"github.com/gslbkit/gslb/provider/route53"
	"github.com/gslbkit/gslb/provider/zonetransfer"
)

// Duration reads and writes Go duration strings ("30s") in the config.
type Duration = jsontime.Duration

// ErrInvalidConfig is wrapped by every error about a configuration; its
// text, "gslbd: invalid config", begins every such message.
var ErrInvalidConfig = errors.New("gslbd: invalid config")

// FieldError is a bad configuration value, in the module's one shape
// (the library packages' FieldError is the same type): the field's path,
// the value as written and what is allowed, e.g.
// `gslbd: invalid config: records[1].probe.policy.interval = -1s: allowed [1ms, 24h]`.
// It wraps ErrInvalidConfig, and the library's error when a library config
// refused the value.
type FieldError = fielderr.Error

// bad reports field holding value, formatted as written (strings quoted,
// durations short), and what is allowed.
func bad(field string, value any, allowed string) error {
	return &FieldError{Path: field, Value: asWritten(value), Allowed: allowed, Err: ErrInvalidConfig}
}

// badErr reports field refused by a library with err. When err is a
// library config's own *FieldError, a whole block (value nil) is re-rooted
// under field (one prefix, the whole path), and a single field keeps its
// path and value with the library's allowed text; any other error is cited
// after allowed. Either way err stays matchable
// with errors.Is, as does ErrInvalidConfig.
func badErr(field string, value any, allowed string, err error) error {
	if fe := (*fielderr.Error)(nil); errors.As(err, &fe) {
		if value == nil {
			return fielderr.In(field, fielderr.Both(ErrInvalidConfig, err), err)
		}
		return &FieldError{Path: field, Value: asWritten(value), Allowed: fe.Allowed, Err: fielderr.Both(ErrInvalidConfig, err)}
	}
	return &FieldError{Path: field, Value: asWritten(value), Allowed: allowed + " (" + err.Error() + ")", Err: fielderr.Both(ErrInvalidConfig, err)}
}

// asWritten formats a value as fielderr does, quoting named string types
// (Style) too; nil, for a whole block, is no value.
func asWritten(v any) string {
	if v == nil {
		return ""
	}
	if _, ok := v.(fmt.Stringer); !ok {
		if r := reflect.ValueOf(v); r.Kind() == reflect.String {
			return strconv.Quote(r.String())
		}
	}
	return fielderr.Value(v)
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
	// Geo places clients in regions for the records whose answer is "geo"
	// or "regionFilter": client prefixes (EDNS Client Subnet, else the
	// query's source address) mapped to regions, the longest match
	// winning; each region's preferences, nearest first; and the default
	// region of clients no prefix matches. Regions are the addresses'
	// region tags. Required with those kinds, refused without them.
	Geo *failover.GeoMap `json:"geo,omitempty"`
	// Node configures node mode (-node): the controller to follow.
	Node NodeConfig `json:"node"`
	// StateDir is the directory where the controller keeps its state file
	// (operator intent, each address's last state, the last published zone
	// and its serial), so that a restart changes no answer by accident; it
	// is created (mode 0700) if missing. Left out, it is DefaultStateDir:
	// a state file is kept unless turned off. Written as "" it is off:
	// nothing is kept, a restart forgets drains and disables and starts
	// every address from its first probe (gslbd logs a warning).
	StateDir string `json:"stateDir,omitempty"`
	// Transfer lets standard secondaries (BIND, Knot, ...) follow the zone
	// by AXFR and IXFR on the DNS port: allow (by TSIG key and/or source
	// prefix), notify (the secondaries sent NOTIFY on every change), keys.
	// Off by default. See zonetransfer.TransferConfig.
	Transfer zonetransfer.TransferConfig `json:"transfer"`
	// DNSSEC, when set, signs the zone online with the keys it names (or
	// one gslbd keeps in stateDir): see DNSSECConfig. Transfers of the
	// signed zone are refused unless transfer.signedUnsigned is set.
	DNSSEC *DNSSECConfig `json:"dnssec,omitempty"`
}

// DNSConfig configures the embedded authoritative DNS server.
type DNSConfig struct {
	// Addr is the UDP and TCP IP:port to serve on; "" serves no DNS
	// (controller mode with a provider). Port 0 picks a free port.
	// Default "127.0.0.1:5353".
	Addr string `json:"addr"`
	// TCPIdleTimeout closes idle TCP connections, 100ms–10m. Default 10s.
	TCPIdleTimeout Duration `json:"tcpIdleTimeout"`
	// MaxTCPConns bounds the TCP connections held at once, 0–1,000,000;
	// a new connection at a full table replaces the one idle longest. 0
	// (the default) derives it from the descriptor limit (a quarter, 16 to
	// 1,024), leaving the rest to probes, HTTP and the provider. See
	// dnsserver.ServerConfig.
	MaxTCPConns int `json:"maxTCPConns,omitempty"`
	// MaxTCPConnsPerSource bounds the TCP connections of one client
	// address, 0–1,000,000; 0 (the default) sets no such bound.
	MaxTCPConnsPerSource int `json:"maxTCPConnsPerSource,omitempty"`
	// RRL is response rate limiting of UDP answers (dnsserver.RRLConfig:
	// rate, slip, tableSize, ipv4Prefix, ipv6Prefix, exempt), against
	// reflection: one spoofed source cannot make gslbd send more than
	// Rate answers a second per netblock, name and kind of answer; beyond
	// that every Slip-th answer is sent truncated (TC, no records), which
	// a real resolver retries over TCP (never limited), and the others
	// are dropped. On by default at DefaultRRLRate (200) and
	// DefaultRRLSlip (2), Knot's example figures; rate 0 turns it off.
	// Loopback clients are exempt by default (127.0.0.0/8, ::1: a kernel
	// drops packets from the network that claim those sources), so local
	// monitoring is never limited; setting exempt replaces that list.
	RRL dnsserver.RRLConfig `json:"rrl"`
}

// DefaultRRLRate and DefaultRRLSlip are gslbd's RRL defaults: 200 answers
// a second per bucket (a /24 or /56 client netblock, a name and a kind of
// answer), every second limited answer sent truncated.
const (
	DefaultRRLRate = 200
	DefaultRRLSlip = 2
)

// defaultRRL is the library's RRL table with gslbd's rate and slip.
func defaultRRL() dnsserver.RRLConfig {
	r := dnsserver.DefaultRRLConfig()
	r.Rate, r.Slip = DefaultRRLRate, DefaultRRLSlip
	r.Exempt = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	return r
}

// HTTPConfig configures the HTTP listener.
type HTTPConfig struct {
	// Addr is the host:port of the API, /metrics and /replication.
	// Default "127.0.0.1:8053". Port 0 picks a free port.
	Addr string `json:"addr"`
	// APIToken, when set, must be sent as "Authorization: Bearer <token>"
	// on every API call that changes something (compared in constant time).
	APIToken string `json:"apiToken,omitempty"`
	// Without APIToken the API is closed by default: requests that change
	// something are accepted only on a loopback listener, with
	// "Content-Type: application/json" (which a browser cannot send to
	// another site without a preflight gslbd never answers) and a Host
	// naming the listener; and a listener that is not loopback refuses to
	// start unless DisableAPI is set. DisableAPI turns the state-changing
	// API off (records, status, metrics and replication stay).
	DisableAPI bool `json:"disableAPI,omitempty"`
	// ProtectReads puts the reads (status page, /api/*, /metrics) behind
	// APIToken too; it needs APIToken. /healthz, /readyz and /replication
	// (shared secret) stay open.
	ProtectReads bool `json:"protectReads,omitempty"`
	// MaxConns bounds the HTTP connections held at once, 0–100,000. 0 (the
	// default) derives it from the descriptor limit (a quarter, 16 to
	// 1,024), as dns.maxTCPConns is, so DNS over TCP keeps its share
	// whatever HTTP does. A new connection at a full table closes the one
	// idle longest; when every one is busy it takes one of 8 slots
	// reserved for /healthz and /readyz (anything else is answered 503 there).
	MaxConns int `json:"maxConns,omitempty"`
	// AllowedHosts lists the host names (case-insensitive, no port) a
	// request's Host header may name, besides IP literals and "localhost"
	// (always allowed) and the host of Addr. Any other Host is answered
	// 421 Misdirected Request, so a page that rebinds its own DNS name to
	// gslbd's address (DNS rebinding) reads nothing. /healthz, /readyz and
	// /replication/ (shared secret) answer whatever the Host: a liveness
	// probe must not fail on a name. List the names operators and
	// Prometheus reach gslbd by.
	AllowedHosts []string `json:"allowedHosts,omitempty"`
}

// ReplicationConfig configures the replication endpoints of a controller
// and the secret a node presents.
type ReplicationConfig struct {
	// Secret is the shared secret (16–1024 bytes) nodes send in Header.
	// Empty disables /replication on a controller.
	Secret string `json:"secret,omitempty"`
	// Header carries the secret. Default replication.DefaultSecretHeader.
	Header string `json:"header,omitempty"`
	// Notify lists the base URLs of nodes' replication endpoints
	// ("http://node-1:8054/replication"); each is sent a notify whenever
	// the zone changes, so nodes sync at once instead of on their interval.
	Notify []string `json:"notify,omitempty"`
}

func (r ReplicationConfig) auth() replication.HandlerConfig {
	h := replication.DefaultHandlerConfig()
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
type NodeConfig = replication.ReplicaConfig

// RecordSpec is one name gslbd answers for.
type RecordSpec struct {
	// Name is the fully qualified name inside Zone (not its apex).
	Name string `json:"name"`
	// TTL of the answers, whole seconds from 1s to 24h. Left out: 30s
	// (DefaultRecordTTL); 0s is refused.
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
	// Answer says how the published (healthy) addresses are answered per
	// query: "all" (or "", the default: every one), "roundRobin",
	// "weightedRandom" (one address, by weight), "geo" (the client's
	// region's, else the nearest preferred region's, by the geo block) or
	// "regionFilter" (the client's region's only). Per-query kinds need
	// the embedded zone (provider.type embedded); nodes answer them too.
	// See AnswerKind.
	Answer AnswerKind `json:"answer,omitempty"`
	// Within, with answer "geo" or "regionFilter", says how the chosen
	// region's addresses are answered: "all" (or "", the default: every
	// one), "roundRobin" (every one, rotated per query) or
	// "weightedRandom" (one, by weight). Where no region is chosen (the
	// client is not placed, or no region has a published address) it
	// chooses among every published address.
	Within AnswerKind `json:"within,omitempty"`
	// Steps are steering steps applied after answer (and within), in
	// order, each to the previous one's answer: sticky, firstN, netFence,
	// latency, proximity and loadShed (see StepSpec). Like per-query kinds
	// they need the embedded zone.
	Steps []StepSpec `json:"steps,omitempty"`

	check probecheck.Spec // resolved by Validate
}

// DefaultRecordTTL is the TTL of a record whose config leaves ttl out.
const DefaultRecordTTL = 30 * time.Second

func (*RecordSpec) yamlPlain() {}

// UnmarshalJSON decodes a record; a ttl left out is DefaultRecordTTL, one
// written (0s included) is kept as written, for Validate to judge.
func (r *RecordSpec) UnmarshalJSON(data []byte) error {
	type plain RecordSpec
	p := plain{TTL: Duration(DefaultRecordTTL)}
	if err := decodeStrict(data, &p); err != nil {
		return err
	}
	*r = RecordSpec(p)
	return nil
}

// AddressSpec is one address of a record.
type AddressSpec struct {
	// IP is the address published (IPv4 or IPv6).
	IP string `json:"ip"`
	// Regions are its region tags (region-filtered snapshots, priority,
	// answers "geo" and "regionFilter").
	Regions []string `json:"regions,omitempty"`
	// Weight for the weighted strategy and answer "weightedRandom",
	// 0–65535.
	Weight int `json:"weight,omitempty"`
	// ProbeAddr, when set, is the host:port probed instead of IP (the
	// check's port applies to IP otherwise).
	ProbeAddr string `json:"probeAddr,omitempty"`
}

// DefaultStateDir is the state directory used when the config leaves
// stateDir out: $STATE_DIRECTORY as systemd sets it for a unit with
// StateDirectory= (its first entry), else $XDG_STATE_HOME/gslbd, else
// ~/.local/state/gslbd; "" when none of these can be found (no home
// directory), which turns the state file off.
func DefaultStateDir() string {
	if d, _, _ := strings.Cut(os.Getenv("STATE_DIRECTORY"), ":"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "gslbd")
	}
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		return filepath.Join(h, ".local", "state", "gslbd")
	}
	return ""
}

// DefaultConfig returns gslbd's defaults: owner "gslbd", record-service
// style, DNS on 127.0.0.1:5353, HTTP on 127.0.0.1:8053, the embedded zone
// only, keep-last record policy, the default monitor and probe, and the
// default replica settings for node mode.
func DefaultConfig() Config {
	return Config{
		OwnerID:     "gslbd",
		Style:       StyleRecordService,
		DNS:         DNSConfig{Addr: "127.0.0.1:5353", TCPIdleTimeout: Duration(10 * time.Second), RRL: defaultRRL()},
		HTTP:        HTTPConfig{Addr: "127.0.0.1:8053"},
		Replication: ReplicationConfig{Header: replication.DefaultSecretHeader},
		StateDir:    DefaultStateDir(),
		Provider:    ProviderConfig{Type: "embedded"},
		Policy:      failover.DefaultRecordConfig(),
		Monitor:     probe.DefaultMonitorConfig(),
		Probe:       DefaultProbe(),
		Node:        replication.DefaultReplicaConfig(),
		Transfer:    zonetransfer.DefaultTransferConfig(),
	}
}

// ParseConfig decodes YAML (or JSON) onto DefaultConfig. Keys match field
// names exactly (case included); unknown and duplicate keys are errors; an
// error is a *YAMLError naming the field's path and line. It does not
// validate; call Validate or ValidateNode.
func ParseConfig(data []byte) (Config, error) {
	if len(data) > 4<<20 {
		return Config{}, bad("config", fmt.Sprintf("%d bytes", len(data)), "at most 4 MiB")
	}
	cfg := DefaultConfig()
	if err := decodeYAML(data, &cfg); err != nil {
		return Config{}, err
	}
	return cfg, nil
}
