package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
)

// DNSSECConfig signs the zone online (provider/dnssec, docs/dnssec.md):
// every answer to a query with the DO bit carries RRSIGs, negative answers
// use compact denial of existence (RFC 9824), and the apex answers DNSKEY,
// CDS and CDNSKEY. Keys never travel over replication: a node signs with
// key files it is given itself, the same the controller signs with.
type DNSSECConfig struct {
	// Keys are the zone's key files in BIND's format, each named by either
	// file or their common base ("Kgslb.example.com.+013+12345"): a key
	// with the SEP flag (257) signs the DNSKEY set, the others every other
	// set, and a single SEP key (a combined signing key) signs everything,
	// the recommended setup. A .private file readable by group or others is
	// refused. Left out in controller mode, gslbd makes one combined key at
	// its first start and keeps it in <stateDir>/dnssec (directory 0700,
	// .private 0600), logging the DS record the parent zone must publish.
	// Required in node mode: give every node the controller's key files.
	Keys []string `json:"keys,omitempty"`
	// Algorithm is a generated key's: "ecdsap256sha256" (13, the default)
	// or "ed25519" (15). Key files carry their own.
	Algorithm string `json:"algorithm,omitempty"`
	// Validity is a signature's life from when it is made, 1h–90d; default
	// 7 days (dnssec.DefaultValidity).
	Validity Duration `json:"validity,omitempty"`
	// Refresh is how long before its expiration a cached signature is
	// replaced, more than 0 and less than validity; default validity/4.
	// /readyz reports dnssec_expiring when a signature served expires
	// sooner than half of it.
	Refresh Duration `json:"refresh,omitempty"`
	// SignaturesPerSecond bounds the signatures made per second (cache
	// misses, such as random names under a wildcard); beyond it a query is
	// answered SERVFAIL and /readyz reports dnssec_failing. Default 10000.
	SignaturesPerSecond int `json:"signaturesPerSecond,omitempty"`
}

// keyDirName is the directory under stateDir holding generated keys.
const keyDirName = "dnssec"

// algorithms maps the config's algorithm names to DNSSEC numbers.
var algorithms = map[string]uint8{"": dnssec.ECDSAP256SHA256, "ecdsap256sha256": dnssec.ECDSAP256SHA256, "ed25519": dnssec.ED25519}

// signerConfig is the library config the block describes, keys aside.
func (d *DNSSECConfig) signerConfig() dnssec.Config {
	return dnssec.Config{Validity: d.Validity.D(), Refresh: d.Refresh.D(), SignaturesPerSecond: d.SignaturesPerSecond}
}

// validateDNSSEC checks the dnssec block; node says node mode, where key
// files are required, and stateDir where generated keys would be kept.
func (c *Config) validateDNSSEC(node bool) error {
	d := c.DNSSEC
	if d == nil {
		return nil
	}
	if _, ok := algorithms[strings.ToLower(d.Algorithm)]; !ok {
		return bad("dnssec.algorithm", d.Algorithm, `"ecdsap256sha256" or "ed25519"`)
	}
	if err := d.signerConfig().Validate(); err != nil {
		return badErr("dnssec", nil, "", err)
	}
	for i, k := range d.Keys {
		if strings.TrimSpace(k) == "" {
			return bad(fmt.Sprintf("dnssec.keys[%d]", i), k, "the path of a BIND key file (K<zone>+<alg>+<tag>.key or .private, or their base)")
		}
	}
	if node && len(d.Keys) == 0 {
		return bad("dnssec.keys", "", "the controller's key files in node mode (keys never travel over replication)")
	}
	if node && c.Zone == "" {
		return bad("zone", "", "the zone the node signs, with a dnssec block in node mode")
	}
	if len(d.Keys) == 0 && c.StateDir == "" {
		return bad("dnssec.keys", "", `key files, or a stateDir to keep a generated key in (a key made at every start would change the DNSKEY the parent's DS names)`)
	}
	return nil
}

// loadKeys returns the zone's keys: the configured files, else those kept
// in stateDir's key directory, else one combined key made now and written
// there.
func loadKeys(d *DNSSECConfig, zone, stateDir string, log *slog.Logger) ([]dnssec.ZoneKey, error) {
	var paths []string
	if len(d.Keys) > 0 {
		paths = d.Keys
	} else {
		dir := filepath.Join(stateDir, keyDirName)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("dnssec: key directory %s: %w", dir, err)
		}
		if st, err := os.Stat(dir); err != nil {
			return nil, err
		} else if st.Mode().Perm()&0o077 != 0 {
			return nil, fmt.Errorf("dnssec: key directory %s has mode %v: it must be open to its owner only (chmod 700)", dir, st.Mode().Perm())
		}
		found, err := filepath.Glob(filepath.Join(dir, "K"+zone+"+*.private"))
		if err != nil {
			return nil, err
		}
		sort.Strings(found)
		if len(found) == 0 {
			k, err := dnssec.GenerateKey(zone, algorithms[strings.ToLower(d.Algorithm)], dnssec.FlagsKSK, 3600)
			if err != nil {
				return nil, fmt.Errorf("dnssec: %w", err)
			}
			base, err := k.WriteFiles(dir)
			if err != nil {
				return nil, fmt.Errorf("dnssec: %w", err)
			}
			log.Info("dnssec: made a combined signing key; publish its DS at the parent zone", "key", k.String(), "file", base, "ds", k.DS().String())
			found = []string{base + ".private"}
		}
		paths = found
	}
	keys := make([]dnssec.ZoneKey, 0, len(paths))
	for _, p := range paths {
		base := strings.TrimSuffix(strings.TrimSuffix(p, ".key"), ".private")
		st, err := os.Stat(base + ".private")
		if err != nil {
			return nil, fmt.Errorf("dnssec: key %s: %w", p, err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			return nil, fmt.Errorf("dnssec: %s.private has mode %v: a private key must be readable by its owner only (chmod 600)", base, st.Mode().Perm())
		}
		k, err := dnssec.ReadKeyFiles(base)
		if err != nil {
			return nil, fmt.Errorf("dnssec: key %s: %w", p, err)
		}
		if k.Zone() != zone {
			return nil, fmt.Errorf("dnssec: key %s is a key of %s, not of %s", p, k.Zone(), zone)
		}
		keys = append(keys, dnssec.ZoneKey{Key: k})
		log.Info("dnssec: signing with", "key", k.String(), "ds", k.DS().String())
	}
	return keys, nil
}

