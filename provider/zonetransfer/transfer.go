package zonetransfer

import (
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gslbkit/gslb/internal/fielderr"
	"github.com/gslbkit/gslb/internal/jsontime"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/miekg/dns"
)

// TransferConfig configures zone transfer out (AXFR, RFC 5936; IXFR, RFC
// 1995) and NOTIFY (RFC 1996), so that standard secondaries (BIND, Knot,
// NSD, PowerDNS, ...) can follow a memory.Provider's zones: the Provider is then
// their (hidden) primary.
//
// Secondaries serve the records the zone stores. Answer hooks (memory.AnswerFunc)
// run only in the process that registered them, and region-filtered copies
// exist only on the replication Handler: a secondary answers every client
// with the whole stored RRset. A Transfer logs a warning when it transfers
// a zone that has answer hooks.
//
// The zero value transfers nothing and notifies no one; DefaultTransferConfig
// gives the defaults of the other fields.
type TransferConfig struct {
	// Keys are the TSIG keys (RFC 8945) the server knows: transfer requests
	// and queries signed with one of them are verified and answered signed.
	Keys []TSIGKey `json:"keys,omitempty"`
	// Allow lists who may transfer; a request is served when it matches
	// any rule, and refused (REFUSED) otherwise. Empty: nobody.
	Allow []TransferRule `json:"allow,omitempty"`
	// Notify lists the secondaries (IP:port) sent a NOTIFY whenever an
	// offered zone's serial changes, and once when the Transfer starts.
	Notify []string `json:"notify,omitempty"`
	// NotifyKey names the key (in Keys) NOTIFY messages are signed with;
	// empty sends them unsigned.
	NotifyKey string `json:"notifyKey,omitempty"`
	// NotifyTimeout is how long to wait for a secondary to acknowledge a
	// NOTIFY before sending it again, 10ms to 1m. Default 2s.
	NotifyTimeout time.Duration `json:"notifyTimeout"`
	// NotifyRetries is how many times an unacknowledged NOTIFY is sent
	// again, 0 to 100. Default 5 (then the secondary relies on its SOA
	// refresh timer). A newer serial starts the count again.
	NotifyRetries int `json:"notifyRetries"`
	// Zones limits transfer and NOTIFY to these zones; empty offers every
	// zone the Provider holds.
	Zones []string `json:"zones,omitempty"`
	// SignedUnsigned transfers a zone signed online (memory.ZoneConfig.Signer
	// set) as the records it stores, without DNSSEC records. Default false:
	// its AXFR and IXFR requests are refused (REFUSED, counted in Refused),
	// because a secondary would serve the zone unsigned and, once the parent
	// holds a DS for it, every answer from that secondary would fail
	// validation. Set it only for secondaries that do not serve the zone to
	// validating resolvers (a backup, a monitor). See docs/dnssec.md.
	SignedUnsigned bool `json:"signedUnsigned,omitempty"`
}

// TSIGKey is one TSIG key, as BIND's tsig-keygen and Knot's keymgr print it.
type TSIGKey struct {
	// Name is the key's name, a domain name ("xfr-key").
	Name string `json:"name"`
	// Algorithm is hmac-sha256 (the default), hmac-sha384, hmac-sha512,
	// hmac-sha224, hmac-sha1 or hmac-md5.
	Algorithm string `json:"algorithm,omitempty"`
	// Secret is the key, base64, at least 16 bytes once decoded.
	Secret string `json:"secret"`
}

// TransferRule allows transfers from a source prefix, signed by a key, or
// both (then both must hold). A rule with neither allows everyone.
type TransferRule struct {
	// Prefix is the client address range, e.g. 192.0.2.0/24; unset: any.
	Prefix netip.Prefix `json:"prefix,omitzero"`
	// Key names a key in TransferConfig.Keys the request must be signed
	// with; empty: signed or not.
	Key string `json:"key,omitempty"`
}

// DefaultTransferConfig returns transfer off (no rules, no secondaries) with
// a 2 s NOTIFY timeout and 5 retries.
func DefaultTransferConfig() TransferConfig {
	return TransferConfig{NotifyTimeout: 2 * time.Second, NotifyRetries: 5}
}

// Enabled reports whether the configuration transfers or notifies anything.
func (c TransferConfig) Enabled() bool { return len(c.Allow) > 0 || len(c.Notify) > 0 }

func (c TransferConfig) withDefaults() TransferConfig {
	d := DefaultTransferConfig()
	if c.NotifyTimeout == 0 {
		c.NotifyTimeout = d.NotifyTimeout
	}
	if c.NotifyRetries == 0 {
		c.NotifyRetries = d.NotifyRetries
	}
	return c
}

