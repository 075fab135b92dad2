package dnssec

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gslbkit/gslb/internal/fielderr"
	"github.com/miekg/dns"
)

// Defaults of Config (see docs/dnssec.md for how they compare with Knot DNS
// and BIND).
const (
	// DefaultValidity is how long a signature is valid from when it is
	// made: 7 days. Knot's rrsig-lifetime and BIND's signatures-validity
	// default to 14 days; an online signer re-signs whenever it wants, so
	// a shorter life limits how long a signature outlives a retired key or
	// a replaced answer.
	DefaultValidity = 7 * 24 * time.Hour
	// DefaultBackdate is how far before now a signature's inception is set,
	// so a validator whose clock is behind accepts it: 1 hour, as BIND's
	// dnssec-signzone (Knot uses 90 minutes).
	DefaultBackdate = time.Hour
	// DefaultCacheEntries bounds the signature cache: 65536 RRsets.
	DefaultCacheEntries = 1 << 16
	// DefaultCacheBytes bounds the signature cache's estimated memory:
	// 32 MiB.
	DefaultCacheBytes = 32 << 20
	// DefaultSignaturesPerSecond is the budget of new signatures per second
	// (cache misses and refreshes), with a burst of as many: 10000, a
	// fraction of one core (see docs/dnssec.md for the rate measured).
	DefaultSignaturesPerSecond = 10000
)

// ErrInvalidConfig is wrapped by Config.Validate's errors.
var ErrInvalidConfig = errors.New("dnssec: invalid config")

// ErrOverBudget means a signature was needed (a cache miss, or a cached one
// expired) beyond Config.SignaturesPerSecond: the answer cannot be signed
// now. A server answers SERVFAIL: a signed zone's answer without its
// signature fails validation anyway.
var ErrOverBudget = errors.New("dnssec: signing budget exceeded")

// ErrNoKey means the signer has no active key for the RRset's role.
var ErrNoKey = errors.New("dnssec: no active key")

// KeyState is what a key of the zone does.
type KeyState uint8

// The key states. A rollover moves keys through them (docs/dnssec.md).
const (
	// Active keys are published in the DNSKEY RRset and sign. The zero
	// KeyState.
	Active KeyState = iota
	// Published keys are in the DNSKEY RRset but sign nothing: a ZSK
	// pre-published before it signs, or kept after it stopped signing
	// until its signatures have left caches.
	Published
)

// String returns "active" or "published".
func (s KeyState) String() string {
	switch s {
	case Active:
		return "active"
	case Published:
		return "published"
	}
	return fmt.Sprintf("KeyState(%d)", uint8(s))
}

// ZoneKey is one key of a zone and its state. Which RRsets an active key
// signs follows from its flags: a key with the SEP flag (FlagsKSK) signs
// the DNSKEY, CDS and CDNSKEY RRsets; a key without it (FlagsZSK) signs
// every other RRset; when no ZSK is active the SEP keys sign everything (a
// combined signing key, CSK, the default of one key). CDS and CDNSKEY
// (RFC 7344) list the active SEP keys.
type ZoneKey struct {
	Key   *Key
	State KeyState
}

// Config configures a Signer. Zero fields take their defaults.
type Config struct {
	// Keys are the zone's keys: at least one active, all of the zone, none
	// twice. A single ECDSA P-256 key with FlagsKSK (a CSK) is the
	// recommended setup.
	Keys []ZoneKey
	// Validity is a new signature's life from now: expiration = now +
	// Validity. 1 hour to 90 days; default DefaultValidity (7 days).
	Validity time.Duration
	// Backdate sets inception = now - Backdate, for validators whose clock
	// is behind. 0 to 1 day; default DefaultBackdate (1 hour); a negative
	// value means 0.
	Backdate time.Duration
	// Refresh is how long before expiration a cached signature is replaced
	// by a new one: more than 0 and less than Validity; default Validity/4
	// (with the default validity, 42 hours, so a signature that a resolver
	// caches for at most a TTL never expires in its cache).
	Refresh time.Duration
	// CacheEntries bounds the signature cache in RRsets; default
	// DefaultCacheEntries (65536), 1 to 2^24.
	CacheEntries int
	// CacheBytes bounds the signature cache's estimated size in bytes
	// (signatures, names and map overhead); default DefaultCacheBytes (32
	// MiB), at least 4096.
	CacheBytes int
	// SignaturesPerSecond is the budget of signatures made per second
	// (token bucket with a burst of as many), so a flood of cache misses
	// (random names under a wildcard, or many answer subsets) costs at most
	// that much CPU; beyond it Sign returns ErrOverBudget, except that an
	// expiring but still valid cached signature is served. Default
	// DefaultSignaturesPerSecond (10000); 1 to 10^7.
	SignaturesPerSecond int
}

