package memory

import (
	"encoding/json"
	"time"

	"github.com/gslbkit/gslb/internal/fielderr"
	"github.com/gslbkit/gslb/internal/jsontime"
	"github.com/gslbkit/gslb/provider/dnssec"
)

// ZoneConfig describes a new zone's SOA and apex NS records. Start from
// DefaultZoneConfig and change fields. NS, Mbox, Serial, Refresh, Retry and
// Expire left at zero take their defaults; a TTL or Minimum of zero means
// zero seconds (RFC 1035 and RFC 2308 give 0 a meaning: do not cache). In
// JSON the durations read and write strings such as "60s" (a number is read
// as seconds).
type ZoneConfig struct {
	// NS names the apex name servers; each is relative to the zone unless it
	// ends with a dot. The first one is the SOA's MNAME. Default ["ns1"].
	NS []string `json:"ns"`
	// Mbox is the SOA's RNAME, relative to the zone unless it ends with a
	// dot. Default "hostmaster".
	Mbox string `json:"mbox"`
	// Serial is the initial SOA serial, 1 to 4294967295. Default 1. A
	// program that serves the zone to secondaries (see Transfer) and
	// rebuilds it at every start must start past the last serial it served
	// (RFC 1982: see SerialGreater), or the secondaries, holding a serial
	// they take as newer, keep their old copy: persist the serial (read it
	// with Provider.SOA after each change, or Wait) and start at the next
	// one, or derive it from the clock.
	Serial uint32 `json:"serial"`
	// SerialPolicy is how every change moves the serial: SerialIncrement
	// (the default, "" too) adds one; SerialUnixTime makes it
	// max(old + 1, now in Unix seconds), in RFC 1982 arithmetic, as Knot
	// DNS's "serial-policy: unixtime" does. With SerialUnixTime a program
	// that rebuilds the zone at every start without keeping its serial
	// restarts at the clock (Serial: now in Unix seconds) and never
	// presents a lower serial than it served before, however many changes a
	// second it made, as long as the clock does not go back: every serial
	// it served was at most the clock when it served it.
	SerialPolicy SerialPolicy `json:"serialPolicy,omitempty"`
	// TTL is the TTL of the SOA and apex NS records, 0s to 68 years, in whole
	// seconds. DefaultZoneConfig has 60s.
	TTL time.Duration `json:"ttl"`
	// Refresh, Retry and Expire are the SOA timers, 0s to 68 years.
	// Defaults 60s, 60s, 600s.
	Refresh time.Duration `json:"refresh"`
	Retry   time.Duration `json:"retry"`
	Expire  time.Duration `json:"expire"`
	// Minimum is the negative-caching TTL (RFC 2308): NXDOMAIN and NODATA
	// answers carry the SOA with TTL min(TTL, Minimum). DefaultZoneConfig
	// has 30s.
	Minimum time.Duration `json:"minimum"`
	// Signer, when set, signs the zone online (see docs/dnssec.md): the
	// apex answers DNSKEY, CDS and CDNSKEY from its keys, every RRset
	// answered to a query with the DO bit carries its RRSIGs, and negative
	// answers use compact denial of existence (RFC 9824). It must be a
	// signer of this zone. Not part of the JSON form: keys are given to
	// each server out of band. Restore and Resume keep it for the zones
	// they replace.
	Signer *dnssec.Signer `json:"-"`
}

// SerialPolicy is how a zone's SOA serial moves on each change: see
// ZoneConfig.SerialPolicy.
type SerialPolicy string

// The serial policies.
const (
	// SerialIncrement adds one to the serial on every change (after
	// 4294967295 comes 1). The zero SerialPolicy means it.
	SerialIncrement SerialPolicy = "increment"
	// SerialUnixTime moves the serial to max(old + 1, now in Unix seconds)
	// on every change (RFC 1982 arithmetic; 0 is skipped).
	SerialUnixTime SerialPolicy = "unixtime"
)