var tsigAlgorithms = map[string]string{
	"hmac-sha256": dns.HmacSHA256, "hmac-sha384": dns.HmacSHA384, "hmac-sha512": dns.HmacSHA512,
	"hmac-sha224": dns.HmacSHA224, "hmac-sha1": dns.HmacSHA1, "hmac-md5": dns.HmacMD5,
}

// transferInvalid is the FieldError (wrapping ErrInvalidConfig) for a
// TransferConfig field.
func transferInvalid(field string, value any, allowed string) error {
	return fielderr.New(ErrInvalidConfig, field, value, allowed)
}

// zoneKey is a zone or key name as the Provider keys it: lower case,
// fully qualified.
func zoneKey(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	return strings.TrimRight(name, ".") + "."
}

// Validate reports the first field out of range, as a *FieldError whose
// Path is the path within the TransferConfig ("allow[0].key"), wrapping
// ErrInvalidConfig. Zero fields are valid: they take their defaults.
func (c TransferConfig) Validate() error {
	c = c.withDefaults()
	names := map[string]bool{}
	for i, k := range c.Keys {
		f := fielderr.Index("keys", i)
		if _, ok := dns.IsDomainName(k.Name); !ok || strings.TrimSpace(k.Name) == "" {
			return transferInvalid(f+".name", k.Name, "a domain name such as xfr-key")
		}
		n := zoneKey(k.Name)
		if names[n] {
			return transferInvalid(f+".name", k.Name, "a name not used by another key")
		}
		names[n] = true
		if _, ok := tsigAlgorithms[strings.ToLower(strings.TrimSuffix(k.Algorithm, "."))]; !ok && k.Algorithm != "" {
			return transferInvalid(f+".algorithm", k.Algorithm, fielderr.OneOf("hmac-sha256", "hmac-sha384", "hmac-sha512", "hmac-sha224", "hmac-sha1", "hmac-md5"))
		}
		if b, err := base64.StdEncoding.DecodeString(k.Secret); err != nil || len(b) < 16 {
			return &FieldError{Path: f + ".secret", Value: "(hidden)", Allowed: "base64 of at least 16 bytes", Err: ErrInvalidConfig}
		}
	}
	for i, r := range c.Allow {
		if r.Key != "" && !names[zoneKey(r.Key)] {
			return transferInvalid(fielderr.Index("allow", i)+".key", r.Key, "the name of a key in keys")
		}
	}
	for i, a := range c.Notify {
		if _, err := netip.ParseAddrPort(a); err != nil {
			return transferInvalid(fielderr.Index("notify", i), a, "an IP:port such as 192.0.2.53:53")
		}
	}
	if c.NotifyKey != "" && !names[zoneKey(c.NotifyKey)] {
		return transferInvalid("notifyKey", c.NotifyKey, "the name of a key in keys")
	}
	if d := c.NotifyTimeout; d < 10*time.Millisecond || d > time.Minute {
		return transferInvalid("notifyTimeout", d, fielderr.DurationRange(10*time.Millisecond, time.Minute))
	}
	if c.NotifyRetries < 0 || c.NotifyRetries > 100 {
		return transferInvalid("notifyRetries", c.NotifyRetries, fielderr.Range(0, 100))
	}
	for i, z := range c.Zones {
		if _, ok := dns.IsDomainName(zoneKey(z)); !ok || strings.TrimSpace(z) == "" {
			return transferInvalid(fielderr.Index("zones", i), z, "a zone name")
		}
	}
	return nil
}

// MarshalJSON writes NotifyTimeout as a string such as "2s".
func (c TransferConfig) MarshalJSON() ([]byte, error) {
	type plain TransferConfig
	return json.Marshal(struct {
		plain
		NotifyTimeout jsontime.Duration `json:"notifyTimeout"`
	}{plain(c), jsontime.Duration(c.NotifyTimeout)})
}