func (c Config) withDefaults() Config {
	if c.Validity == 0 {
		c.Validity = DefaultValidity
	}
	if c.Backdate == 0 {
		c.Backdate = DefaultBackdate
	}
	if c.Backdate < 0 {
		c.Backdate = 0
	}
	if c.Refresh == 0 {
		c.Refresh = c.Validity / 4
	}
	if c.CacheEntries == 0 {
		c.CacheEntries = DefaultCacheEntries
	}
	if c.CacheBytes == 0 {
		c.CacheBytes = DefaultCacheBytes
	}
	if c.SignaturesPerSecond == 0 {
		c.SignaturesPerSecond = DefaultSignaturesPerSecond
	}
	return c
}

// Validate reports the first invalid field as a *FieldError wrapping
// ErrInvalidConfig; zero fields are valid (they take defaults). The keys
// are checked by NewSigner and SetKeys, which know the zone.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Validity < time.Hour || c.Validity > 90*24*time.Hour:
		return fielderr.New(ErrInvalidConfig, "validity", c.Validity, fielderr.DurationRange(time.Hour, 90*24*time.Hour))
	case c.Backdate > 24*time.Hour:
		return fielderr.New(ErrInvalidConfig, "backdate", c.Backdate, fielderr.DurationRange(0, 24*time.Hour))
	case c.Refresh <= 0 || c.Refresh >= c.Validity:
		return fielderr.New(ErrInvalidConfig, "refresh", c.Refresh, "more than 0 and less than validity ("+fielderr.Duration(c.Validity)+")")
	case c.CacheEntries < 1 || c.CacheEntries > 1<<24:
		return fielderr.New(ErrInvalidConfig, "cacheEntries", c.CacheEntries, fielderr.Range(1, 1<<24))
	case c.CacheBytes < 4096:
		return fielderr.New(ErrInvalidConfig, "cacheBytes", c.CacheBytes, fielderr.AtLeast(4096))
	case c.SignaturesPerSecond < 1 || c.SignaturesPerSecond > 10_000_000:
		return fielderr.New(ErrInvalidConfig, "signaturesPerSecond", c.SignaturesPerSecond, fielderr.Range(1, 10_000_000))
	}
	return nil
}

// FieldError is the error Validate returns.
type FieldError = fielderr.Error

// Stats are a Signer's counters since it was made, for metrics.
type Stats struct {
	// Made counts signatures made (one per RRset and key).
	Made uint64
	// Hits counts RRsets answered from the cache.
	Hits uint64
	// Failed counts signing errors other than the budget (a key that cannot
	// sign).
	Failed uint64
	// OverBudget counts RRsets not signed because the budget was spent.
	OverBudget uint64
	// Evicted counts cache entries dropped to stay within the bounds.
	Evicted uint64
	// Deferred counts signatures served past their refresh point because
	// the budget was spent: still valid, but within Refresh of their
	// expiration. A growing count means the budget is too small for the
	// zone (a readiness check can flag it, with Failed and OverBudget).
	Deferred uint64
	// Entries and Bytes are the cache's current size (Bytes estimated).
	Entries int
	Bytes   int
}

// keySet is the immutable set of keys in use and the RRsets derived from
// them.
type keySet struct {
	gen     uint64
	keys    []ZoneKey
	sep     []*Key // active SEP keys: sign DNSKEY, CDS, CDNSKEY
	zsk     []*Key // active keys signing the other RRsets
	dnskey  []dns.RR
	cds     []dns.RR
	cdnskey []dns.RR
}