// DefaultZoneConfig returns the configuration AddZone uses: one name server
// "ns1.<zone>", mailbox "hostmaster.<zone>", serial 1, TTL 60s, refresh 60s,
// retry 60s, expire 600s, negative TTL 30s (short, as GSLB answers change).
func DefaultZoneConfig() ZoneConfig {
	return ZoneConfig{
		NS:      []string{"ns1"},
		Mbox:    "hostmaster",
		Serial:  1,
		TTL:     60 * time.Second,
		Refresh: 60 * time.Second,
		Retry:   60 * time.Second,
		Expire:  600 * time.Second,
		Minimum: 30 * time.Second,
	}
}

func (c ZoneConfig) withDefaults() ZoneConfig {
	d := DefaultZoneConfig()
	if len(c.NS) == 0 {
		c.NS = d.NS
	}
	if c.Mbox == "" {
		c.Mbox = d.Mbox
	}
	if c.Serial == 0 {
		c.Serial = d.Serial
	}
	if c.Refresh == 0 {
		c.Refresh = d.Refresh
	}
	if c.Retry == 0 {
		c.Retry = d.Retry
	}
	if c.Expire == 0 {
		c.Expire = d.Expire
	}
	return c
}

// Validate reports the first field that is out of range as a *FieldError
// wrapping ErrInvalidZone. Zero fields that take a default are valid.
func (c ZoneConfig) Validate() error {
	c = c.withDefaults()
	for i, ns := range c.NS {
		if _, err := ownerName(".", qualify(ns, "example.")); err != nil {
			return fielderr.New(ErrInvalidZone, fielderr.Index("ns", i), ns, "a domain name, relative to the zone unless it ends with a dot")
		}
	}
	if _, err := ownerName(".", qualify(c.Mbox, "example.")); err != nil {
		return fielderr.New(ErrInvalidZone, "mbox", c.Mbox, "a domain name, relative to the zone unless it ends with a dot")
	}
	switch c.SerialPolicy {
	case "", SerialIncrement, SerialUnixTime:
	default:
		return fielderr.New(ErrInvalidZone, "serialPolicy", string(c.SerialPolicy), fielderr.OneOf(string(SerialIncrement), string(SerialUnixTime)))
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"ttl", c.TTL}, {"refresh", c.Refresh}, {"retry", c.Retry}, {"expire", c.Expire}, {"minimum", c.Minimum}} {
		if _, err := ttlSeconds(f.d); err != nil {
			return fielderr.New(ErrInvalidZone, f.name, f.d, fielderr.DurationRange(0, maxTTL*time.Second)+" in whole seconds")
		}
	}
	return nil
}

// MarshalJSON writes the durations as strings such as "60s".
func (c ZoneConfig) MarshalJSON() ([]byte, error) {
	type plain ZoneConfig
	return json.Marshal(struct {
		plain
		TTL     jsontime.Duration `json:"ttl"`
		Refresh jsontime.Duration `json:"refresh"`
		Retry   jsontime.Duration `json:"retry"`
		Expire  jsontime.Duration `json:"expire"`
		Minimum jsontime.Duration `json:"minimum"`
	}{plain(c), jsontime.Duration(c.TTL), jsontime.Duration(c.Refresh), jsontime.Duration(c.Retry), jsontime.Duration(c.Expire), jsontime.Duration(c.Minimum)})
}

// UnmarshalJSON reads the durations as strings such as "60s" or as numbers
// of seconds; fields absent from the JSON keep their values.
func (c *ZoneConfig) UnmarshalJSON(b []byte) error {
	type plain ZoneConfig
	aux := struct {
		*plain
		TTL     jsontime.Duration `json:"ttl"`
		Refresh jsontime.Duration `json:"refresh"`
		Retry   jsontime.Duration `json:"retry"`
		Expire  jsontime.Duration `json:"expire"`
		Minimum jsontime.Duration `json:"minimum"`
	}{(*plain)(c), jsontime.Duration(c.TTL), jsontime.Duration(c.Refresh), jsontime.Duration(c.Retry), jsontime.Duration(c.Expire), jsontime.Duration(c.Minimum)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	c.TTL, c.Refresh, c.Retry = time.Duration(aux.TTL), time.Duration(aux.Refresh), time.Duration(aux.Retry)
	c.Expire, c.Minimum = time.Duration(aux.Expire), time.Duration(aux.Minimum)
	return nil
}