// UnmarshalJSON reads NotifyTimeout as a string such as "2s" or a number
// of seconds.
func (c *TransferConfig) UnmarshalJSON(b []byte) error {
	type plain TransferConfig
	aux := struct {
		*plain
		NotifyTimeout jsontime.Duration `json:"notifyTimeout"`
	}{(*plain)(c), jsontime.Duration(c.NotifyTimeout)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	c.NotifyTimeout = time.Duration(aux.NotifyTimeout)
	return nil
}

// tsigKey is a validated key: name fully qualified, lower case; algorithm
// as miekg/dns names it.
type tsigKey struct {
	name, alg, secret string
}

// Transfer serves a memory.Provider's zones to secondaries: AXFR and IXFR over
// TCP (IXFR from the journal, see memory.Change.Old, falling back to AXFR when the
// journal does not reach back to the secondary's serial), TSIG-signed
// queries of any type (the secondaries' SOA checks), and NOTIFY to the
// configured secondaries from Run. dnsserver.Server uses one given with
// dnsserver.Server.SetTransfer (and runs it); a program with its own DNS
// loops calls ServeTCP for each TCP message and RespondWire or RespondUDP
// for the rest.
//
// Transfers read one immutable snapshot of the zone and never block the
// Provider's writers. Methods are safe for concurrent use.
type Transfer struct {
	p       *memory.Provider
	cfg     TransferConfig
	log     *slog.Logger
	keys    map[string]tsigKey
	allow   []TransferRule
	zones   map[string]bool // nil: every zone
	notify  *tsigKey
	stats   transferCounters
	warned  atomic.Uint64 // the set of answer hooks last warned about (memory.Provider.ZoneHooked)
	running atomic.Bool
}

// NewTransfer returns a Transfer of p's zones, or cfg's validation error.
// log may be nil (quiet). It starts nothing; Run sends the NOTIFYs.
func NewTransfer(p *memory.Provider, cfg TransferConfig, log *slog.Logger) (*Transfer, error) {
	if p == nil {
		return nil, ErrNoProvider
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	x := &Transfer{p: p, cfg: cfg, log: log, keys: map[string]tsigKey{}}
	for _, k := range cfg.Keys {
		alg := tsigAlgorithms[strings.ToLower(strings.TrimSuffix(k.Algorithm, "."))]
		if alg == "" {
			alg = dns.HmacSHA256
		}
		tk := tsigKey{name: zoneKey(k.Name), alg: alg, secret: k.Secret}
		x.keys[tk.name] = tk
	}
	for _, r := range cfg.Allow {
		if r.Key != "" {
			r.Key = zoneKey(r.Key)
		}
		if r.Prefix.IsValid() {
			r.Prefix = r.Prefix.Masked()
		}
		x.allow = append(x.allow, r)
	}
	if len(cfg.Zones) > 0 {
		x.zones = map[string]bool{}
		for _, z := range cfg.Zones {
			x.zones[zoneKey(z)] = true
		}
	}
	if cfg.NotifyKey != "" {
		k := x.keys[zoneKey(cfg.NotifyKey)]
		x.notify = &k
	}
	return x, nil
}

// offered reports whether zone (a key) may be transferred and notified.
func (x *Transfer) offered(zone string) bool { return x.zones == nil || x.zones[zone] }

// allowed applies the rules to a request from src signed by key ("" for
// unsigned).
func (x *Transfer) allowed(src netip.Addr, key string) bool {
	src = src.Unmap()
	return slices.ContainsFunc(x.allow, func(r TransferRule) bool {
		return (!r.Prefix.IsValid() || r.Prefix.Contains(src)) && (r.Key == "" || r.Key == key)
	})
}

// TransferStats counts what a Transfer did since it was made.
type TransferStats struct {
	// AXFR counts whole-zone transfers sent (IXFR requests answered with
	// the whole zone included); IXFR incremental ones; UpToDate IXFR
	// requests from secondaries that already held the current serial.
	AXFR, IXFR, UpToDate uint64
	// Refused counts transfer requests refused (not allowed, not an
	// offered zone, bad TSIG); BadTSIG queries whose TSIG failed.
	Refused, BadTSIG uint64
	// NotifySent counts NOTIFY messages sent (retries included),
	// NotifyAcked those acknowledged, NotifyFailed those given up on.
	NotifySent, NotifyAcked, NotifyFailed uint64
}

type transferCounters struct {
	axfr, ixfr, upToDate, refused, badTSIG atomic.Uint64
	notifySent, notifyAcked, notifyFailed  atomic.Uint64
}

// Stats returns the counters.
func (x *Transfer) Stats() TransferStats {
	c := &x.stats
	return TransferStats{
		AXFR: c.axfr.Load(), IXFR: c.ixfr.Load(), UpToDate: c.upToDate.Load(),
		Refused: c.refused.Load(), BadTSIG: c.badTSIG.Load(),
		NotifySent: c.notifySent.Load(), NotifyAcked: c.notifyAcked.Load(), NotifyFailed: c.notifyFailed.Load(),
	}
}

// warnHooks logs, once per set of hooks, that zone has answer hooks that
// its secondaries will not apply.
func (x *Transfer) warnHooks(zone string) {
	hooked, set := x.p.ZoneHooked(zone)
	if !hooked || x.warned.Load() == set {
		return
	}
	x.warned.Store(set)
	x.log.Warn("zone transfer: the zone has answer hooks; secondaries serve the stored records only, unchanged for every client", "zone", zone)
}

// now is the clock TSIG signs with.
func tsigNow() int64 { return time.Now().Unix() }