// Signer signs a zone's RRsets online and caches the signatures per exact
// RRset (owner, type, class, TTL and record data as a set), so an RRset
// seen again, such as a weighted or geographic answer choosing the same
// subset, reuses its signature until it is due for refresh. It is safe for
// concurrent use; signing happens inline in the caller ("sign once and
// cache"), bounded by Config.SignaturesPerSecond.
type Signer struct {
	zone  string
	cfg   Config
	keys  atomic.Pointer[keySet]
	kmu   sync.Mutex // serialises SetKeys
	cache sigCache

	made, hits, failed, over, deferred atomic.Uint64
}

// NewSigner returns a Signer for zone (any case, trailing dot optional)
// with cfg's keys and settings.
func NewSigner(zone string, cfg Config) (*Signer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	z := dns.CanonicalName(dns.Fqdn(zone))
	if _, ok := dns.IsDomainName(z); !ok {
		return nil, fielderr.New(ErrInvalidConfig, "zone", zone, "a domain name")
	}
	s := &Signer{zone: z, cfg: cfg}
	s.cache.init(cfg)
	if err := s.SetKeys(cfg.Keys); err != nil {
		return nil, err
	}
	return s, nil
}

// Zone returns the zone signed, fully qualified and lower case.
func (s *Signer) Zone() string { return s.zone }

// Config returns the configuration with defaults applied and the current
// keys.
func (s *Signer) Config() Config {
	c := s.cfg
	c.Keys = slices.Clone(s.keys.Load().keys)
	return c
}

// SetKeys replaces the zone's keys: one step of a rollover (see
// docs/dnssec.md). At least one key must be active, every key must belong
// to the zone and appear once (by key tag and algorithm). Signatures made
// with the previous keys are dropped from the cache, and Generation
// changes, so callers holding signed answers rebuild them.
func (s *Signer) SetKeys(keys []ZoneKey) error {
	ks := &keySet{keys: slices.Clone(keys)}
	seen := map[[2]uint16]bool{}
	for i, zk := range keys {
		path := fielderr.Index("keys", i)
		switch {
		case zk.Key == nil:
			return fielderr.Missing(ErrInvalidConfig, path+".key", "a key")
		case zk.Key.Zone() != s.zone:
			return fielderr.New(ErrInvalidConfig, path+".key", zk.Key.Zone(), "a key of "+s.zone)
		case zk.State != Active && zk.State != Published:
			return fielderr.New(ErrInvalidConfig, path+".state", int(zk.State), "0 (active) or 1 (published)")
		case seen[[2]uint16{zk.Key.tag, uint16(zk.Key.Algorithm())}]:
			return fielderr.New(ErrInvalidConfig, path+".key", zk.Key.String(), "each key once")
		}
		seen[[2]uint16{zk.Key.tag, uint16(zk.Key.Algorithm())}] = true
		ks.dnskey = append(ks.dnskey, zk.Key.DNSKEY())
		if zk.State != Active {
			continue
		}
		if zk.Key.SEP() {
			ks.sep = append(ks.sep, zk.Key)
			ds := zk.Key.DS().ToCDS()
			ds.Hdr.Name = s.zone
			ks.cds = append(ks.cds, ds)
			ks.cdnskey = append(ks.cdnskey, zk.Key.dnskey.ToCDNSKEY())
		} else {
			ks.zsk = append(ks.zsk, zk.Key)
		}
	}
	if len(ks.sep) == 0 && len(ks.zsk) == 0 {
		return fielderr.Missing(ErrInvalidConfig, "keys", "at least one active key")
	}
	if len(ks.zsk) == 0 {
		ks.zsk = ks.sep // CSK
	}
	if len(ks.sep) == 0 {
		ks.sep = ks.zsk // ZSKs only: they sign the key set too
	}
	s.kmu.Lock()
	defer s.kmu.Unlock()
	if old := s.keys.Load(); old != nil {
		ks.gen = old.gen + 1
	}
	s.keys.Store(ks)
	s.cache.clear()
	return nil
}

// Keys returns the zone's keys and their states.
func (s *Signer) Keys() []ZoneKey { return slices.Clone(s.keys.Load().keys) }

