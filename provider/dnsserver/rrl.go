package dnsserver

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gslbkit/gslb/internal/fielderr"
)

// RRLConfig configures response rate limiting (RRL) for answers sent over
// UDP. The semantics follow Knot DNS 3.2's rrl module (and the RRL design
// BIND and NSD share): responses are counted per bucket — one response
// class, one client netblock, one name — and a bucket that runs out of
// tokens has its responses dropped, except every Slip-th one, which is sent
// empty with TC set so that a real client behind a spoofed netblock retries
// over TCP. Answers over TCP are never limited: a TCP client has proved its
// address.
//
// The zero value is off (Rate 0), as is DefaultRRLConfig(); other zero
// fields take their defaults.
type RRLConfig struct {
	// Rate is how many responses per second one bucket may send, 0 to
	// 1,000,000. 0 (the default) turns rate limiting off. A bucket holds up
	// to four seconds' worth (4 × Rate), so a quiet client may send a short
	// burst.
	Rate int `json:"rate"`
	// Slip sends every Slip-th limited response truncated (TC, no records)
	// instead of dropping it, 1 to 100. Default 1: every limited response
	// is truncated, Knot's default; 2 halves the reflected packets (BIND's
	// default). Dropping every limited response is not offered: a victim
	// whose netblock is spoofed would lose all service.
	Slip int `json:"slip"`
	// TableSize is the number of buckets, 1,024 to 16,777,216. Default
	// 393,241 (Knot's), rounded down to a multiple of 4. Each bucket takes
	// 24 bytes. A key may sit in any of 4 neighbouring buckets; when all 4
	// are in use, a new key takes the place of one not used in the last
	// second, or else of an active one, which then restarts slowly (1.5 ×
	// Rate tokens) as in Knot.
	TableSize int `json:"tableSize"`
	// IPv4Prefix and IPv6Prefix are the netblock lengths clients are
	// grouped by: IPv4 8 to 32, default 24; IPv6 32 to 128, default 56.
	IPv4Prefix int `json:"ipv4Prefix"`
	IPv6Prefix int `json:"ipv6Prefix"`
	// Exempt lists client prefixes that are never limited (monitoring,
	// resolvers of one's own). Knot calls it whitelist.
	Exempt []netip.Prefix `json:"exempt,omitempty"`
}

// DefaultRRLConfig returns RRL switched off, with Knot's defaults for the
// other fields; set Rate to turn it on.
func DefaultRRLConfig() RRLConfig {
	return RRLConfig{Slip: 1, TableSize: 393241, IPv4Prefix: 24, IPv6Prefix: 56}
}

func (c RRLConfig) withDefaults() RRLConfig {
	d := DefaultRRLConfig()
	if c.Slip == 0 {
		c.Slip = d.Slip
	}
	if c.TableSize == 0 {
		c.TableSize = d.TableSize
	}
	if c.IPv4Prefix == 0 {
		c.IPv4Prefix = d.IPv4Prefix
	}
	if c.IPv6Prefix == 0 {
		c.IPv6Prefix = d.IPv6Prefix
	}
	return c
}

// Validate reports the first field outside its range. Zero fields are
// valid: they take their defaults.
func (c RRLConfig) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Rate < 0 || c.Rate > 1_000_000:
		return rrlInvalid("rate", c.Rate, fielderr.Range(0, 1_000_000)+" responses per second (0: off)")
	case c.Slip < 1 || c.Slip > 100:
		return rrlInvalid("slip", c.Slip, fielderr.Range(1, 100))
	case c.TableSize < 1024 || c.TableSize > 1<<24:
		return rrlInvalid("tableSize", c.TableSize, fielderr.Range(1024, 1<<24))
	case c.IPv4Prefix < 8 || c.IPv4Prefix > 32:
		return rrlInvalid("ipv4Prefix", c.IPv4Prefix, fielderr.Range(8, 32))
	case c.IPv6Prefix < 32 || c.IPv6Prefix > 128:
		return rrlInvalid("ipv6Prefix", c.IPv6Prefix, fielderr.Range(32, 128))
	}
	for i, p := range c.Exempt {
		if !p.IsValid() {
			return rrlInvalid(fielderr.Index("exempt", i), p, "a valid prefix such as 192.0.2.0/24")
		}
	}
	return nil
}

// RRLClass is the kind of a response, as RRL counts them: each class of
// one name and netblock has a bucket of its own, so that a flood of one kind
// does not starve another.
type RRLClass uint8

// Response classes, Knot's names in the comments.
const (
	RRLPositive RRLClass = iota + 1 // POSITIVE: an answer with records
	RRLError                        // ERROR: any rcode but NOERROR and NXDOMAIN
	RRLNXDomain                     // NXDOMAIN
	RRLEmpty                        // EMPTY: NOERROR with no answer (NODATA, referrals)
	RRLLarge                        // LARGE: a response of 1,024 bytes or more
	RRLWildcard                     // WILDCARD: synthesised from a wildcard
	RRLAny                          // ANY: a reply to QTYPE ANY
	RRLDNSSEC                       // DNSSEC: a reply to DNSKEY, RRSIG or DS
)