// newZoneSigner builds the zone's signer from the dnssec block (nil when
// there is none) and registers its metrics; the readiness checks need the
// zone that serves it (watchSigner).
func newZoneSigner(cfg Config, zone string, met *metrics, log *slog.Logger) (*dnssec.Signer, error) {
	if cfg.DNSSEC == nil {
		return nil, nil
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	zone = dns.Fqdn(strings.ToLower(zone))
	keys, err := loadKeys(cfg.DNSSEC, zone, cfg.StateDir, log)
	if err != nil {
		return nil, err
	}
	sc := cfg.DNSSEC.signerConfig()
	sc.Keys = keys
	s, err := dnssec.NewSigner(zone, sc)
	if err != nil {
		return nil, fmt.Errorf("dnssec: %w", err)
	}
	for _, c := range []struct {
		result string
		f      func(dnssec.Stats) uint64
	}{
		{"made", func(st dnssec.Stats) uint64 { return st.Made }},
		{"cached", func(st dnssec.Stats) uint64 { return st.Hits }},
		{"failed", func(st dnssec.Stats) uint64 { return st.Failed }},
		{"over_budget", func(st dnssec.Stats) uint64 { return st.OverBudget }},
	} {
		met.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "gslbkit_dnssec_signatures_total", ConstLabels: prometheus.Labels{"result": c.result},
			Help: "Online signing: signatures made, RRsets answered from the signature cache, signing failures and RRsets left unsigned because the signing budget was spent (answered SERVFAIL).",
		}, func() float64 { return float64(c.f(s.Stats())) }))
	}
	met.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "gslbkit_dnssec_cache_entries", Help: "Online signing: RRsets whose signatures are cached.",
	}, func() float64 { return float64(s.Stats().Entries) }))
	return s, nil
}

// failWindow is how long dnssec_failing stays after a signing failure.
const failWindow = time.Minute

// watchSigner adds the readiness checks of zone's online signing, served
// from p: dnssec_failing while a signature could not be made within the
// last minute (a key that fails, or the budget spent: those queries were
// answered SERVFAIL), dnssec_expiring while the signature served on the
// apex SOA expires within half the refresh margin (or none is served).
func watchSigner(p *memory.Provider, s *dnssec.Signer, zone string, ready *readiness) {
	if s == nil {
		return
	}
	var mu sync.Mutex
	var seen uint64
	var last time.Time
	ready.add("dnssec_failing", func(now time.Time) (bool, string) {
		st := s.Stats()
		mu.Lock()
		defer mu.Unlock()
		if n := st.Failed + st.OverBudget; n > seen {
			seen, last = n, now
		}
		if last.IsZero() || now.Sub(last) > failWindow {
			return false, ""
		}
		return true, fmt.Sprintf("signatures could not be made (%d failed, %d over the budget of %d a second since start; the queries needing them were answered SERVFAIL)",
			st.Failed, st.OverBudget, s.Config().SignaturesPerSecond)
	})
	ready.add("dnssec_expiring", func(now time.Time) (bool, string) {
		if !p.Signed(zone) {
			return false, "" // a node without its copy yet: replica_not_synced says so
		}
		exp, err := servedExpiration(p, zone)
		if err != nil {
			return true, err.Error()
		}
		margin := s.Config().Refresh / 2
		if left := exp.Sub(now); left < margin {
			return true, fmt.Sprintf("the apex SOA's signature expires at %s, in %v (less than half the refresh margin, %v): signatures are not being renewed", exp.UTC().Format(time.RFC3339), left.Round(time.Second), margin)
		}
		return false, ""
	})
}

// servedExpiration asks p for zone's SOA with the DO bit set and returns
// the earliest expiration of the RRSIGs it answers.
func servedExpiration(p *memory.Provider, zone string) (time.Time, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(zone), dns.TypeSOA)
	m.SetEdns0(4096, true)
	r := p.Respond(m, netip.IPv6Loopback(), true)
	if r == nil || r.Rcode != dns.RcodeSuccess {
		rc := "no reply"
		if r != nil {
			rc = dns.RcodeToString[r.Rcode]
		}
		return time.Time{}, fmt.Errorf("the apex SOA asked with DO was answered %s", rc)
	}
	var exp time.Time
	for _, rr := range r.Answer {
		if sig, ok := rr.(*dns.RRSIG); ok {
			t := time.Unix(int64(sig.Expiration), 0)
			if exp.IsZero() || t.Before(exp) {
				exp = t
			}
		}
	}
	if exp.IsZero() {
		return time.Time{}, errors.New("the apex SOA is served without an RRSIG")
	}
	return exp, nil
}