// Generation counts SetKeys calls: a signed answer built at one generation
// is stale at another.
func (s *Signer) Generation() uint64 { return s.keys.Load().gen }

// DNSKEYs returns the zone's DNSKEY RRset (every key, active or
// published), each record with the TTL it was made with. Callers must not
// modify the records.
func (s *Signer) DNSKEYs() []dns.RR { return s.keys.Load().dnskey }

// CDS returns the CDS RRset (RFC 7344): a SHA-256 digest of each active
// SEP key, what the parent's DS RRset should become. Callers must not
// modify the records.
func (s *Signer) CDS() []dns.RR { return s.keys.Load().cds }

// CDNSKEY returns the CDNSKEY RRset (RFC 7344): the active SEP keys.
// Callers must not modify the records.
func (s *Signer) CDNSKEY() []dns.RR { return s.keys.Load().cdnskey }

// Stats returns the signer's counters.
func (s *Signer) Stats() Stats {
	n, b, ev := s.cache.size()
	return Stats{Made: s.made.Load(), Hits: s.hits.Load(), Failed: s.failed.Load(),
		OverBudget: s.over.Load(), Evicted: ev, Deferred: s.deferred.Load(), Entries: n, Bytes: b}
}

// Sign returns the RRSIGs of rrset (records of one owner, type and class;
// their TTL is the first record's; duplicate records count once), one per
// active key of the RRset's role, made at now (inception now - Backdate,
// expiration now + Validity) or taken from the cache. An owner starting
// with the "*" label signs a wildcard: the RRSIGs' Labels field leaves it
// out (RFC 4034 section 3.1.3), so the same RRSIGs, with their owner set to
// the name queried, sign every answer the wildcard synthesises (RFC 4035
// section 5.3.2). The returned records are shared: callers must copy one
// before changing it. Errors: ErrOverBudget, ErrNoKey, or a signing error.
func (s *Signer) Sign(rrset []dns.RR, now time.Time) ([]*dns.RRSIG, error) {
	if len(rrset) == 0 {
		return nil, errors.New("dnssec: empty RRset")
	}
	ks := s.keys.Load()
	var buf [512]byte
	key, set, err := cacheKey(rrset, buf[:0])
	if err != nil {
		s.failed.Add(1)
		return nil, err
	}
	sec := now.Unix()
	e := s.cache.get(key)
	if e != nil && e.gen == ks.gen && sec < e.refresh {
		s.hits.Add(1)
		return e.sigs, nil
	}
	if !s.cache.take(now, s.cfg.SignaturesPerSecond) {
		if e != nil && e.gen == ks.gen && sec < e.expire-60 {
			s.deferred.Add(1) // still valid: serve it, refresh later
			return e.sigs, nil
		}
		s.over.Add(1)
		return nil, ErrOverBudget
	}
	signers := ks.zsk
	switch set[0].Header().Rrtype {
	case dns.TypeDNSKEY, dns.TypeCDS, dns.TypeCDNSKEY:
		signers = ks.sep
	}
	if len(signers) == 0 {
		s.failed.Add(1)
		return nil, ErrNoKey
	}
	inc := now.Add(-s.cfg.Backdate)
	exp := now.Add(s.cfg.Validity)
	sigs := make([]*dns.RRSIG, 0, len(signers))
	for _, k := range signers {
		sig := &dns.RRSIG{
			Hdr:       dns.RR_Header{Ttl: set[0].Header().Ttl},
			Algorithm: k.Algorithm(), KeyTag: k.tag, SignerName: s.zone,
			Inception: uint32(inc.Unix()), Expiration: uint32(exp.Unix()),
		}
		if err := sig.Sign(k.priv, set); err != nil {
			s.failed.Add(1)
			return nil, fmt.Errorf("dnssec: signing %s %s with %s: %w", set[0].Header().Name, dns.TypeToString[set[0].Header().Rrtype], k, err)
		}
		sigs = append(sigs, sig)
	}
	s.made.Add(uint64(len(sigs)))
	s.cache.put(string(key), &sigEntry{sigs: sigs, gen: ks.gen, refresh: exp.Add(-s.cfg.Refresh).Unix(), expire: exp.Unix()}, s.cfg)
	return sigs, nil
}