var rrlClassNames = [...]string{"null", "positive", "error", "nxdomain", "empty", "large", "wildcard", "any", "dnssec"}

// String returns the class in lower case ("positive", "nxdomain", ...).
func (c RRLClass) String() string {
	if int(c) < len(rrlClassNames) {
		return rrlClassNames[c]
	}
	return fmt.Sprintf("RRLClass(%d)", uint8(c))
}

// Query types RRL treats as classes of their own.
const (
	qtypeDS     = 43
	qtypeRRSIG  = 46
	qtypeDNSKEY = 48
	qtypeANY    = 255
)

// ClassifyResponse returns the RRL class of a response, in Knot's order:
// the rcode first (NXDOMAIN, other errors), then a wildcard answer, the
// query type (ANY, DNSSEC types), the size (1,024 bytes or more), and an
// empty answer section.
func ClassifyResponse(rcode int, qtype uint16, answers int, size int, wildcard bool) RRLClass {
	switch rcode {
	case 0:
	case 3:
		return RRLNXDomain
	default:
		return RRLError
	}
	if wildcard {
		return RRLWildcard
	}
	switch qtype {
	case qtypeANY:
		return RRLAny
	case qtypeDNSKEY, qtypeRRSIG, qtypeDS:
		return RRLDNSSEC
	}
	if size >= 1024 {
		return RRLLarge
	}
	if answers == 0 {
		return RRLEmpty
	}
	return RRLPositive
}

// RRLAction is what to do with one response.
type RRLAction uint8

const (
	// RRLSend sends the response as it is.
	RRLSend RRLAction = iota
	// RRLDrop sends nothing.
	RRLDrop
	// RRLSlip sends the response truncated: header and question only, TC
	// set, so that the client retries over TCP.
	RRLSlip
)

// String returns "send", "drop" or "slip".
func (a RRLAction) String() string {
	switch a {
	case RRLSend:
		return "send"
	case RRLDrop:
		return "drop"
	case RRLSlip:
		return "slip"
	}
	return fmt.Sprintf("RRLAction(%d)", uint8(a))
}

// RRLStats counts a RateLimiter's decisions since it was made.
type RRLStats struct {
	Sent, Dropped, Slipped uint64
}

// RateLimiter decides, response by response, whether an answer over UDP is
// sent, dropped or slipped. It is a pure limiter: it reads no clock (the
// caller passes now, whose whole seconds are what count, as in Knot),
// starts nothing and allocates nothing per call. It is safe for concurrent
// use; buckets are guarded by 64 striped locks. Make one with
// NewRateLimiter: a nil or zero RateLimiter limits nothing (Check sends).
type RateLimiter struct {
	rate, capacity uint32
	slip           uint32
	v4mask         uint32
	v6bits         int
	exempt         []netip.Prefix
	seed           maphash.Seed
	buckets        []rrlBucket
	locks          [64]sync.Mutex
	sent, dropped  atomic.Uint64
	slipped        atomic.Uint64
}

// rrlCapacity is how many seconds of tokens a bucket holds (Knot's
// RRL_CAPACITY).
const rrlCapacity = 4

// rrlWays is how many neighbouring buckets a key may occupy.
const rrlWays = 4

type rrlBucket struct {
	key   uint64 // hash of class, netblock and name; 0 when free
	ntok  uint32
	time  uint32 // whole seconds of the last visit
	flags uint8
	slips uint8 // limited responses since the last slip
}

const (
	rrlSlowStart uint8 = 1 << iota // taken over from another key; refill forgiven once
	rrlLimited                     // out of tokens
)

// NewRateLimiter returns a limiter for cfg, or the validation error. A
// config with Rate 0 yields a nil limiter and no error: the caller treats
// nil as "off" (every method of a nil *RateLimiter sends).
func NewRateLimiter(cfg RRLConfig) (*RateLimiter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if cfg.Rate == 0 {
		return nil, nil
	}
	l := &RateLimiter{
		rate:     uint32(cfg.Rate),
		capacity: uint32(cfg.Rate) * rrlCapacity,
		slip:     uint32(cfg.Slip),
		v4mask:   ^uint32(0) << (32 - cfg.IPv4Prefix),
		v6bits:   cfg.IPv6Prefix,
		exempt:   append([]netip.Prefix(nil), cfg.Exempt...),
		seed:     maphash.MakeSeed(),
		buckets:  make([]rrlBucket, cfg.TableSize/rrlWays*rrlWays),
	}
	return l, nil
}

// Stats returns the counts of decisions so far. A nil limiter returns zeros.
func (l *RateLimiter) Stats() RRLStats {
	if l == nil {
		return RRLStats{}
	}
	return RRLStats{Sent: l.sent.Load(), Dropped: l.dropped.Load(), Slipped: l.slipped.Load()}
}

// Check counts one response to src at now and says what to do with it.
// name is the owner the bucket is kept for, in wire or presentation form
// (compared without regard to ASCII case): the query name for positive,
// empty, large, ANY and DNSSEC responses; the zone's name for NXDOMAIN,
// errors and wildcard answers, so that random names below one zone share a
// bucket (Knot's rule). A nil limiter sends everything.
func (l *RateLimiter) Check(now time.Time, src netip.Addr, class RRLClass, name []byte) RRLAction {
	if l == nil || len(l.buckets) == 0 {
		return RRLSend
	}
	src = src.Unmap()
	for _, p := range l.exempt {
		if p.Contains(src) {
			l.sent.Add(1)
			return RRLSend
		}
	}
	key := l.hash(src, class, name)
	stamp := uint32(now.Unix())

	group := int(key % uint64(len(l.buckets)/rrlWays))
	idx := group * rrlWays
	mu := &l.locks[group%len(l.locks)]
	mu.Lock()
	b := l.find(idx, key, stamp)
	act := l.visit(b, key, stamp)
	mu.Unlock()

	switch act {
	case RRLSend:
		l.sent.Add(1)
	case RRLDrop:
		l.dropped.Add(1)
	default:
		l.slipped.Add(1)
	}
	return act
}

// find returns the bucket for key in the group of rrlWays buckets that
// starts at idx: its own, else a free or stale one (unused for over a
// second), else the group's first, which visit takes over. The group's
// lock is held; a key always maps to the same group, so every bucket is
// guarded by exactly one lock.
func (l *RateLimiter) find(idx int, key uint64, stamp uint32) *rrlBucket {
	var free *rrlBucket
	for w := 0; w < rrlWays; w++ {
		b := &l.buckets[idx+w]
		if b.key == key {
			return b
		}
		if free == nil && (b.key == 0 || b.time+1 < stamp) {
			free = b
		}
	}
	if free != nil {
		*free = rrlBucket{}
		return free
	}
	return &l.buckets[idx]
}

// visit applies Knot's token arithmetic to b for key at stamp.
func (l *RateLimiter) visit(b *rrlBucket, key uint64, stamp uint32) RRLAction {
	switch {
	case b.key == 0:
		*b = rrlBucket{key: key, ntok: l.capacity, time: stamp}
	case b.key != key:
		// A live bucket of another key: take it over in slow start,
		// unless it is itself in slow start (then share it for now).
		if b.flags&rrlSlowStart == 0 {
			*b = rrlBucket{key: key, ntok: l.rate + l.rate/2, time: stamp, flags: rrlSlowStart}
		}
	}

	dt := stamp - b.time
	if stamp < b.time { // the caller's clock went back: count as no time
		dt = 0
	}
	if dt > rrlCapacity {
		dt = rrlCapacity
	}
	b.time = stamp
	if dt > 0 {
		if b.ntok > 0 || dt > 1 {
			b.flags &^= rrlLimited
		}
		b.flags &^= rrlSlowStart
		b.ntok += l.rate * dt
		if b.ntok > l.capacity {
			b.ntok = l.capacity
		}
	}
	if b.ntok > 0 {
		b.ntok--
		return RRLSend
	}
	b.flags |= rrlLimited
	b.slips++
	if uint32(b.slips) >= l.slip {
		b.slips = 0
		return RRLSlip
	}
	return RRLDrop
}

// hash mixes the class, the client's netblock and the name (ASCII case
// folded) into a non-zero key.
func (l *RateLimiter) hash(src netip.Addr, class RRLClass, name []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(l.seed)
	var blk [17]byte
	blk[0] = byte(class)
	if src.Is4() {
		a := src.As4()
		binary.BigEndian.PutUint32(blk[1:], binary.BigEndian.Uint32(a[:])&l.v4mask)
	} else {
		a := src.As16()
		full, rest := l.v6bits/8, l.v6bits%8
		copy(blk[1:1+full], a[:full])
		if rest > 0 {
			blk[1+full] = a[full] & (0xff << (8 - rest))
		}
		blk[0] |= 0x80 // keep the families apart
	}
	h.Write(blk[:])
	var buf [64]byte
	for len(name) > 0 {
		n := copy(buf[:], name)
		for i := 0; i < n; i++ {
			if c := buf[i]; 'A' <= c && c <= 'Z' {
				buf[i] = c + 'a' - 'A'
			}
		}
		h.Write(buf[:n])
		name = name[n:]
	}
	k := h.Sum64()
	if k == 0 {
		k = 1
	}
	return k
}

func rrlInvalid(field string, value any, allowed string) error {
	return fielderr.New(ErrInvalidConfig, field, value, allowed)
}
